// roofplan/layers/conv_transpose.hpp — 2-D transposed convolution (PyTorch nn.ConvTranspose2d, ONNX ConvTranspose).
#pragma once

#include <roofplan/layers/detail_conv.hpp>

namespace roofplan::layers {

/// 2-D transposed convolution of a ci×H×W input into co channels; the weight is ci×(co/groups)×kh×kw
/// (PyTorch's and ONNX's layout).  Each input pixel scatters one kernel into the output:
/// Ho = (H − 1)·stride − 2·pad + dilation·(kh − 1) + output_padding + 1 (likewise Wo).
/// params = ci·(co/groups)·kh·kw (+ co with bias); MACs per instance = H·W·ci·(co/groups)·kh·kw;
/// paper ops = those MACs + Ho·Wo·co bias adds.
/// Its forward pass is the backward-data pass of the matching Conv2D and vice versa; the implicit-GEMM shapes
/// are that Conv2D's with the passes swapped.
/// Example: `ConvTranspose2D{{.in_channels = 16, .out_channels = 8, .in_height = 8, .in_width = 8, .kernel = 4,
///          .stride = 2, .padding = 1}}` has 16·8·16 + 8 = 2,056 parameters and an 8×16×16 output.
class ConvTranspose2D : public detail::ConvCommon {
public:
    using Config = Conv2DConfig;
    static constexpr std::string_view type_name = "conv_transpose2d";

    constexpr explicit ConvTranspose2D(const Config& config) : ConvCommon(config, type_name) {
        using roofplan::detail::fail;
        if ((c_.output_padding.h >= c_.stride.h && c_.output_padding.h >= c_.dilation.h) ||
            (c_.output_padding.w >= c_.stride.w && c_.output_padding.w >= c_.dilation.w))
            fail("conv_transpose2d: output_padding ", c_.output_padding.h, "x", c_.output_padding.w,
                 " must be smaller than the stride (", c_.stride.h, "x", c_.stride.w, ") or the dilation (",
                 c_.dilation.h, "x", c_.dilation.w, ")");
        const std::int64_t out_h = extent(c_.in_height, &Extent2::h);
        const std::int64_t out_w = extent(c_.in_width, &Extent2::w);
        if (out_h < 1 || out_w < 1)
            fail("conv_transpose2d: the output would be ", out_h, "x", out_w, " (input ", c_.in_height, "x",
                 c_.in_width, ", kernel ", c_.kernel.h, "x", c_.kernel.w, ", stride ", c_.stride.h, "x", c_.stride.w,
                 ", padding ", c_.padding.h, "x", c_.padding.w, "); the padding is too large");
        set_output(out_h, out_w, true);
    }

    /// Conv2D's fields and the output padding.
    static constexpr auto describe() {
        return Description<Config, 11>{
            .types = {type_name},
            .input = {3, "CxHxW"},
            .fields = join(detail::conv_fields(),
                           std::array{field("op", "output_padding", &Config::output_padding,
                                            "extra output rows and columns, default 0")
                                          .at_least(0)})};
    }

private:
    /// (in − 1)·stride − 2·pad + dilation·(k − 1) + output_padding + 1 along one axis.
    [[nodiscard]] constexpr std::int64_t extent(std::int64_t in, std::int64_t Extent2::*axis) const {
        return detail::mul(in - 1, c_.stride.*axis, "conv_transpose2d output") - 2 * (c_.padding.*axis) +
               detail::mul(c_.dilation.*axis, c_.kernel.*axis - 1, "conv_transpose2d kernel extent") +
               c_.output_padding.*axis + 1;
    }
};

template <>
struct Explain<ConvTranspose2D> {
    static void steps(Derivation& d, const ConvTranspose2D& layer) {
        const ConvTranspose2D::Config& c = layer.config();
        const auto [ksym, knum, kvol] = detail::conv_shape_steps(d, layer, true);
        const std::int64_t ci = c.in_channels, co = c.out_channels;
        d.section("parameters");
        d.checked("params", "params", "cin·" + ksym + (c.bias ? " + cout" : ""),
                  num(ci) + "·" + knum + (c.bias ? " + " + num(co) : ""), ci * kvol + (c.bias ? co : 0),
                  layer.params(), "",
                  c.bias ? "one kernel per input channel plus one bias per output channel" : "no bias");
        d.section("operations per instance");
        const std::int64_t macs = c.in_height * c.in_width * ci * kvol;
        d.checked("macs_per_instance", "MACs", "H·W·cin·" + ksym,
                  num(c.in_height) + "·" + num(c.in_width) + "·" + num(ci) + "·" + knum, macs,
                  layer.forward(1).macs.value(), "", "each input pixel scatters one kernel: a multiply-add per weight");
        const std::int64_t bias_adds = c.bias ? co * layer.out_height() * layer.out_width() : 0;
        detail::conv_bias_and_paper_ops(d, layer, c.bias ? "MACs + bias adds" : "MACs",
                                        num(macs) + (c.bias ? " + " + num(bias_adds) : ""), macs + bias_adds);
    }
    static std::optional<PassMacs> pass_macs(const ConvTranspose2D& layer, Pass pass, std::int64_t instances) {
        return backward_macs_again(layer, pass, instances,
                                   "dX is an ordinary convolution of dY: the forward MACs again",
                                   "dW sums X·dY over the batch and the input pixels: the forward MACs again");
    }
};

}  // namespace roofplan::layers

namespace roofplan {
using layers::ConvTranspose2D;
}  // namespace roofplan

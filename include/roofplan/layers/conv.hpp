// roofplan/layers/conv.hpp — 2-D convolution.
#pragma once

#include <roofplan/layers/detail_conv.hpp>

namespace roofplan::layers {

/// 2-D convolution over a ci×H×W input with co kernels of (ci/groups)×kh×kw.
/// Ho = ⌊(H + 2·pad − dilation·(kh−1) − 1) / stride⌋ + 1 (likewise Wo).
/// params = co·(ci/groups·kh·kw + 1) with bias; one kernel application at one output pixel costs
/// C = co·(ci/groups·kh·kw + 1) paper operations, so ops = Ho·Wo·C per instance and Γ = B·Ho·Wo.
/// Its passes are implicit GEMMs, one per group: forward M = B·Ho·Wo, N = co/groups, K = ci/groups·kh·kw;
/// dX is a transposed convolution with the same MACs; dW sums over the batch and the output pixels.
/// Example: ResNet's stem `Conv2D{{.in_channels = 3, .out_channels = 64, .in_height = 224, .in_width = 224,
///          .kernel = 7, .stride = 2, .padding = 3, .bias = false}}` has 9,408 parameters and a 64×112×112 output.
class Conv2D : public detail::ConvCommon {
public:
    using Config = Conv2DConfig;
    static constexpr std::string_view type_name = "conv2d";

    constexpr explicit Conv2D(const Config& config) : ConvCommon(config, type_name) {
        if (c_.output_padding != Extent2{0})
            roofplan::detail::fail("conv2d: output_padding (", c_.output_padding.h, "x", c_.output_padding.w,
                                   ") belongs to transposed convolutions; it must be 0");
        const std::int64_t reach_h = detail::mul(c_.dilation.h, c_.kernel.h - 1, "conv2d kernel extent") + 1;
        const std::int64_t reach_w = detail::mul(c_.dilation.w, c_.kernel.w - 1, "conv2d kernel extent") + 1;
        const std::int64_t padded_h = c_.in_height + 2 * c_.padding.h;
        const std::int64_t padded_w = c_.in_width + 2 * c_.padding.w;
        if (reach_h > padded_h || reach_w > padded_w)
            roofplan::detail::fail("conv2d: kernel ", c_.kernel.h, "x", c_.kernel.w, " (dilation ", c_.dilation.h, "x",
                                   c_.dilation.w, ", reach ", reach_h, "x", reach_w,
                                   ") is larger than the padded input ", padded_h, "x", padded_w, " (input ",
                                   c_.in_height, "x", c_.in_width, ", padding ", c_.padding.h, "x", c_.padding.w, ")");
        set_output((padded_h - reach_h) / c_.stride.h + 1, (padded_w - reach_w) / c_.stride.w + 1, false);
    }

    static constexpr auto describe() {
        return Description<Config, 10>{
            .types = {type_name}, .input = {3, "CxHxW"}, .fields = detail::conv_fields()};
    }
};

template <>
struct Explain<Conv2D> {
    static void steps(Derivation& d, const Conv2D& layer) {
        const Conv2D::Config& c = layer.config();
        const auto [ksym, knum, kvol] = detail::conv_shape_steps(d, layer, false);
        const std::int64_t ho = layer.out_height(), wo = layer.out_width(), co = c.out_channels;
        d.section("parameters");
        if (c.bias)
            d.checked("params", "params", "cout·(" + ksym + " + 1)", num(co) + "·(" + knum + " + 1)", co * (kvol + 1),
                      layer.params(), "", "weights plus one bias per output channel");
        else
            d.checked("params", "params", "cout·" + ksym, num(co) + "·" + knum, co * kvol, layer.params(), "",
                      "no bias");
        d.section("operations per instance");
        const std::string pixels = num(ho) + "·" + num(wo) + "·" + num(co) + "·";
        d.checked("macs_per_instance", "MACs", "Ho·Wo·cout·" + ksym, pixels + knum, ho * wo * co * kvol,
                  layer.forward(1).macs.value(), "", "one multiply-add per weight per output pixel");
        detail::conv_bias_and_paper_ops(d, layer, "Ho·Wo·cout·(" + ksym + (c.bias ? " + 1)" : ")"),
                                        pixels + "(" + knum + (c.bias ? " + 1)" : ")"),
                                        ho * wo * co * (kvol + (c.bias ? 1 : 0)));
    }
    static ClosedForm gamma(const Conv2D& layer, std::int64_t batch) {
        return {" = B·Ho·Wo", " = " + num(batch) + "·" + num(layer.out_height()) + "·" + num(layer.out_width())};
    }
    static std::optional<PassMacs> pass_macs(const Conv2D& layer, Pass pass, std::int64_t instances) {
        return backward_macs_again(layer, pass, instances, "dX is a transposed convolution: the forward MACs again",
                                   "dW sums X·dY over the batch and the output pixels: the forward MACs again");
    }
};

}  // namespace roofplan::layers

namespace roofplan {
using layers::Conv2D;
}  // namespace roofplan

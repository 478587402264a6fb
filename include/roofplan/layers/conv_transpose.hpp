// roofplan/layers/conv_transpose.hpp — 2-D transposed convolution (PyTorch nn.ConvTranspose2d, ONNX ConvTranspose).
#pragma once

#include <roofplan/layers/detail_cost.hpp>
#include <roofplan/shape.hpp>

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
class ConvTranspose2D {
public:
    struct Config {
        std::int64_t in_channels = 0;
        std::int64_t out_channels = 0;
        std::int64_t in_height = 0;
        std::int64_t in_width = 0;
        Extent2 kernel = 1;
        Extent2 stride = 1;
        Extent2 padding = 0;
        Extent2 output_padding = 0;
        Extent2 dilation = 1;
        std::int64_t groups = 1;
        bool bias = true;
    };
    static constexpr std::string_view type_name = "conv_transpose2d";

    constexpr explicit ConvTranspose2D(const Config& config) : c_(config) {
        using roofplan::detail::fail;
        using roofplan::detail::require_non_negative;
        using roofplan::detail::require_positive;
        constexpr const char* who = "conv_transpose2d";
        require_positive(c_.in_channels, who, "in_channels");
        require_positive(c_.out_channels, who, "out_channels");
        require_positive(c_.in_height, who, "in_height");
        require_positive(c_.in_width, who, "in_width");
        require_positive(c_.kernel.h, who, "kernel height");
        require_positive(c_.kernel.w, who, "kernel width");
        require_positive(c_.stride.h, who, "stride height");
        require_positive(c_.stride.w, who, "stride width");
        require_positive(c_.dilation.h, who, "dilation height");
        require_positive(c_.dilation.w, who, "dilation width");
        require_non_negative(c_.padding.h, who, "padding height");
        require_non_negative(c_.padding.w, who, "padding width");
        require_non_negative(c_.output_padding.h, who, "output_padding height");
        require_non_negative(c_.output_padding.w, who, "output_padding width");
        require_positive(c_.groups, who, "groups");
        if (c_.in_channels % c_.groups != 0 || c_.out_channels % c_.groups != 0)
            fail("conv_transpose2d: in_channels (", c_.in_channels, ") and out_channels (", c_.out_channels,
                 ") must both be divisible by groups (", c_.groups, ")");
        if ((c_.output_padding.h >= c_.stride.h && c_.output_padding.h >= c_.dilation.h) ||
            (c_.output_padding.w >= c_.stride.w && c_.output_padding.w >= c_.dilation.w))
            fail("conv_transpose2d: output_padding ", c_.output_padding.h, "x", c_.output_padding.w,
                 " must be smaller than the stride (", c_.stride.h, "x", c_.stride.w, ") or the dilation (",
                 c_.dilation.h, "x", c_.dilation.w, ")");
        out_h_ = extent(c_.in_height, c_.stride.h, c_.padding.h, c_.dilation.h, c_.kernel.h, c_.output_padding.h);
        out_w_ = extent(c_.in_width, c_.stride.w, c_.padding.w, c_.dilation.w, c_.kernel.w, c_.output_padding.w);
        if (out_h_ < 1 || out_w_ < 1)
            fail("conv_transpose2d: the output would be ", out_h_, "x", out_w_, " (input ", c_.in_height, "x",
                 c_.in_width, ", kernel ", c_.kernel.h, "x", c_.kernel.w, ", stride ", c_.stride.h, "x", c_.stride.w,
                 ", padding ", c_.padding.h, "x", c_.padding.w, "); the padding is too large");
        kernel_volume_ = detail::mul(c_.out_channels / c_.groups, c_.kernel.h, c_.kernel.w);
        weights_ = detail::mul(c_.in_channels, kernel_volume_, "conv_transpose2d weights");
        in_pixels_ = detail::mul(c_.in_height, c_.in_width, "conv_transpose2d input");
        out_pixels_ = detail::mul(out_h_, out_w_, "conv_transpose2d output");
        macs_per_instance_ = detail::mul(in_pixels_, weights_, "conv_transpose2d MACs");
        in_elements_ = detail::mul(in_pixels_, c_.in_channels);
        out_elements_ = detail::mul(out_pixels_, c_.out_channels);
    }

    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::int64_t out_height() const { return out_h_; }
    [[nodiscard]] constexpr std::int64_t out_width() const { return out_w_; }
    [[nodiscard]] constexpr std::int64_t params() const { return weights_ + (c_.bias ? c_.out_channels : 0); }
    [[nodiscard]] constexpr Shape input_shape() const { return Shape{c_.in_channels, c_.in_height, c_.in_width}; }
    [[nodiscard]] constexpr Shape output_shape() const { return Shape{c_.out_channels, out_h_, out_w_}; }
    [[nodiscard]] constexpr std::int64_t paper_ops() const {
        return macs_per_instance_ + (c_.bias ? out_elements_ : 0);
    }

    /// The backward-data pass of the matching Conv2D: M = B·Ho·Wo, N = co/groups, K = ci/groups·kh·kw.
    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.macs = units::macs(detail::mul(batch, macs_per_instance_, "conv_transpose2d MACs"));
        const std::int64_t outputs = detail::mul(batch, out_elements_);
        p.vector_flops = units::flops(c_.bias ? outputs : 0);
        p.weight_elements_read = params();
        p.activation_elements_read = detail::mul(batch, in_elements_);
        p.activation_elements_written = outputs;
        p.gemm = {detail::mul(batch, out_pixels_), c_.out_channels / c_.groups,
                  detail::mul(c_.in_channels / c_.groups, c_.kernel.h, c_.kernel.w), c_.groups};
        return p;
    }
    /// dX: an ordinary convolution of dY; M = B·H·W, N = ci/groups, K = co/groups·kh·kw.
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.macs = units::macs(detail::mul(batch, macs_per_instance_, "conv_transpose2d MACs"));
        p.weight_elements_read = weights_;
        p.activation_elements_read = detail::mul(batch, out_elements_);
        p.activation_elements_written = detail::mul(batch, in_elements_);
        p.gemm = {detail::mul(batch, in_pixels_), c_.in_channels / c_.groups, kernel_volume_, c_.groups};
        return p;
    }
    /// dW = Σ over the batch and input pixels (same MACs as forward), db = Σ dY.
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.macs = units::macs(detail::mul(batch, macs_per_instance_, "conv_transpose2d MACs"));
        const std::int64_t outputs = detail::mul(batch, out_elements_);
        p.vector_flops = units::flops(c_.bias ? outputs : 0);
        p.activation_elements_read = detail::mul(batch, in_elements_) + outputs;
        p.gradient_elements_written = params();
        p.gemm = {c_.in_channels / c_.groups, kernel_volume_, detail::mul(batch, in_pixels_), c_.groups};
        return p;
    }

private:
    static constexpr std::int64_t extent(std::int64_t in, std::int64_t stride, std::int64_t pad,
                                         std::int64_t dilation, std::int64_t kernel, std::int64_t output_padding) {
        return detail::mul(in - 1, stride, "conv_transpose2d output") - 2 * pad +
               detail::mul(dilation, kernel - 1, "conv_transpose2d kernel extent") + output_padding + 1;
    }

    Config c_;
    std::int64_t out_h_ = 0;
    std::int64_t out_w_ = 0;
    std::int64_t kernel_volume_ = 0;
    std::int64_t weights_ = 0;
    std::int64_t in_pixels_ = 0;
    std::int64_t out_pixels_ = 0;
    std::int64_t macs_per_instance_ = 0;
    std::int64_t in_elements_ = 0;
    std::int64_t out_elements_ = 0;
};

}  // namespace roofplan::layers

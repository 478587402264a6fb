// roofplan/layers/conv.hpp — 2-D convolution.
#pragma once

#include <roofplan/layers/detail_cost.hpp>
#include <roofplan/shape.hpp>

namespace roofplan::layers {

/// 2-D convolution over a ci×H×W input with co kernels of (ci/groups)×kh×kw.
/// Ho = ⌊(H + 2·pad − dilation·(kh−1) − 1) / stride⌋ + 1 (likewise Wo).
/// params = co·(ci/groups·kh·kw + 1) with bias; one kernel application at one output pixel costs
/// C = co·(ci/groups·kh·kw + 1) paper operations, so ops = Ho·Wo·C per instance and Γ = B·Ho·Wo.
/// Example: ResNet's stem `Conv2D{{.in_channels = 3, .out_channels = 64, .in_height = 224, .in_width = 224,
///          .kernel = 7, .stride = 2, .padding = 3, .bias = false}}` has 9,408 parameters and a 64×112×112 output.
class Conv2D {
public:
    struct Config {
        std::int64_t in_channels = 0;
        std::int64_t out_channels = 0;
        std::int64_t in_height = 0;
        std::int64_t in_width = 0;
        Extent2 kernel = 1;
        Extent2 stride = 1;
        Extent2 padding = 0;
        Extent2 dilation = 1;
        std::int64_t groups = 1;
        bool bias = true;
    };
    static constexpr std::string_view type_name = "conv2d";

    constexpr explicit Conv2D(const Config& config) : c_(config) {
        using roofplan::detail::fail;
        using roofplan::detail::require_positive;
        require_positive(c_.in_channels, "conv2d", "in_channels");
        require_positive(c_.out_channels, "conv2d", "out_channels");
        require_positive(c_.in_height, "conv2d", "in_height");
        require_positive(c_.in_width, "conv2d", "in_width");
        require_positive(c_.kernel.h, "conv2d", "kernel height");
        require_positive(c_.kernel.w, "conv2d", "kernel width");
        require_positive(c_.stride.h, "conv2d", "stride height");
        require_positive(c_.stride.w, "conv2d", "stride width");
        require_positive(c_.dilation.h, "conv2d", "dilation height");
        require_positive(c_.dilation.w, "conv2d", "dilation width");
        roofplan::detail::require_non_negative(c_.padding.h, "conv2d", "padding height");
        roofplan::detail::require_non_negative(c_.padding.w, "conv2d", "padding width");
        require_positive(c_.groups, "conv2d", "groups");
        if (c_.in_channels % c_.groups != 0 || c_.out_channels % c_.groups != 0)
            fail("conv2d: in_channels (", c_.in_channels, ") and out_channels (", c_.out_channels,
                 ") must both be divisible by groups (", c_.groups, ")");
        const std::int64_t reach_h = detail::mul(c_.dilation.h, c_.kernel.h - 1, "conv2d kernel extent") + 1;
        const std::int64_t reach_w = detail::mul(c_.dilation.w, c_.kernel.w - 1, "conv2d kernel extent") + 1;
        const std::int64_t padded_h = c_.in_height + 2 * c_.padding.h;
        const std::int64_t padded_w = c_.in_width + 2 * c_.padding.w;
        if (reach_h > padded_h || reach_w > padded_w)
            fail("conv2d: kernel ", c_.kernel.h, "x", c_.kernel.w, " (dilation ", c_.dilation.h, "x", c_.dilation.w,
                 ", reach ", reach_h, "x", reach_w, ") is larger than the padded input ", padded_h, "x", padded_w,
                 " (input ", c_.in_height, "x", c_.in_width, ", padding ", c_.padding.h, "x", c_.padding.w, ")");
        out_h_ = (padded_h - reach_h) / c_.stride.h + 1;
        out_w_ = (padded_w - reach_w) / c_.stride.w + 1;
        kernel_volume_ = detail::mul(c_.in_channels / c_.groups, c_.kernel.h, c_.kernel.w);
        weights_ = detail::mul(c_.out_channels, kernel_volume_, "conv2d weights");
        out_pixels_ = detail::mul(out_h_, out_w_, "conv2d output");
        macs_per_instance_ = detail::mul(out_pixels_, weights_, "conv2d MACs");
        in_elements_ = detail::mul(c_.in_channels, c_.in_height, c_.in_width);
        out_elements_ = detail::mul(out_pixels_, c_.out_channels);
    }

    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::int64_t out_height() const { return out_h_; }
    [[nodiscard]] constexpr std::int64_t out_width() const { return out_w_; }
    [[nodiscard]] constexpr std::int64_t params() const { return weights_ + (c_.bias ? c_.out_channels : 0); }
    [[nodiscard]] constexpr Shape input_shape() const { return Shape{c_.in_channels, c_.in_height, c_.in_width}; }
    [[nodiscard]] constexpr Shape output_shape() const { return Shape{c_.out_channels, out_h_, out_w_}; }
    [[nodiscard]] constexpr std::int64_t paper_ops() const {
        return detail::mul(out_pixels_, c_.out_channels, kernel_volume_ + (c_.bias ? 1 : 0));
    }

    /// Implicit GEMM: M = B·Ho·Wo, N = co/groups, K = ci/groups·kh·kw, one GEMM per group.
    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.macs = units::macs(detail::mul(batch, macs_per_instance_, "conv2d MACs"));
        const std::int64_t outputs = detail::mul(batch, out_elements_);
        p.vector_flops = units::flops(c_.bias ? outputs : 0);
        p.weight_elements_read = params();
        p.activation_elements_read = detail::mul(batch, in_elements_);
        p.activation_elements_written = outputs;
        p.gemm = {detail::mul(batch, out_pixels_), c_.out_channels / c_.groups, kernel_volume_, c_.groups};
        return p;
    }
    /// dX: a transposed convolution with the same MACs; M = B·H·W, N = ci/groups, K = co/groups·kh·kw.
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.macs = units::macs(detail::mul(batch, macs_per_instance_, "conv2d MACs"));
        p.weight_elements_read = weights_;
        p.activation_elements_read = detail::mul(batch, out_elements_);
        p.activation_elements_written = detail::mul(batch, in_elements_);
        p.gemm = {detail::mul(batch, c_.in_height, c_.in_width), c_.in_channels / c_.groups,
                  detail::mul(c_.out_channels / c_.groups, c_.kernel.h, c_.kernel.w), c_.groups};
        return p;
    }
    /// dW = Σ over the batch and output pixels (same MACs as forward), db = Σ dY.
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.macs = units::macs(detail::mul(batch, macs_per_instance_, "conv2d MACs"));
        const std::int64_t outputs = detail::mul(batch, out_elements_);
        p.vector_flops = units::flops(c_.bias ? outputs : 0);
        p.activation_elements_read = detail::mul(batch, in_elements_) + outputs;
        p.gradient_elements_written = params();
        p.gemm = {c_.out_channels / c_.groups, kernel_volume_, detail::mul(batch, out_pixels_), c_.groups};
        return p;
    }

private:
    Config c_;
    std::int64_t out_h_ = 0;
    std::int64_t out_w_ = 0;
    std::int64_t kernel_volume_ = 0;
    std::int64_t weights_ = 0;
    std::int64_t out_pixels_ = 0;
    std::int64_t macs_per_instance_ = 0;
    std::int64_t in_elements_ = 0;
    std::int64_t out_elements_ = 0;
};

}  // namespace roofplan::layers

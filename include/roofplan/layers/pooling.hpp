// roofplan/layers/pooling.hpp — max / average pooling and adaptive average pooling.
#pragma once

#include <roofplan/layers/detail_per_element.hpp>

namespace roofplan::layers {

enum class PoolKind { max, average };

/// Max or average pooling with PyTorch's output-size rule: Ho = ⌊(H + 2p − k)/s⌋ + 1, or ⌈…⌉ + 1 with
/// ceil_mode, where a last window that would start in the right padding is dropped.  Pooling is counted as
/// k_h·k_w FLOP per output element (comparisons or additions); it has no parameters.
class Pool2D {
public:
    struct Config {
        PoolKind kind = PoolKind::max;
        std::int64_t channels = 0;
        std::int64_t in_height = 0;
        std::int64_t in_width = 0;
        Extent2 kernel = 2;
        Extent2 stride = 0;  ///< 0 = kernel (PyTorch's default)
        Extent2 padding = 0;
        bool ceil_mode = false;
    };
    static constexpr std::string_view type_name = "pool2d";

    constexpr explicit Pool2D(const Config& config) : c_(config) {
        using roofplan::detail::fail;
        using roofplan::detail::require_positive;
        const std::string_view name = kind_name();
        require_positive(c_.channels, name, "channels");
        require_positive(c_.in_height, name, "in_height");
        require_positive(c_.in_width, name, "in_width");
        require_positive(c_.kernel.h, name, "kernel height");
        require_positive(c_.kernel.w, name, "kernel width");
        if (c_.stride.h == 0 && c_.stride.w == 0) c_.stride = c_.kernel;
        require_positive(c_.stride.h, name, "stride height");
        require_positive(c_.stride.w, name, "stride width");
        roofplan::detail::require_non_negative(c_.padding.h, name, "padding height");
        roofplan::detail::require_non_negative(c_.padding.w, name, "padding width");
        if (2 * c_.padding.h > c_.kernel.h || 2 * c_.padding.w > c_.kernel.w)
            fail(name, ": padding (", c_.padding.h, "x", c_.padding.w, ") must be at most half the kernel (",
                 c_.kernel.h, "x", c_.kernel.w, ")");
        out_h_ = out_size(c_.in_height, c_.kernel.h, c_.stride.h, c_.padding.h, name);
        out_w_ = out_size(c_.in_width, c_.kernel.w, c_.stride.w, c_.padding.w, name);
        outputs_ = detail::mul(c_.channels, out_h_, out_w_);
    }

    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::string_view kind_name() const {
        return c_.kind == PoolKind::max ? "maxpool2d" : "avgpool2d";
    }
    [[nodiscard]] constexpr std::int64_t params() const { return 0; }
    [[nodiscard]] constexpr Shape input_shape() const { return Shape{c_.channels, c_.in_height, c_.in_width}; }
    [[nodiscard]] constexpr Shape output_shape() const { return Shape{c_.channels, out_h_, out_w_}; }
    [[nodiscard]] constexpr std::int64_t paper_ops() const { return 0; }
    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.vector_flops = units::flops(detail::mul(batch, outputs_, c_.kernel.h * c_.kernel.w));
        p.activation_elements_read = detail::mul(batch, input_shape().elements());
        p.activation_elements_written = detail::mul(batch, outputs_);
        return p;
    }
    /// Max: route each output gradient to its arg-max (1 FLOP); average: spread it over the window.
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        const std::int64_t per_output = c_.kind == PoolKind::max ? 1 : c_.kernel.h * c_.kernel.w;
        p.vector_flops = units::flops(detail::mul(batch, outputs_, per_output));
        p.activation_elements_read = detail::mul(batch, outputs_) * (c_.kind == PoolKind::max ? 2 : 1);
        p.activation_elements_written = detail::mul(batch, input_shape().elements());
        return p;
    }
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const { return detail::nothing(batch); }

    /// One type name per kind, in PoolKind's order.
    static constexpr auto describe() {
        return Description<Config, 7, 2>{
            .types = {"maxpool2d", "avgpool2d"},
            .input = {3, "CxHxW"},
            .fields = join(detail::feature_map_fields<Config>(&Config::channels, &Config::in_height, &Config::in_width),
                           std::array{field("k", "kernel", &Config::kernel, "window, 3 or 2x2").needed(),
                                      field("s", "stride", &Config::stride, "stride, default k").at_least(0),
                                      field("p", "padding", &Config::padding, "padding, default 0").at_least(0),
                                      field("ceil", "ceil_mode", &Config::ceil_mode, "ceil mode, default 0")}),
            .kind = {[](const Config& c) { return static_cast<std::size_t>(c.kind); },
                     [](Config& c, std::size_t kind) { c.kind = static_cast<PoolKind>(kind); }}};
    }

private:
    constexpr std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t pad,
                                    std::string_view name) const {
        const std::int64_t span = in + 2 * pad - k;
        if (span < 0)
            roofplan::detail::fail(name, ": kernel ", k, " is larger than the padded input ", in + 2 * pad);
        std::int64_t out = (c_.ceil_mode ? (span + s - 1) / s : span / s) + 1;
        if (c_.ceil_mode && (out - 1) * s >= in + pad) --out;
        return out;
    }

    Config c_;
    std::int64_t out_h_ = 0;
    std::int64_t out_w_ = 0;
    std::int64_t outputs_ = 0;
};

template <>
struct Explain<Pool2D> {
    /// Ho with PyTorch's rule, then the generic steps.
    static void steps(Derivation& d, const Pool2D& layer) {
        const Pool2D::Config& c = layer.config();
        const std::int64_t ho = layer.output_shape()[1];
        d.checked("out_h", "Ho", c.ceil_mode ? "⌈(H + 2·p − k)/s⌉ + 1" : "⌊(H + 2·p − k)/s⌋ + 1",
                  std::string(c.ceil_mode ? "⌈(" : "⌊(") + num(c.in_height) + " + 2·" + num(c.padding.h) +
                      " − " + num(c.kernel.h) + ")/" + num(c.stride.h) + (c.ceil_mode ? "⌉" : "⌋") + " + 1",
                  c.ceil_mode ? ho : (c.in_height + 2 * c.padding.h - c.kernel.h) / c.stride.h + 1, ho);
        generic_steps(d, layer);
    }
};

/// Adaptive average pooling to a fixed out_h×out_w grid (PyTorch's windows: start = ⌊i·H/out⌋,
/// end = ⌈(i+1)·H/out⌉).  FLOPs are the exact window sums plus one divide per output.
class AdaptiveAvgPool2D {
public:
    struct Config {
        std::int64_t channels = 0;
        std::int64_t in_height = 0;
        std::int64_t in_width = 0;
        Extent2 output = 1;
    };
    static constexpr std::string_view type_name = "adaptive_avgpool2d";

    constexpr explicit AdaptiveAvgPool2D(const Config& config) : c_(config) {
        using roofplan::detail::require_positive;
        require_positive(c_.channels, "adaptive_avgpool2d", "channels");
        require_positive(c_.in_height, "adaptive_avgpool2d", "in_height");
        require_positive(c_.in_width, "adaptive_avgpool2d", "in_width");
        require_positive(c_.output.h, "adaptive_avgpool2d", "output height");
        require_positive(c_.output.w, "adaptive_avgpool2d", "output width");
        const std::int64_t window_h = window_sum(c_.in_height, c_.output.h);
        const std::int64_t window_w = window_sum(c_.in_width, c_.output.w);
        flops_per_channel_ = detail::mul(window_h, window_w) + c_.output.h * c_.output.w;
    }
    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::int64_t params() const { return 0; }
    [[nodiscard]] constexpr Shape input_shape() const { return Shape{c_.channels, c_.in_height, c_.in_width}; }
    [[nodiscard]] constexpr Shape output_shape() const { return Shape{c_.channels, c_.output.h, c_.output.w}; }
    [[nodiscard]] constexpr std::int64_t paper_ops() const { return 0; }
    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.vector_flops = units::flops(detail::mul(batch, c_.channels, flops_per_channel_));
        p.activation_elements_read = detail::mul(batch, input_shape().elements());
        p.activation_elements_written = detail::mul(batch, output_shape().elements());
        return p;
    }
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.vector_flops = units::flops(detail::mul(batch, c_.channels, flops_per_channel_));
        p.activation_elements_read = detail::mul(batch, output_shape().elements());
        p.activation_elements_written = detail::mul(batch, input_shape().elements());
        return p;
    }
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const { return detail::nothing(batch); }

    static constexpr auto describe() {
        return detail::feature_map_description(type_name, &Config::channels, &Config::in_height, &Config::in_width,
                                               field("out", "output", &Config::output, "output grid, default 1"));
    }

private:
    /// Σ over output cells of the window length along one axis.
    static constexpr std::int64_t window_sum(std::int64_t in, std::int64_t out) {
        std::int64_t total = 0;
        for (std::int64_t i = 0; i < out; ++i) {
            const std::int64_t start = (i * in) / out;
            const std::int64_t end = ((i + 1) * in + out - 1) / out;
            total += end - start;
        }
        return total;
    }

    Config c_;
    std::int64_t flops_per_channel_ = 0;
};

}  // namespace roofplan::layers

namespace roofplan {
using layers::AdaptiveAvgPool2D;
using layers::Pool2D;
using layers::PoolKind;
}  // namespace roofplan

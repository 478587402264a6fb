// roofplan/layers/detail_conv.hpp — what Conv2D and ConvTranspose2D share: the 2-D geometry check, the counts and
// the three passes (one is the other's backward-data pass), their field table and their explanation (internal).
#pragma once

#include <roofplan/layers/describe.hpp>
#include <roofplan/layers/detail_cost.hpp>
#include <roofplan/layers/explain.hpp>
#include <roofplan/shape.hpp>

#include <string>
#include <string_view>
#include <utility>

namespace roofplan::layers {

/// A 2-D convolution's configuration (Conv2D's and ConvTranspose2D's): ci×H×W in, co channels out, a kh×kw kernel.
/// `output_padding` is the transposed convolution's extra output rows and columns; a Conv2D requires it 0.
struct Conv2DConfig {
    std::int64_t in_channels = 0, out_channels = 0;
    std::int64_t in_height = 0, in_width = 0;
    Extent2 kernel = 1, stride = 1, padding = 0;
    Extent2 output_padding = 0;
    Extent2 dilation = 1;
    std::int64_t groups = 1;
    bool bias = true;
};

namespace detail {

/// The checks both convolutions make: positive channels, input, kernel, stride and dilation, non-negative
/// padding, positive groups dividing both channel counts.
constexpr void check_conv_geometry(const Conv2DConfig& c, std::string_view who) {
    using roofplan::detail::require_non_negative;
    using roofplan::detail::require_positive;
    require_positive(c.in_channels, who, "in_channels");
    require_positive(c.out_channels, who, "out_channels");
    require_positive(c.in_height, who, "in_height");
    require_positive(c.in_width, who, "in_width");
    require_positive(c.kernel.h, who, "kernel height");
    require_positive(c.kernel.w, who, "kernel width");
    require_positive(c.stride.h, who, "stride height");
    require_positive(c.stride.w, who, "stride width");
    require_positive(c.dilation.h, who, "dilation height");
    require_positive(c.dilation.w, who, "dilation width");
    require_non_negative(c.padding.h, who, "padding height");
    require_non_negative(c.padding.w, who, "padding width");
    require_non_negative(c.output_padding.h, who, "output_padding height");
    require_non_negative(c.output_padding.w, who, "output_padding width");
    require_positive(c.groups, who, "groups");
    if (c.in_channels % c.groups != 0 || c.out_channels % c.groups != 0)
        roofplan::detail::fail(who, ": in_channels (", c.in_channels, ") and out_channels (", c.out_channels,
                               ") must both be divisible by groups (", c.groups, ")");
}

/// A 2-D convolution's counts and passes.  A convolution gathers a kernel at each output pixel; a transposed one
/// scatters a kernel from each input pixel, so its forward pass is the convolution's backward-data pass and the
/// implicit-GEMM shapes of those two passes are the same (M = B·Ho·Wo, N = co/groups, K = ci/groups·kh·kw forward).
class ConvCommon {
public:
    [[nodiscard]] constexpr const Conv2DConfig& config() const { return c_; }
    [[nodiscard]] constexpr i64 out_height() const { return out_h_; }
    [[nodiscard]] constexpr i64 out_width() const { return out_w_; }
    [[nodiscard]] constexpr i64 params() const { return weights_ + (c_.bias ? c_.out_channels : 0); }
    [[nodiscard]] constexpr Shape input_shape() const { return Shape{c_.in_channels, c_.in_height, c_.in_width}; }
    [[nodiscard]] constexpr Shape output_shape() const { return Shape{c_.out_channels, out_h_, out_w_}; }
    /// MACs plus one bias add per output element.
    [[nodiscard]] constexpr i64 paper_ops() const {
        return add(macs_per_instance_, c_.bias ? out_elements_ : 0, "paper operations");
    }

    [[nodiscard]] constexpr PassCost forward(i64 batch) const {
        PassCost p = with_macs(batch);
        const i64 outputs = mul(batch, out_elements_);
        p.vector_flops = units::flops(c_.bias ? outputs : 0);
        p.weight_elements_read = params();
        p.activation_elements_read = mul(batch, in_elements_);
        p.activation_elements_written = outputs;
        p.gemm = {mul(batch, out_pixels_), c_.out_channels / c_.groups,
                  mul(c_.in_channels / c_.groups, c_.kernel.h, c_.kernel.w), c_.groups};
        return p;
    }
    /// dX: M = B·H·W, N = ci/groups, K = co/groups·kh·kw.
    [[nodiscard]] constexpr PassCost backward_data(i64 batch) const {
        PassCost p = with_macs(batch);
        p.weight_elements_read = weights_;
        p.activation_elements_read = mul(batch, out_elements_);
        p.activation_elements_written = mul(batch, in_elements_);
        p.gemm = {mul(batch, in_pixels_), c_.in_channels / c_.groups,
                  mul(c_.out_channels / c_.groups, c_.kernel.h, c_.kernel.w), c_.groups};
        return p;
    }
    /// dW = Σ over the batch and the pixels each weight is applied at (same MACs as forward), db = Σ dY.
    [[nodiscard]] constexpr PassCost backward_weight(i64 batch) const {
        PassCost p = with_macs(batch);
        const i64 outputs = mul(batch, out_elements_);
        p.vector_flops = units::flops(c_.bias ? outputs : 0);
        p.activation_elements_read = mul(batch, in_elements_) + outputs;
        p.gradient_elements_written = params();
        p.gemm = {weight_rows_, kernel_volume_, mul(batch, applied_pixels_), c_.groups};
        return p;
    }

protected:
    constexpr ConvCommon(const Conv2DConfig& config, std::string_view who) : c_(config) {
        check_conv_geometry(c_, who);
    }
    /// Sets the output extent and the counts; `transposed`: each input pixel scatters a kernel.
    constexpr void set_output(i64 out_h, i64 out_w, bool transposed) {
        out_h_ = out_h;
        out_w_ = out_w;
        in_pixels_ = mul(c_.in_height, c_.in_width, "convolution input");
        out_pixels_ = mul(out_h_, out_w_, "convolution output");
        applied_pixels_ = transposed ? in_pixels_ : out_pixels_;
        const i64 rows = transposed ? c_.in_channels : c_.out_channels;      // one kernel per row of the weight
        const i64 columns = transposed ? c_.out_channels : c_.in_channels;  // ... over these channels
        weight_rows_ = rows / c_.groups;
        kernel_volume_ = mul(columns / c_.groups, c_.kernel.h, c_.kernel.w);
        weights_ = mul(rows, kernel_volume_, "convolution weights");
        macs_per_instance_ = mul(applied_pixels_, weights_, "convolution MACs");
        in_elements_ = mul(in_pixels_, c_.in_channels);
        out_elements_ = mul(out_pixels_, c_.out_channels);
    }

    Conv2DConfig c_;

private:
    [[nodiscard]] constexpr PassCost with_macs(i64 batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.macs = units::macs(mul(batch, macs_per_instance_, "convolution MACs"));
        return p;
    }

    i64 out_h_ = 0, out_w_ = 0;                                  // the output extent
    i64 in_pixels_ = 0, out_pixels_ = 0, applied_pixels_ = 0;    // ... and where each weight is applied
    i64 weight_rows_ = 0, kernel_volume_ = 0, weights_ = 0;      // the weight: rows/groups × kernel_volume per group
    i64 macs_per_instance_ = 0, in_elements_ = 0, out_elements_ = 0;
};

/// The fields both convolutions have, in the order layer specs list them.
constexpr std::array<Field<Conv2DConfig>, 10> conv_fields() {
    using Config = Conv2DConfig;
    return {field("cin", "in_channels", &Config::in_channels, "input channels").from(Source::input_axis0).needed(),
            field("cout", "out_channels", &Config::out_channels, "output channels").needed(),
            field("k", "kernel", &Config::kernel, "kernel size, 3 or 1x7").needed(),
            field("s", "stride", &Config::stride, "stride, default 1"),
            field("p", "padding", &Config::padding, "zero padding, default 0").at_least(0),
            field("d", "dilation", &Config::dilation, "dilation, default 1"),
            field("g", "groups", &Config::groups, "groups, default 1"),
            field("h", "height", &Config::in_height, "input height").from(Source::input_axis1).needed(),
            field("w", "width", &Config::in_width, "input width").from(Source::input_axis2).needed(),
            field("bias", "", &Config::bias, "bias, default 1")};
}

/// "cin·k²" and "64·3²" (square kernel), "cin·kh·kw" and "64·1·7", with "(cin/g)" for grouped convolutions: the
/// weights of one kernel over `channels` (named `symbol`).
inline std::pair<std::string, std::string> kernel_terms(std::string_view symbol, i64 channels, i64 groups,
                                                        Extent2 kernel) {
    const std::string name(symbol);
    std::string sym = groups == 1 ? name : "(" + name + "/g)";
    std::string numbers = groups == 1 ? num(channels) : "(" + num(channels) + "/" + num(groups) + ")";
    if (kernel.h == kernel.w) return {sym + "·k²", numbers + "·" + num(kernel.h) + "²"};
    return {sym + "·kh·kw", numbers + "·" + num(kernel.h) + "·" + num(kernel.w)};
}

/// One axis of a convolution: its name ("H"), input extent, kernel, stride, padding, dilation and output padding.
struct ConvAxis {
    std::string name;
    i64 in = 0, k = 0, s = 0, p = 0, d = 0, op = 0;
};

/// An output extent's derivation: the formula, the formula with one axis's numbers, the value it gives.
struct ExtentStep {
    std::string formula;
    std::string substituted;
    i64 value = 0;
};

/// One axis's output extent: a convolution gathers ⌊(H + 2·p − d·(k − 1) − 1)/s⌋ + 1 windows, a transposed one
/// scatters into (H − 1)·s − 2·p + d·(k − 1) + op + 1 outputs.
inline ExtentStep extent_step(const ConvAxis& a, bool transposed) {
    if (transposed)
        return {"(" + a.name + " − 1)·s − 2·p + d·(k − 1) + op + 1",
                "(" + num(a.in) + " − 1)·" + num(a.s) + " − 2·" + num(a.p) + " + " + num(a.d) + "·(" + num(a.k) +
                    " − 1) + " + num(a.op) + " + 1",
                (a.in - 1) * a.s - 2 * a.p + a.d * (a.k - 1) + a.op + 1};
    return {"⌊(" + a.name + " + 2·p − d·(k − 1) − 1)/s⌋ + 1",
            "⌊(" + num(a.in) + " + 2·" + num(a.p) + " − " + num(a.d) + "·(" + num(a.k) + " − 1) − 1)/" + num(a.s) +
                "⌋ + 1",
            (a.in + 2 * a.p - a.d * (a.k - 1) - 1) / a.s + 1};
}

/// Ho, and Wo unless the input and every extent are square (then "Wo = Ho"), then the output shape.
inline void output_extent_steps(Derivation& d, const Conv2DConfig& c, i64 out_h, i64 out_w, bool transposed) {
    const auto axis = [&](const char* name, i64 in, i64 Extent2::*along) {
        return ConvAxis{name,           in,           c.kernel.*along,        c.stride.*along,
                        c.padding.*along, c.dilation.*along, c.output_padding.*along};
    };
    const ExtentStep h = extent_step(axis("H", c.in_height, &Extent2::h), transposed);
    d.checked("out_h", "Ho", h.formula, h.substituted, h.value, out_h);
    const auto square = [](Extent2 e) { return e.h == e.w; };
    if (c.in_height == c.in_width && square(c.kernel) && square(c.stride) && square(c.padding) &&
        square(c.output_padding) && square(c.dilation)) {
        d.text("out_w", "Wo", "Ho", "square input and kernel");
    } else {
        const ExtentStep w = extent_step(axis("W", c.in_width, &Extent2::w), transposed);
        d.checked("out_w", "Wo", w.formula, w.substituted, w.value, out_w);
    }
    d.text("output_shape", "output", Shape{c.out_channels, out_h, out_w}.to_string(), "cout×Ho×Wo");
}

/// A kernel's weights per channel of the weight's first axis, as formulas write them ("cin·k²" and "64·3²").
struct KernelTerms {
    std::string symbol;
    std::string numbers;
    i64 volume = 0;
};

/// The shapes section of both convolutions (Ho, Wo, the output), and their kernel's terms: over the input channels
/// for a convolution, over the output channels for a transposed one.
inline KernelTerms conv_shape_steps(Derivation& d, const ConvCommon& layer, bool transposed) {
    const Conv2DConfig& c = layer.config();
    output_extent_steps(d, c, layer.out_height(), layer.out_width(), transposed);
    const i64 channels = transposed ? c.out_channels : c.in_channels;
    auto [symbol, numbers] = kernel_terms(transposed ? "cout" : "cin", channels, c.groups, c.kernel);
    return {std::move(symbol), std::move(numbers), channels / c.groups * c.kernel.h * c.kernel.w};
}

/// Bias adds (one per output element) and the paper's operations, MACs + bias adds.
template <class L>
void conv_bias_and_paper_ops(Derivation& d, const L& layer, const std::string& paper_formula,
                             const std::string& paper_numbers, i64 paper_ops) {
    const auto& c = layer.config();
    const i64 ho = layer.out_height(), wo = layer.out_width();
    if (c.bias)
        d.checked("vector_flops_per_instance", "bias adds", "cout·Ho·Wo",
                  num(c.out_channels) + "·" + num(ho) + "·" + num(wo), c.out_channels * ho * wo,
                  layer.forward(1).vector_flops.value(), "FLOP");
    d.checked("paper_ops", "paper ops", paper_formula, paper_numbers, paper_ops, layer.paper_ops(), "",
              "the paper's count: a multiply-add is 1, a bias add 1");
}

}  // namespace detail
}  // namespace roofplan::layers

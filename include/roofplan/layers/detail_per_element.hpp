// roofplan/layers/detail_per_element.hpp — the shared base of the layers whose work is per element of their input
// (activations, softmax, dropout, normalisations, elementwise arithmetic, concatenation, flatten) (internal).
#pragma once

#include <roofplan/layers/describe.hpp>
#include <roofplan/layers/detail_cost.hpp>
#include <roofplan/layers/explain.hpp>
#include <roofplan/shape.hpp>

#include <string_view>

namespace roofplan::layers::detail {

/// FLOP per element, and how many tensors of the input's size each pass reads and writes.  A backward-data pass of
/// zeros costs nothing (a residual add hands its gradient on; a concatenation takes views of it).
struct ElementCosts {
    i64 forward_flops = 0, forward_reads = 1, forward_writes = 1;
    i64 backward_flops = 0, backward_reads = 0, backward_writes = 0;
};

/// A layer whose passes are per element of its input: the costs above; its parameters (γ, β, if any) are read once a
/// pass and their gradients are two sums per element.  The output has the input's shape unless the layer says.
template <class Config>
class PerElement {
public:
    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr i64 params() const { return params_; }
    [[nodiscard]] constexpr Shape input_shape() const { return input_; }
    [[nodiscard]] constexpr Shape output_shape() const { return output_; }
    [[nodiscard]] constexpr i64 paper_ops() const { return 0; }
    [[nodiscard]] constexpr PassCost forward(i64 batch) const {
        PassCost p = elementwise(batch, elements_, costs_.forward_flops, costs_.forward_reads, costs_.forward_writes);
        p.weight_elements_read = params_;
        return p;
    }
    [[nodiscard]] constexpr PassCost backward_data(i64 batch) const {
        PassCost p =
            elementwise(batch, elements_, costs_.backward_flops, costs_.backward_reads, costs_.backward_writes);
        p.weight_elements_read = params_;
        return p;
    }
    [[nodiscard]] constexpr PassCost backward_weight(i64 batch) const {
        if (params_ == 0) return nothing(batch);
        PassCost p = elementwise(batch, elements_, 2, 2, 0);
        p.gradient_elements_written = params_;
        return p;
    }

protected:
    /// `input` is already checked (the helpers below check and return it); `output` defaults to `input`.
    constexpr PerElement(const Config& config, Shape input, ElementCosts costs, i64 params = 0, Shape output = {})
        : c_(config), input_(input), output_(output.rank() == 0 ? input : output), elements_(input.elements()),
          params_(params), costs_(costs) {}

    Config c_;

private:
    Shape input_;
    Shape output_;
    i64 elements_ = 0;
    i64 params_ = 0;
    ElementCosts costs_;
};

/// A shape given in the configuration, which must not be empty ("relu: the input shape is missing").
constexpr Shape given_shape(const Shape& shape, std::string_view who, std::string_view what = "input") {
    if (shape.rank() == 0) roofplan::detail::fail(who, ": the ", what, " shape is missing");
    return shape;
}

/// A C×H×W feature map, each extent checked.
constexpr Shape feature_map(i64 channels, i64 height, i64 width, std::string_view who) {
    roofplan::detail::require_positive(channels, who, "channels");
    roofplan::detail::require_positive(height, who, "height");
    roofplan::detail::require_positive(width, who, "width");
    return Shape{channels, height, width};
}

/// `rows` vectors of `width` features: [width] for one vector, [rows, width] otherwise.
constexpr Shape rows_of(i64 width, i64 rows, std::string_view who) {
    roofplan::detail::require_positive(width, who, "width");
    roofplan::detail::require_positive(rows, who, "rows");
    return rows == 1 ? Shape{width} : Shape{rows, width};
}

/// The field every shape-given layer has: its per-instance shape (in model files, the input's).
template <class Config>
constexpr Field<Config> shape_field(std::string_view example) {
    return field("shape", "", &Config::shape, example).from(Source::input_shape).needed();
}

/// The channels, height and width of a C×H×W input (in model files, its three axes).
template <class Config>
constexpr std::array<Field<Config>, 3> feature_map_fields(i64 Config::*channels, i64 Config::*height,
                                                          i64 Config::*width) {
    return {field("c", "channels", channels, "channels").from(Source::input_axis0).needed(),
            field("h", "height", height, "input height").from(Source::input_axis1).needed(),
            field("w", "width", width, "input width").from(Source::input_axis2).needed()};
}

/// The table of a one-type layer over a C×H×W input: its channels, height and width, then its own `field`.
template <class Config>
constexpr Description<Config, 4> feature_map_description(std::string_view type, i64 Config::*channels,
                                                         i64 Config::*height, i64 Config::*width,
                                                         const Field<Config>& own) {
    return {.types = {type},
            .input = {3, "CxHxW"},
            .fields = join(feature_map_fields(channels, height, width), std::array{own})};
}

}  // namespace roofplan::layers::detail

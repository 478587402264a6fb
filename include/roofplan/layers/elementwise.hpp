// roofplan/layers/elementwise.hpp — residual add, elementwise product, concatenation, flatten.
#pragma once

#include <roofplan/layers/detail_per_element.hpp>

namespace roofplan::layers {

struct AddConfig {
    Shape shape{};
    std::int64_t inputs = 2;
};

/// Sum of `inputs` tensors of one shape (a residual connection): (inputs−1) FLOP per element.  Its backward
/// hands the same gradient to every input, which costs nothing.
class Add : public detail::PerElement<AddConfig> {
public:
    using Config = AddConfig;
    static constexpr std::string_view type_name = "add";

    constexpr explicit Add(const Config& config)
        : PerElement(config, detail::given_shape(config.shape, type_name),
                     {.forward_flops = config.inputs - 1, .forward_reads = config.inputs}) {
        if (c_.inputs < 2) roofplan::detail::fail("add: needs at least 2 inputs, got ", c_.inputs);
    }

    static constexpr auto describe() {
        return Description<Config, 2>{
            .types = {type_name},
            .fields = {detail::shape_field<Config>("per-instance shape of each input, e.g. 256x56x56"),
                       field("inputs", "", &Config::inputs, "tensors added, default 2")}};
    }
};

struct MultiplyConfig {
    Shape shape{};
};

/// Elementwise product of two tensors of one shape (SwiGLU's gate): 1 FLOP per element forward; backward
/// computes both input gradients (2 FLOP, reads dy, a and b, writes da and db).
class Multiply : public detail::PerElement<MultiplyConfig> {
public:
    using Config = MultiplyConfig;
    static constexpr std::string_view type_name = "multiply";

    constexpr explicit Multiply(const Config& config)
        : PerElement(config, detail::given_shape(config.shape, type_name),
                     {.forward_flops = 1, .forward_reads = 2, .backward_flops = 2, .backward_reads = 3,
                      .backward_writes = 2}) {}

    static constexpr auto describe() {
        return Description<Config, 1>{
            .types = {type_name}, .fields = {detail::shape_field<Config>("per-instance shape of each input")}};
    }
};

struct ConcatConfig {
    Shape output{};
    std::int64_t inputs = 2;
};

/// Concatenation of inputs along the first (channel) axis into `output` (a copy: every element is read and
/// written once).  Its backward takes views of the gradient, which costs nothing.
class Concat : public detail::PerElement<ConcatConfig> {
public:
    using Config = ConcatConfig;
    static constexpr std::string_view type_name = "concat";

    constexpr explicit Concat(const Config& config)
        : PerElement(config, detail::given_shape(config.output, type_name, "output"), {}) {
        if (c_.inputs < 2) roofplan::detail::fail("concat: needs at least 2 inputs, got ", c_.inputs);
    }

    /// Model files give the output shape (the inputs are several); the running shape is not read.
    static constexpr auto describe() {
        return Description<Config, 2>{
            .types = {type_name},
            .fields = {field("output", "", &Config::output, "the concatenated shape, e.g. 256x28x28").needed(),
                       field("inputs", "", &Config::inputs, "tensors concatenated, default 2")}};
    }
};

struct FlattenConfig {
    Shape shape{};
};

/// Flatten (a view: no arithmetic, no traffic).  Output is one axis of all the input's elements.
class Flatten : public detail::PerElement<FlattenConfig> {
public:
    using Config = FlattenConfig;
    static constexpr std::string_view type_name = "flatten";

    constexpr explicit Flatten(const Config& config)
        : PerElement(config, detail::given_shape(config.shape, type_name), {.forward_reads = 0, .forward_writes = 0},
                     0, Shape{config.shape.elements()}) {}

    static constexpr auto describe() {
        return Description<Config, 1>{
            .types = {type_name}, .fields = {detail::shape_field<Config>("per-instance shape, e.g. 512x7x7")}};
    }
};

}  // namespace roofplan::layers

namespace roofplan {
using layers::Add;
using layers::Concat;
using layers::Flatten;
using layers::Multiply;
}  // namespace roofplan

// roofplan/layers/elementwise.hpp — residual add, elementwise product, concatenation, flatten.
#pragma once

#include <roofplan/layers/detail_cost.hpp>
#include <roofplan/shape.hpp>

namespace roofplan::layers {

/// Sum of `inputs` tensors of one shape (a residual connection): (inputs−1) FLOP per element.  Its backward
/// hands the same gradient to every input, which costs nothing.
class Add {
public:
    struct Config {
        Shape shape{};
        std::int64_t inputs = 2;
    };
    static constexpr std::string_view type_name = "add";

    constexpr explicit Add(const Config& config) : c_(config) {
        if (c_.shape.rank() == 0) roofplan::detail::fail("add: the input shape is missing");
        if (c_.inputs < 2) roofplan::detail::fail("add: needs at least 2 inputs, got ", c_.inputs);
        elements_ = c_.shape.elements();
    }
    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::int64_t params() const { return 0; }
    [[nodiscard]] constexpr Shape input_shape() const { return c_.shape; }
    [[nodiscard]] constexpr Shape output_shape() const { return c_.shape; }
    [[nodiscard]] constexpr std::int64_t paper_ops() const { return 0; }
    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const {
        return detail::elementwise(batch, elements_, c_.inputs - 1, c_.inputs, 1);
    }
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const { return detail::nothing(batch); }
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const { return detail::nothing(batch); }

private:
    Config c_;
    std::int64_t elements_ = 0;
};

/// Elementwise product of two tensors of one shape (SwiGLU's gate): 1 FLOP per element forward; backward
/// computes both input gradients (2 FLOP, reads dy, a and b, writes da and db).
class Multiply {
public:
    struct Config {
        Shape shape{};
    };
    static constexpr std::string_view type_name = "multiply";

    constexpr explicit Multiply(const Config& config) : c_(config) {
        if (c_.shape.rank() == 0) roofplan::detail::fail("multiply: the input shape is missing");
        elements_ = c_.shape.elements();
    }
    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::int64_t params() const { return 0; }
    [[nodiscard]] constexpr Shape input_shape() const { return c_.shape; }
    [[nodiscard]] constexpr Shape output_shape() const { return c_.shape; }
    [[nodiscard]] constexpr std::int64_t paper_ops() const { return 0; }
    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const {
        return detail::elementwise(batch, elements_, 1, 2, 1);
    }
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const {
        return detail::elementwise(batch, elements_, 2, 3, 2);
    }
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const { return detail::nothing(batch); }

private:
    Config c_;
    std::int64_t elements_ = 0;
};

/// Concatenation of inputs along the first (channel) axis into `output` (a copy: every element is read and
/// written once).  Its backward takes views of the gradient, which costs nothing.
class Concat {
public:
    struct Config {
        Shape output{};
        std::int64_t inputs = 2;
    };
    static constexpr std::string_view type_name = "concat";

    constexpr explicit Concat(const Config& config) : c_(config) {
        if (c_.output.rank() == 0) roofplan::detail::fail("concat: the output shape is missing");
        if (c_.inputs < 2) roofplan::detail::fail("concat: needs at least 2 inputs, got ", c_.inputs);
        elements_ = c_.output.elements();
    }
    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::int64_t params() const { return 0; }
    [[nodiscard]] constexpr Shape input_shape() const { return c_.output; }
    [[nodiscard]] constexpr Shape output_shape() const { return c_.output; }
    [[nodiscard]] constexpr std::int64_t paper_ops() const { return 0; }
    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const {
        return detail::elementwise(batch, elements_, 0, 1, 1);
    }
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const { return detail::nothing(batch); }
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const { return detail::nothing(batch); }

private:
    Config c_;
    std::int64_t elements_ = 0;
};

/// Flatten (a view: no arithmetic, no traffic).  Output is one axis of all the input's elements.
class Flatten {
public:
    struct Config {
        Shape shape{};
    };
    static constexpr std::string_view type_name = "flatten";

    constexpr explicit Flatten(const Config& config) : c_(config) {
        if (c_.shape.rank() == 0) roofplan::detail::fail("flatten: the input shape is missing");
    }
    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::int64_t params() const { return 0; }
    [[nodiscard]] constexpr Shape input_shape() const { return c_.shape; }
    [[nodiscard]] constexpr Shape output_shape() const { return Shape{c_.shape.elements()}; }
    [[nodiscard]] constexpr std::int64_t paper_ops() const { return 0; }
    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const { return detail::nothing(batch); }
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const { return detail::nothing(batch); }
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const { return detail::nothing(batch); }

private:
    Config c_;
};

}  // namespace roofplan::layers

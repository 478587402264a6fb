// roofplan/layers/activation.hpp — activations, softmax and dropout (elementwise, memory-bound).
#pragma once

#include <roofplan/layers/detail_cost.hpp>
#include <roofplan/shape.hpp>

namespace roofplan::layers {

enum class ActivationKind { relu, gelu, tanh, sigmoid, silu };

}  // namespace roofplan::layers
template <>
struct roofplan::EnumNames<roofplan::layers::ActivationKind> {
    static constexpr std::string_view field = "activation";
    static constexpr std::array<std::string_view, 5> names{"relu", "gelu", "tanh", "sigmoid", "silu"};
};
namespace roofplan::layers {
using roofplan::to_string;

/// FLOP per element, forward: relu 1 (compare), gelu 8 (tanh form: cube, 3 mul-adds, tanh, mul),
/// tanh 4, sigmoid 4 (negate, exp, add, divide), silu 5 (sigmoid + multiply).  Backward-data roughly doubles
/// each except relu (1: a select on the saved sign).
constexpr std::int64_t activation_flops(ActivationKind k, bool backward) {
    switch (k) {
        case ActivationKind::relu: return 1;
        case ActivationKind::gelu: return backward ? 16 : 8;
        case ActivationKind::tanh: return backward ? 7 : 4;
        case ActivationKind::sigmoid: return backward ? 7 : 4;
        case ActivationKind::silu: return backward ? 10 : 5;
    }
    return 1;
}

/// An elementwise activation over a per-instance shape.  No parameters.
class Activation {
public:
    struct Config {
        ActivationKind kind = ActivationKind::relu;
        Shape shape{};
    };
    static constexpr std::string_view type_name = "activation";

    constexpr explicit Activation(const Config& config) : c_(config) {
        if (c_.shape.rank() == 0) roofplan::detail::fail(to_string(c_.kind), ": the input shape is missing");
        elements_ = c_.shape.elements();
    }
    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::string_view kind_name() const { return to_string(c_.kind); }
    [[nodiscard]] constexpr std::int64_t params() const { return 0; }
    [[nodiscard]] constexpr Shape input_shape() const { return c_.shape; }
    [[nodiscard]] constexpr Shape output_shape() const { return c_.shape; }
    [[nodiscard]] constexpr std::int64_t paper_ops() const { return 0; }
    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const {
        return detail::elementwise(batch, elements_, activation_flops(c_.kind, false), 1, 1);
    }
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const {  // reads dy and x (or y)
        return detail::elementwise(batch, elements_, activation_flops(c_.kind, true), 2, 1);
    }
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const { return detail::nothing(batch); }

private:
    Config c_;
    std::int64_t elements_ = 0;
};

/// Softmax over the last axis of a per-instance shape: 5 FLOP per element forward (max, subtract, exp, sum,
/// divide), 4 backward (dot product with y, subtract, multiply).
class Softmax {
public:
    struct Config {
        Shape shape{};
    };
    static constexpr std::string_view type_name = "softmax";

    constexpr explicit Softmax(const Config& config) : c_(config) {
        if (c_.shape.rank() == 0) roofplan::detail::fail("softmax: the input shape is missing");
        elements_ = c_.shape.elements();
    }
    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::int64_t params() const { return 0; }
    [[nodiscard]] constexpr Shape input_shape() const { return c_.shape; }
    [[nodiscard]] constexpr Shape output_shape() const { return c_.shape; }
    [[nodiscard]] constexpr std::int64_t paper_ops() const { return 0; }
    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const {
        return detail::elementwise(batch, elements_, 5, 1, 1);
    }
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const {
        return detail::elementwise(batch, elements_, 4, 2, 1);
    }
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const { return detail::nothing(batch); }

private:
    Config c_;
    std::int64_t elements_ = 0;
};

/// Dropout with drop probability p (training): a mask multiply, 1 FLOP/element, the input read and the
/// output written (the mask is generated in registers; its 1-byte store is ignored).  Inference skips it.
class Dropout {
public:
    struct Config {
        Shape shape{};
        double probability = 0.5;
    };
    static constexpr std::string_view type_name = "dropout";

    constexpr explicit Dropout(const Config& config) : c_(config) {
        if (c_.shape.rank() == 0) roofplan::detail::fail("dropout: the input shape is missing");
        if (!(c_.probability >= 0.0 && c_.probability < 1.0))
            roofplan::detail::fail("dropout: probability must be in [0, 1)");
        elements_ = c_.shape.elements();
    }
    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::int64_t params() const { return 0; }
    [[nodiscard]] constexpr Shape input_shape() const { return c_.shape; }
    [[nodiscard]] constexpr Shape output_shape() const { return c_.shape; }
    [[nodiscard]] constexpr std::int64_t paper_ops() const { return 0; }
    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const {
        return detail::elementwise(batch, elements_, 1, 1, 1);
    }
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const {
        return detail::elementwise(batch, elements_, 1, 1, 1);
    }
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const { return detail::nothing(batch); }

private:
    Config c_;
    std::int64_t elements_ = 0;
};

}  // namespace roofplan::layers

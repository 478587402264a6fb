// roofplan/layers/activation.hpp — activations, softmax and dropout (elementwise, memory-bound).
#pragma once

#include <roofplan/layers/detail_per_element.hpp>

namespace roofplan::layers {

/// gelu is one kernel (PyTorch's erf form, nn.GELU); gelu_tanh is the tanh approximation written out as tensor
/// ops in the model's code (Hugging Face's NewGELUActivation, GPT-2): the same arithmetic, eight kernels eagerly.
enum class ActivationKind { relu, gelu, tanh, sigmoid, silu, gelu_tanh };

}  // namespace roofplan::layers
template <>
struct roofplan::EnumNames<roofplan::layers::ActivationKind> {
    static constexpr std::string_view field = "activation";
    static constexpr std::array<std::string_view, 6> names{"relu", "gelu", "tanh", "sigmoid", "silu", "gelu_tanh"};
};
namespace roofplan::layers {
using roofplan::to_string;

/// FLOP per element, forward: relu 1 (compare), gelu 8 (tanh form: cube, 3 mul-adds, tanh, mul),
/// tanh 4, sigmoid 4 (negate, exp, add, divide), silu 5 (sigmoid + multiply).  Backward-data roughly doubles
/// each except relu (1: a select on the saved sign).
constexpr std::int64_t activation_flops(ActivationKind k, bool backward) {
    switch (k) {
        case ActivationKind::relu: return 1;
        case ActivationKind::gelu:
        case ActivationKind::gelu_tanh: return backward ? 16 : 8;
        case ActivationKind::tanh: return backward ? 7 : 4;
        case ActivationKind::sigmoid: return backward ? 7 : 4;
        case ActivationKind::silu: return backward ? 10 : 5;
    }
    return 1;
}

struct ActivationConfig {
    ActivationKind kind = ActivationKind::relu;
    Shape shape{};
};

/// An elementwise activation over a per-instance shape.  No parameters.
class Activation : public detail::PerElement<ActivationConfig> {
public:
    using Config = ActivationConfig;
    static constexpr std::string_view type_name = "activation";

    constexpr explicit Activation(const Config& config)
        : PerElement(config, detail::given_shape(config.shape, to_string(config.kind)),
                     {.forward_flops = activation_flops(config.kind, false),
                      .backward_flops = activation_flops(config.kind, true), .backward_reads = 2,  // dy and x (or y)
                      .backward_writes = 1}) {}
    [[nodiscard]] constexpr std::string_view kind_name() const { return to_string(c_.kind); }

    /// One type name per kind, in ActivationKind's order: `{"type": "gelu"}`, `gelu shape=384x3072`.
    static constexpr auto describe() {
        return Description<Config, 1, 6>{
            .types = {"relu", "gelu", "tanh", "sigmoid", "silu", "gelu_tanh"},
            .fields = {detail::shape_field<Config>("per-instance shape, e.g. 64x56x56")},
            .kind = {[](const Config& c) { return static_cast<std::size_t>(c.kind); },
                     [](Config& c, std::size_t kind) { c.kind = static_cast<ActivationKind>(kind); }}};
    }
};

struct SoftmaxConfig {
    Shape shape{};
};

/// Softmax over the last axis of a per-instance shape: 5 FLOP per element forward (max, subtract, exp, sum,
/// divide), 4 backward (dot product with y, subtract, multiply).
class Softmax : public detail::PerElement<SoftmaxConfig> {
public:
    using Config = SoftmaxConfig;
    static constexpr std::string_view type_name = "softmax";

    constexpr explicit Softmax(const Config& config)
        : PerElement(config, detail::given_shape(config.shape, type_name),
                     {.forward_flops = 5, .backward_flops = 4, .backward_reads = 2, .backward_writes = 1}) {}

    static constexpr auto describe() {
        return Description<Config, 1>{
            .types = {type_name}, .fields = {detail::shape_field<Config>("per-instance shape, e.g. 12x384x384")}};
    }
};

struct DropoutConfig {
    Shape shape{};
    double probability = 0.5;
};

/// Dropout with drop probability p (training): a mask multiply, 1 FLOP/element, the input read and the
/// output written (the mask is generated in registers; its 1-byte store is ignored).  Inference skips it.
class Dropout : public detail::PerElement<DropoutConfig> {
public:
    using Config = DropoutConfig;
    static constexpr std::string_view type_name = "dropout";

    constexpr explicit Dropout(const Config& config)
        : PerElement(config, detail::given_shape(config.shape, type_name),
                     {.forward_flops = 1, .backward_flops = 1, .backward_reads = 1, .backward_writes = 1}) {
        if (!(c_.probability >= 0.0 && c_.probability < 1.0))
            roofplan::detail::fail("dropout: probability must be in [0, 1)");
    }

    static constexpr auto describe() {
        return Description<Config, 2>{
            .types = {type_name},
            .fields = {detail::shape_field<Config>("per-instance shape, e.g. 128x768"),
                       field("p", "probability", &Config::probability, "drop probability").in_range(0, 1)}};
    }
};

}  // namespace roofplan::layers

namespace roofplan {
using layers::Activation;
using layers::ActivationKind;
using layers::Dropout;
using layers::Softmax;
}  // namespace roofplan

// roofplan/layers/layer.hpp — the Layer concept, the type-erased AnyLayer, and generic layer functions.
#pragma once

#include <roofplan/layers/activation.hpp>
#include <roofplan/layers/attention.hpp>
#include <roofplan/layers/conv.hpp>
#include <roofplan/layers/conv_transpose.hpp>
#include <roofplan/layers/elementwise.hpp>
#include <roofplan/layers/embedding.hpp>
#include <roofplan/layers/gru.hpp>
#include <roofplan/layers/linear.hpp>
#include <roofplan/layers/matmul.hpp>
#include <roofplan/layers/norm.hpp>
#include <roofplan/layers/pooling.hpp>
#include <roofplan/layers/recurrent.hpp>

#include <concepts>
#include <optional>
#include <string_view>
#include <variant>

namespace roofplan {

/// What every layer descriptor provides.  All of it is constexpr; costs are per batch, counts per instance.
template <class L>
concept Layer = requires(const L& layer, std::int64_t batch) {
    { L::type_name } -> std::convertible_to<std::string_view>;
    { layer.params() } -> std::same_as<std::int64_t>;
    { layer.input_shape() } -> std::same_as<Shape>;
    { layer.output_shape() } -> std::same_as<Shape>;
    { layer.paper_ops() } -> std::same_as<std::int64_t>;
    { layer.forward(batch) } -> std::same_as<PassCost>;
    { layer.backward_data(batch) } -> std::same_as<PassCost>;
    { layer.backward_weight(batch) } -> std::same_as<PassCost>;
};

using layers::Activation;
using layers::ActivationKind;
using layers::AdaptiveAvgPool2D;
using layers::Add;
using layers::AdditiveAttention;
using layers::BatchNorm2d;
using layers::Concat;
using layers::Conv2D;
using layers::ConvTranspose2D;
using layers::Dropout;
using layers::Embedding;
using layers::Flatten;
using layers::GRU;
using layers::LayerNorm;
using layers::Linear;
using layers::LocalResponseNorm;
using layers::LSTM;
using layers::MatMul;
using layers::MultiHeadAttention;
using layers::Multiply;
using layers::Pool2D;
using layers::PoolKind;
using layers::RMSNorm;
using layers::Softmax;

/// Any layer descriptor (for runtime-built and imported models).
using AnyLayer = std::variant<Linear, Conv2D, MultiHeadAttention, AdditiveAttention, BatchNorm2d, LayerNorm, RMSNorm,
                              LocalResponseNorm, Activation, Softmax, Dropout, Pool2D, AdaptiveAvgPool2D, Embedding,
                              Add, Multiply, Concat, Flatten, LSTM, MatMul, GRU, ConvTranspose2D>;

namespace detail {
template <class Variant>
struct all_layers;
template <class... Ls>
struct all_layers<std::variant<Ls...>> : std::bool_constant<(Layer<Ls> && ...)> {};
}  // namespace detail
static_assert(detail::all_layers<AnyLayer>::value, "every alternative of AnyLayer must model roofplan::Layer");

/// The cost of one pass of a layer over a batch.
template <Layer L>
constexpr PassCost cost(const L& layer, Pass pass, std::int64_t batch) {
    switch (pass) {
        case Pass::forward: return layer.forward(batch);
        case Pass::backward_data: return layer.backward_data(batch);
        case Pass::backward_weight: return layer.backward_weight(batch);
    }
    return layer.forward(batch);
}
constexpr PassCost cost(const AnyLayer& layer, Pass pass, std::int64_t batch) {
    return std::visit([&](const auto& l) { return cost(l, pass, batch); }, layer);
}

/// One pass of a layer over a batch at a precision, in operations and bytes.
template <class L>
constexpr Work work(const L& layer, Pass pass, std::int64_t batch, Precision precision) {
    return to_work(cost(layer, pass, batch), pass, precision);
}

/// Forward multiply-accumulates per instance.
template <Layer L>
constexpr mac_count forward_macs(const L& layer) { return layer.forward(1).macs; }
constexpr mac_count forward_macs(const AnyLayer& layer) {
    return std::visit([](const auto& l) { return forward_macs(l); }, layer);
}

/// Forward FLOPs per instance (2 per MAC plus the vector FLOPs).
template <Layer L>
constexpr flop_count forward_flops(const L& layer) { return layer.forward(1).flops(); }
constexpr flop_count forward_flops(const AnyLayer& layer) {
    return std::visit([](const auto& l) { return forward_flops(l); }, layer);
}

constexpr std::int64_t params(const AnyLayer& layer) {
    return std::visit([](const auto& l) { return l.params(); }, layer);
}
constexpr Shape output_shape(const AnyLayer& layer) {
    return std::visit([](const auto& l) { return l.output_shape(); }, layer);
}
constexpr Shape input_shape(const AnyLayer& layer) {
    return std::visit([](const auto& l) { return l.input_shape(); }, layer);
}
constexpr std::int64_t paper_ops(const AnyLayer& layer) {
    return std::visit([](const auto& l) { return l.paper_ops(); }, layer);
}

/// The paper's operation-to-parameter ratio Γ = (ops per instance · batch) / params, with a multiply-add
/// and a bias add counting one operation each.  Linear: Γ = B (per row); Conv2D: Γ = B·Ho·Wo.
/// Empty for layers without parameters or without counted operations.
template <class L>
constexpr std::optional<double> gamma(const L& layer, std::int64_t batch) {
    roofplan::detail::require_batch(batch);
    const std::int64_t p = [&] {
        if constexpr (std::same_as<L, AnyLayer>) return roofplan::params(layer); else return layer.params();
    }();
    const std::int64_t ops = [&] {
        if constexpr (std::same_as<L, AnyLayer>) return roofplan::paper_ops(layer); else return layer.paper_ops();
    }();
    if (p == 0 || ops == 0) return std::nullopt;
    return static_cast<double>(ops) * static_cast<double>(batch) / static_cast<double>(p);
}

/// A short type label for tables: "conv2d", "linear", "relu", "maxpool2d", ...
template <Layer L>
constexpr std::string_view type_label(const L& layer) {
    if constexpr (std::same_as<L, Activation>) return layer.kind_name();
    else if constexpr (std::same_as<L, Pool2D>) return layer.kind_name();
    else return L::type_name;
}
constexpr std::string_view type_label(const AnyLayer& layer) {
    return std::visit([](const auto& l) { return type_label(l); }, layer);
}

}  // namespace roofplan

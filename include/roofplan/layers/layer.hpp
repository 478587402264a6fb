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
#include <type_traits>
#include <variant>
#include <vector>

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

/// Any layer descriptor (for runtime-built and imported models).  A new layer type is its header (the class with its
/// field table, `describe()`, and optionally an `Explain<L>` beside it), its #include above and one entry here: the
/// model-file reader and writer, the layer-spec parser and `explain` loop over this list (docs/extending.md).
using AnyLayer = std::variant<Linear,
                              Conv2D,
                              MultiHeadAttention,
                              AdditiveAttention,
                              BatchNorm2d,
                              LayerNorm,
                              RMSNorm,
                              LocalResponseNorm,
                              Activation,
                              Softmax,
                              Dropout,
                              Pool2D,
                              AdaptiveAvgPool2D,
                              Embedding,
                              Add,
                              Multiply,
                              Concat,
                              Flatten,
                              LSTM,
                              MatMul,
                              GRU,
                              ConvTranspose2D>;

namespace detail {
template <class Variant>
struct all_layers;
template <class... Ls>
struct all_layers<std::variant<Ls...>> : std::bool_constant<((Layer<Ls> && layers::Described<Ls>) && ...)> {};
}  // namespace detail
static_assert(detail::all_layers<AnyLayer>::value,
              "every alternative of AnyLayer must model roofplan::Layer and declare its fields (L::describe())");

/// Calls `visit(std::type_identity<L>{})` for each layer type of AnyLayer, in the variant's order (what the model
/// file reader and the layer-spec parser loop over).
template <class Visit>
constexpr void for_each_layer_type(Visit&& visit) {
    [&]<class... Ls>(std::type_identity<std::variant<Ls...>>) {
        (visit(std::type_identity<Ls>{}), ...);
    }(std::type_identity<AnyLayer>{});
}

/// Every layer type name that model files and layer specs accept ("linear", "conv2d", ..., "relu", "gelu", ...).
inline std::vector<std::string_view> layer_type_names() {
    std::vector<std::string_view> names;
    for_each_layer_type([&]<class L>(std::type_identity<L>) {
        for (std::string_view type : L::describe().types) names.push_back(type);
    });
    return names;
}

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

/// A short type label for tables, the layer's type name in files and specs: "conv2d", "linear", "relu", "maxpool2d".
template <Layer L>
constexpr std::string_view type_label(const L& layer) {
    return L::describe().type_of(layer.config());
}
constexpr std::string_view type_label(const AnyLayer& layer) {
    return std::visit([](const auto& l) { return type_label(l); }, layer);
}

/// The derivation of a layer's shapes, parameters and per-instance work (layers/explain.hpp).
inline void explain_steps(layers::Derivation& derivation, const AnyLayer& layer) {
    std::visit([&](const auto& l) { layers::explain_steps(derivation, l); }, layer);
}
/// Γ's closed form at `batch` (" = B·Ho·Wo" for a convolution), where the layer has one.
inline std::optional<layers::ClosedForm> explain_gamma(const AnyLayer& layer, std::int64_t batch) {
    return std::visit([&](const auto& l) { return layers::explain_gamma(l, batch); }, layer);
}
/// A pass's MACs with their formula, where the layer derives them.
inline std::optional<layers::PassMacs> explain_pass_macs(const AnyLayer& layer, Pass pass, std::int64_t instances) {
    return std::visit([&](const auto& l) { return layers::explain_pass_macs(l, pass, instances); }, layer);
}

}  // namespace roofplan

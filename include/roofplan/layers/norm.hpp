// roofplan/layers/norm.hpp — normalisation layers: BatchNorm2d, LayerNorm, RMSNorm, local response norm.
//
// FLOP conventions (documented in docs/counting.md; normalisation is memory-bound, so these matter little):
//   training forward: statistics 3/element (add for the mean; subtract, square-add for the variance),
//   normalise 2/element, affine 2/element; backward-data 8/element; backward-weight 2/element (γ, β sums).
#pragma once

#include <roofplan/layers/detail_per_element.hpp>

namespace roofplan::layers {

struct BatchNorm2dConfig {
    std::int64_t channels = 0, height = 0, width = 0;
    bool affine = true;
};

/// Batch normalisation over C channels of a C×H×W map.  params = 2·C (γ, β); the running mean and variance
/// are buffers, not parameters (as torch counts them).  Forward reads the input twice (statistics, normalise).
class BatchNorm2d : public detail::PerElement<BatchNorm2dConfig> {
public:
    using Config = BatchNorm2dConfig;
    static constexpr std::string_view type_name = "batchnorm2d";

    constexpr explicit BatchNorm2d(const Config& config)
        : PerElement(config, detail::feature_map(config.channels, config.height, config.width, type_name),
                     {.forward_flops = config.affine ? 7 : 5, .forward_reads = 2, .backward_flops = 8,
                      .backward_reads = 2, .backward_writes = 1},  // reads dy and x, writes dx
                     config.affine ? 2 * config.channels : 0) {}

    static constexpr auto describe() {
        return detail::feature_map_description(type_name, &Config::channels, &Config::height, &Config::width,
                                               field("affine", "", &Config::affine, "γ and β, default 1"));
    }
};

template <>
struct Explain<BatchNorm2d> {
    static void params(Derivation& d, const BatchNorm2d& layer) {
        const std::int64_t channels = layer.config().channels;
        if (layer.config().affine)
            d.checked("params", "params", "2·C", "2·" + num(channels), 2 * channels, layer.params(), "",
                      "γ and β per channel (running statistics are buffers)");
        else
            d.count("params", "params", "", "", 0, "", "no affine γ, β");
    }
};

struct LayerNormConfig {
    std::int64_t width = 0;
    std::int64_t rows = 1;
    bool affine = true;
};

/// The fields of the normalisations over the last axis: its width and how many vectors (in model files, the input's
/// last axis and the product of the others).
template <class Config>
constexpr std::array<Field<Config>, 2> last_axis_fields() {
    return {field("d", "width", &Config::width, "normalised width").from(Source::input_last).needed(),
            field("rows", "seq", &Config::rows, "vectors per instance, default 1").from(Source::input_rows)};
}

/// Layer normalisation over the last `width` features of `rows` vectors per instance.  params = 2·width.
class LayerNorm : public detail::PerElement<LayerNormConfig> {
public:
    using Config = LayerNormConfig;
    static constexpr std::string_view type_name = "layernorm";

    constexpr explicit LayerNorm(const Config& config)
        : PerElement(config, detail::rows_of(config.width, config.rows, type_name),
                     {.forward_flops = config.affine ? 7 : 5, .backward_flops = 8, .backward_reads = 2,
                      .backward_writes = 1},
                     config.affine ? 2 * config.width : 0) {}

    static constexpr auto describe() {
        return Description<Config, 3>{
            .types = {type_name},
            .fields = join(last_axis_fields<Config>(),
                           std::array{field("affine", "", &Config::affine, "γ and β, default 1")})};
    }
};

template <>
struct Explain<LayerNorm> {
    static void params(Derivation& d, const LayerNorm& layer) {
        const LayerNorm::Config& c = layer.config();
        d.checked("params", "params", c.affine ? "2·d" : "0", c.affine ? "2·" + num(c.width) : "",
                  c.affine ? 2 * c.width : 0, layer.params(), "", "γ and β per feature");
    }
};

struct RMSNormConfig {
    std::int64_t width = 0;
    std::int64_t rows = 1;
};

/// Root-mean-square normalisation (Llama): y = x / rms(x) · γ.  params = width.  Forward: square-add, scale, γ.
class RMSNorm : public detail::PerElement<RMSNormConfig> {
public:
    using Config = RMSNormConfig;
    static constexpr std::string_view type_name = "rmsnorm";

    constexpr explicit RMSNorm(const Config& config)
        : PerElement(config, detail::rows_of(config.width, config.rows, type_name),
                     {.forward_flops = 4, .backward_flops = 6, .backward_reads = 2, .backward_writes = 1},
                     config.width) {}

    static constexpr auto describe() {
        return Description<Config, 2>{.types = {type_name}, .fields = last_axis_fields<Config>()};
    }
};

template <>
struct Explain<RMSNorm> {
    static void params(Derivation& d, const RMSNorm& layer) {
        d.checked("params", "params", "d", num(layer.config().width), layer.config().width, layer.params(), "",
                  "γ per feature");
    }
};

struct LocalResponseNormConfig {
    std::int64_t channels = 0, height = 0, width = 0;
    std::int64_t size = 5;  ///< channels in the neighbourhood
};

/// Local response normalisation across `size` neighbouring channels (AlexNet's original and Caffe's
/// GoogLeNet): b = a / (k + α/n · Σ a²)^β.  No parameters.  FLOPs per element: 2·size (square, add) + 3
/// (scale, power, divide) forward; twice that backward.
class LocalResponseNorm : public detail::PerElement<LocalResponseNormConfig> {
public:
    using Config = LocalResponseNormConfig;
    static constexpr std::string_view type_name = "lrn";

    constexpr explicit LocalResponseNorm(const Config& config)
        : PerElement(config, detail::feature_map(config.channels, config.height, config.width, type_name),
                     {.forward_flops = 2 * config.size + 3, .backward_flops = 4 * config.size + 6,
                      .backward_reads = 3, .backward_writes = 1}) {
        roofplan::detail::require_positive(c_.size, type_name, "size");
    }

    static constexpr auto describe() {
        return detail::feature_map_description(type_name, &Config::channels, &Config::height, &Config::width,
                                               field("size", "", &Config::size, "neighbourhood, default 5"));
    }
};

}  // namespace roofplan::layers

namespace roofplan {
using layers::BatchNorm2d;
using layers::LayerNorm;
using layers::LocalResponseNorm;
using layers::RMSNorm;
}  // namespace roofplan

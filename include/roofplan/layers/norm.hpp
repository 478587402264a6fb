// roofplan/layers/norm.hpp — normalisation layers: BatchNorm2d, LayerNorm, RMSNorm, local response norm.
//
// FLOP conventions (documented in docs/counting.md; normalisation is memory-bound, so these matter little):
//   training forward: statistics 3/element (add for the mean; subtract, square-add for the variance),
//   normalise 2/element, affine 2/element; backward-data 8/element; backward-weight 2/element (γ, β sums).
#pragma once

#include <roofplan/layers/detail_cost.hpp>
#include <roofplan/shape.hpp>

namespace roofplan::layers {

/// Batch normalisation over C channels of a C×H×W map.  params = 2·C (γ, β); the running mean and variance
/// are buffers, not parameters (as torch counts them).
class BatchNorm2d {
public:
    struct Config {
        std::int64_t channels = 0;
        std::int64_t height = 0;
        std::int64_t width = 0;
        bool affine = true;
    };
    static constexpr std::string_view type_name = "batchnorm2d";

    constexpr explicit BatchNorm2d(const Config& config) : c_(config) {
        roofplan::detail::require_positive(c_.channels, "batchnorm2d", "channels");
        roofplan::detail::require_positive(c_.height, "batchnorm2d", "height");
        roofplan::detail::require_positive(c_.width, "batchnorm2d", "width");
        elements_ = detail::mul(c_.channels, c_.height, c_.width);
    }
    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::int64_t params() const { return c_.affine ? 2 * c_.channels : 0; }
    [[nodiscard]] constexpr Shape input_shape() const { return Shape{c_.channels, c_.height, c_.width}; }
    [[nodiscard]] constexpr Shape output_shape() const { return input_shape(); }
    [[nodiscard]] constexpr std::int64_t paper_ops() const { return 0; }
    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const {
        PassCost p = detail::elementwise(batch, elements_, c_.affine ? 7 : 5, 2, 1);  // two reads: stats, normalise
        p.weight_elements_read = params();
        return p;
    }
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const {
        PassCost p = detail::elementwise(batch, elements_, 8, 2, 1);  // reads dy and x, writes dx
        p.weight_elements_read = params();
        return p;
    }
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const {
        if (!c_.affine) return detail::nothing(batch);
        PassCost p = detail::elementwise(batch, elements_, 2, 2, 0);
        p.gradient_elements_written = params();
        return p;
    }

private:
    Config c_;
    std::int64_t elements_ = 0;
};

/// Layer normalisation over the last `width` features of `rows` vectors per instance.  params = 2·width.
class LayerNorm {
public:
    struct Config {
        std::int64_t width = 0;
        std::int64_t rows = 1;
        bool affine = true;
    };
    static constexpr std::string_view type_name = "layernorm";

    constexpr explicit LayerNorm(const Config& config) : c_(config) {
        roofplan::detail::require_positive(c_.width, "layernorm", "width");
        roofplan::detail::require_positive(c_.rows, "layernorm", "rows");
        elements_ = detail::mul(c_.width, c_.rows);
    }
    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::int64_t params() const { return c_.affine ? 2 * c_.width : 0; }
    [[nodiscard]] constexpr Shape input_shape() const {
        return c_.rows == 1 ? Shape{c_.width} : Shape{c_.rows, c_.width};
    }
    [[nodiscard]] constexpr Shape output_shape() const { return input_shape(); }
    [[nodiscard]] constexpr std::int64_t paper_ops() const { return 0; }
    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const {
        PassCost p = detail::elementwise(batch, elements_, c_.affine ? 7 : 5, 1, 1);
        p.weight_elements_read = params();
        return p;
    }
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const {
        PassCost p = detail::elementwise(batch, elements_, 8, 2, 1);
        p.weight_elements_read = params();
        return p;
    }
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const {
        if (!c_.affine) return detail::nothing(batch);
        PassCost p = detail::elementwise(batch, elements_, 2, 2, 0);
        p.gradient_elements_written = params();
        return p;
    }

private:
    Config c_;
    std::int64_t elements_ = 0;
};

/// Root-mean-square normalisation (Llama): y = x / rms(x) · γ.  params = width.
class RMSNorm {
public:
    struct Config {
        std::int64_t width = 0;
        std::int64_t rows = 1;
    };
    static constexpr std::string_view type_name = "rmsnorm";

    constexpr explicit RMSNorm(const Config& config) : c_(config) {
        roofplan::detail::require_positive(c_.width, "rmsnorm", "width");
        roofplan::detail::require_positive(c_.rows, "rmsnorm", "rows");
        elements_ = detail::mul(c_.width, c_.rows);
    }
    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::int64_t params() const { return c_.width; }
    [[nodiscard]] constexpr Shape input_shape() const {
        return c_.rows == 1 ? Shape{c_.width} : Shape{c_.rows, c_.width};
    }
    [[nodiscard]] constexpr Shape output_shape() const { return input_shape(); }
    [[nodiscard]] constexpr std::int64_t paper_ops() const { return 0; }
    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const {  // square-add, scale, γ
        PassCost p = detail::elementwise(batch, elements_, 4, 1, 1);
        p.weight_elements_read = params();
        return p;
    }
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const {
        PassCost p = detail::elementwise(batch, elements_, 6, 2, 1);
        p.weight_elements_read = params();
        return p;
    }
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const {
        PassCost p = detail::elementwise(batch, elements_, 2, 2, 0);
        p.gradient_elements_written = params();
        return p;
    }

private:
    Config c_;
    std::int64_t elements_ = 0;
};

/// Local response normalisation across `size` neighbouring channels (AlexNet's original and Caffe's
/// GoogLeNet): b = a / (k + α/n · Σ a²)^β.  No parameters.  FLOPs per element: 2·size (square, add) + 3
/// (scale, power, divide) forward; twice that backward.
class LocalResponseNorm {
public:
    struct Config {
        std::int64_t channels = 0;
        std::int64_t height = 0;
        std::int64_t width = 0;
        std::int64_t size = 5;
    };
    static constexpr std::string_view type_name = "lrn";

    constexpr explicit LocalResponseNorm(const Config& config) : c_(config) {
        roofplan::detail::require_positive(c_.channels, "lrn", "channels");
        roofplan::detail::require_positive(c_.height, "lrn", "height");
        roofplan::detail::require_positive(c_.width, "lrn", "width");
        roofplan::detail::require_positive(c_.size, "lrn", "size");
        elements_ = detail::mul(c_.channels, c_.height, c_.width);
    }
    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::int64_t params() const { return 0; }
    [[nodiscard]] constexpr Shape input_shape() const { return Shape{c_.channels, c_.height, c_.width}; }
    [[nodiscard]] constexpr Shape output_shape() const { return input_shape(); }
    [[nodiscard]] constexpr std::int64_t paper_ops() const { return 0; }
    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const {
        return detail::elementwise(batch, elements_, 2 * c_.size + 3, 1, 1);
    }
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const {
        return detail::elementwise(batch, elements_, 4 * c_.size + 6, 3, 1);
    }
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const { return detail::nothing(batch); }

private:
    Config c_;
    std::int64_t elements_ = 0;
};

}  // namespace roofplan::layers

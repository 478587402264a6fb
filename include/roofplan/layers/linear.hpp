// roofplan/layers/linear.hpp — fully connected (dense) layer.
#pragma once

#include <roofplan/layers/detail_cost.hpp>
#include <roofplan/shape.hpp>

namespace roofplan::layers {

/// y = x·Wᵀ + b over `rows` vectors per instance (rows = 1 for a classifier, the sequence length in a
/// transformer).  params = out·(in+1) with bias; the paper's operations per instance = rows·(in+1)·out
/// (a multiply-add counts one, the bias one), so Γ = ops·B / params = B·rows.
/// Example: `Linear{{.in_features = 4096, .out_features = 1000}}.params() == 4'097'000`.
/// `tied = true` shares its weight with another layer (GPT-2's LM head): it costs work but owns no parameters.
class Linear {
public:
    struct Config {
        std::int64_t in_features = 0;
        std::int64_t out_features = 0;
        bool bias = true;
        std::int64_t rows = 1;
        bool tied = false;
    };
    static constexpr std::string_view type_name = "linear";

    constexpr explicit Linear(const Config& config) : c_(config) {
        roofplan::detail::require_positive(c_.in_features, "linear", "in_features");
        roofplan::detail::require_positive(c_.out_features, "linear", "out_features");
        roofplan::detail::require_positive(c_.rows, "linear", "rows");
        weights_ = detail::mul(c_.in_features, c_.out_features, "linear weights");
        (void)detail::mul(weights_, c_.rows, "linear MACs");
    }

    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::int64_t params() const {
        return c_.tied ? 0 : weights_ + (c_.bias ? c_.out_features : 0);
    }
    [[nodiscard]] constexpr Shape input_shape() const {
        return c_.rows == 1 ? Shape{c_.in_features} : Shape{c_.rows, c_.in_features};
    }
    [[nodiscard]] constexpr Shape output_shape() const {
        return c_.rows == 1 ? Shape{c_.out_features} : Shape{c_.rows, c_.out_features};
    }
    [[nodiscard]] constexpr std::int64_t paper_ops() const {
        return detail::mul(c_.rows, c_.in_features + (c_.bias ? 1 : 0), c_.out_features);
    }

    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        const std::int64_t m = detail::mul(batch, c_.rows, "linear rows");
        PassCost p;
        p.macs = units::macs(detail::mul(m, weights_, "linear MACs"));
        p.vector_flops = units::flops(c_.bias ? detail::mul(m, c_.out_features) : 0);
        p.weight_elements_read = weights_ + (c_.bias ? c_.out_features : 0);
        p.activation_elements_read = detail::mul(m, c_.in_features);
        p.activation_elements_written = detail::mul(m, c_.out_features);
        p.gemm = {m, c_.out_features, c_.in_features, 1};
        return p;
    }
    /// dX = dY·W: same MACs as forward.
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        const std::int64_t m = detail::mul(batch, c_.rows, "linear rows");
        PassCost p;
        p.macs = units::macs(detail::mul(m, weights_, "linear MACs"));
        p.weight_elements_read = weights_;
        p.activation_elements_read = detail::mul(m, c_.out_features);
        p.activation_elements_written = detail::mul(m, c_.in_features);
        p.gemm = {m, c_.in_features, c_.out_features, 1};
        return p;
    }
    /// dW = dYᵀ·X (same MACs as forward) and db = Σ dY.
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        const std::int64_t m = detail::mul(batch, c_.rows, "linear rows");
        PassCost p;
        p.macs = units::macs(detail::mul(m, weights_, "linear MACs"));
        p.vector_flops = units::flops(c_.bias ? detail::mul(m, c_.out_features) : 0);
        p.activation_elements_read = detail::mul(m, c_.in_features) + detail::mul(m, c_.out_features);
        p.gradient_elements_written = weights_ + (c_.bias ? c_.out_features : 0);
        p.gemm = {c_.out_features, c_.in_features, m, 1};
        return p;
    }

private:
    Config c_;
    std::int64_t weights_ = 0;
};

}  // namespace roofplan::layers

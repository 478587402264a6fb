// roofplan/layers/linear.hpp — fully connected (dense) layer.
#pragma once

#include <roofplan/layers/describe.hpp>
#include <roofplan/layers/detail_cost.hpp>
#include <roofplan/layers/explain.hpp>
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

    /// In model files the input's last axis is in_features and the product of the others the rows.
    static constexpr auto describe() {
        return Description<Config, 5>{
            .types = {type_name},
            .fields = {field("in", "in_features", &Config::in_features, "input features")
                           .from(Source::input_last)
                           .needed(),
                       field("out", "out_features", &Config::out_features, "output features").needed(),
                       field("rows", "seq", &Config::rows, "vectors per instance (sequence length), default 1")
                           .from(Source::input_rows),
                       field("bias", "", &Config::bias, "bias, default 1"),
                       field("tied", "", &Config::tied, "shares another layer's weight, default 0")
                           .written_when_set()}};
    }

private:
    Config c_;
    std::int64_t weights_ = 0;
};

template <>
struct Explain<Linear> {
    static void steps(Derivation& d, const Linear& layer) {
        const Linear::Config& c = layer.config();
        const bool rows = c.rows != 1;
        const std::string per_row = rows ? num(c.rows) + "·" : "";
        output_step(d, layer, rows ? "rows×out" : "out");
        d.section("parameters");
        if (c.tied)
            d.count("params", "params", "", "", 0, "", "the weight is tied to another layer's; it owns none");
        else if (c.bias)
            d.checked("params", "params", "out·(in + 1)", num(c.out_features) + "·(" + num(c.in_features) + " + 1)",
                      c.out_features * (c.in_features + 1), layer.params(), "", "weights plus one bias per output");
        else
            d.checked("params", "params", "out·in", num(c.out_features) + "·" + num(c.in_features),
                      c.out_features * c.in_features, layer.params(), "", "no bias");
        d.section("operations per instance");
        d.checked("macs_per_instance", "MACs", rows ? "rows·in·out" : "in·out",
                  per_row + num(c.in_features) + "·" + num(c.out_features), c.rows * c.in_features * c.out_features,
                  layer.forward(1).macs.value(), "", "one multiply-add per weight per input vector");
        if (c.bias)
            d.checked("vector_flops_per_instance", "bias adds", rows ? "rows·out" : "out",
                      per_row + num(c.out_features), c.rows * c.out_features, layer.forward(1).vector_flops.value(),
                      "FLOP");
        d.checked("paper_ops", "paper ops", std::string(rows ? "rows·" : "") + (c.bias ? "(in + 1)·out" : "in·out"),
                  per_row + (c.bias ? "(" + num(c.in_features) + " + 1)·" + num(c.out_features)
                                    : num(c.in_features) + "·" + num(c.out_features)),
                  c.rows * (c.in_features + (c.bias ? 1 : 0)) * c.out_features, layer.paper_ops(), "",
                  "the paper's count: a multiply-add is 1, a bias add 1");
    }
    static ClosedForm gamma(const Linear& layer, std::int64_t batch) {
        return {" = B·rows", " = " + num(batch) + "·" + num(layer.config().rows)};
    }
    static std::optional<PassMacs> pass_macs(const Linear& layer, Pass pass, std::int64_t instances) {
        return backward_macs_again(layer, pass, instances, "dX = dY·W: the forward MACs again",
                                   "dW = dYᵀ·X: the forward MACs again");
    }
};

}  // namespace roofplan::layers

namespace roofplan {
using layers::Linear;
}  // namespace roofplan

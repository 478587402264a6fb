// roofplan/layers/matmul.hpp — a batched product of two activations (attention's Q·Kᵀ and P·V as an ONNX graph
// spells them out), without weights.
#pragma once

#include <roofplan/layers/describe.hpp>
#include <roofplan/layers/detail_cost.hpp>
#include <roofplan/layers/explain.hpp>
#include <roofplan/shape.hpp>

namespace roofplan::layers {

/// C[i] = A[i]·B[i] for i < `count` products per instance, A: m×k, B: k×n, both activations (no parameters).
/// MACs per instance = count·m·k·n.  Backward computes both input gradients (dA = dC·Bᵀ, dB = Aᵀ·dC): twice
/// the forward MACs; there is no weight gradient.
/// Example: the attention scores of 12 heads over 128 tokens of width 64:
///   `MatMul{{.count = 12, .m = 128, .k = 64, .n = 128}}` costs 12,582,912 MACs per instance.
/// A causal attention product (`causal` 1: the scores, keys along n; 2: the context P·V, keys along k) computes
/// only the (query, key) pairs the mask keeps, as fused attention kernels do: m·(keys − m) + m(m+1)/2 pairs instead
/// of m·keys (the attention layer's rule), times the other extent.
class MatMul {
public:
    struct Config {
        std::int64_t count = 1;
        std::int64_t m = 0;
        std::int64_t k = 0;
        std::int64_t n = 0;
        std::int64_t causal = 0;  ///< 0: a full product; 1: causal scores (keys along n); 2: causal context (along k)
    };
    static constexpr std::string_view type_name = "matmul";

    constexpr explicit MatMul(const Config& config) : c_(config) {
        roofplan::detail::require_positive(c_.count, "matmul", "count");
        roofplan::detail::require_positive(c_.m, "matmul", "m");
        roofplan::detail::require_positive(c_.k, "matmul", "k");
        roofplan::detail::require_positive(c_.n, "matmul", "n");
        a_ = detail::mul(c_.count, c_.m, c_.k);
        b_ = detail::mul(c_.count, c_.k, c_.n);
        c_elements_ = detail::mul(c_.count, c_.m, c_.n);
        macs_ = c_.causal == 0 ? detail::mul(c_elements_, c_.k, "matmul MACs") : causal_macs();
    }

    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::int64_t params() const { return 0; }
    [[nodiscard]] constexpr Shape input_shape() const {
        return c_.count == 1 ? Shape{c_.m, c_.k} : Shape{c_.count, c_.m, c_.k};
    }
    [[nodiscard]] constexpr Shape output_shape() const {
        return c_.count == 1 ? Shape{c_.m, c_.n} : Shape{c_.count, c_.m, c_.n};
    }
    /// The paper's rule: one operation per multiply-add.
    [[nodiscard]] constexpr std::int64_t paper_ops() const { return macs_; }

    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.macs = units::macs(detail::mul(batch, macs_, "matmul MACs"));
        p.activation_elements_read = detail::mul(batch, a_ + b_);
        p.activation_elements_written = detail::mul(batch, c_elements_);
        p.gemm = {c_.m, c_.n, c_.k, detail::mul(batch, c_.count)};
        return p;
    }
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.macs = units::macs(detail::mul(batch, 2 * macs_, "matmul MACs"));
        p.activation_elements_read = detail::mul(batch, c_elements_ * 2 + a_ + b_);
        p.activation_elements_written = detail::mul(batch, a_ + b_);
        p.gemm = {c_.m, c_.k, c_.n, detail::mul(batch, c_.count)};
        return p;
    }
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const { return detail::nothing(batch); }

    /// Model files give the product's extents (its two inputs are not the running shape).
    static constexpr auto describe() {
        return Description<Config, 5>{
            .types = {type_name},
            .fields = {field("count", "", &Config::count, "products per instance (heads), default 1"),
                       field("m", "", &Config::m, "rows of A and C").needed(),
                       field("k", "", &Config::k, "columns of A, rows of B").needed(),
                       field("n", "", &Config::n, "columns of B and C").needed(),
                       field("causal", "", &Config::causal,
                             "causal attention product: 0 full (default), 1 scores (keys along n), 2 context "
                             "(keys along k)").in_range(0, 2)}};
    }

private:
    /// The pairs a causal mask keeps (m queries, `keys` keys, the queries the last ones) times the other extent.
    [[nodiscard]] constexpr std::int64_t causal_macs() const {
        if (c_.causal != 1 && c_.causal != 2)
            roofplan::detail::fail("matmul: causal must be 0 (a full product), 1 (scores: keys along n) or 2 "
                                   "(context: keys along k), got ", c_.causal);
        const std::int64_t keys = c_.causal == 1 ? c_.n : c_.k;
        const std::int64_t other = c_.causal == 1 ? c_.k : c_.n;
        if (keys < c_.m)
            roofplan::detail::fail("matmul: a causal product needs as many keys (", keys, ") as queries m (", c_.m,
                                   ")");
        const std::int64_t pairs = detail::mul(c_.m, keys - c_.m) + detail::mul(c_.m, c_.m + 1) / 2;
        return detail::mul(detail::mul(c_.count, pairs), other, "matmul MACs");
    }

    Config c_;
    std::int64_t a_ = 0;
    std::int64_t b_ = 0;
    std::int64_t c_elements_ = 0;
    std::int64_t macs_ = 0;
};

template <>
struct Explain<MatMul> {
    static void steps(Derivation& d, const MatMul& layer) {
        const MatMul::Config& c = layer.config();
        const bool batched = c.count != 1;
        output_step(d, layer, batched ? "count×m×n" : "m×n");
        d.section("parameters");
        params_step(d, layer);
        d.section("operations per instance");
        if (c.causal == 0) {
            d.checked("macs_per_instance", "MACs", batched ? "count·m·k·n" : "m·k·n",
                      (batched ? num(c.count) + "·" : "") + num(c.m) + "·" + num(c.k) + "·" + num(c.n),
                      c.count * c.m * c.k * c.n, layer.forward(1).macs.value(), "", "A·B of two activations");
        } else {
            const std::int64_t keys = c.causal == 1 ? c.n : c.k, other = c.causal == 1 ? c.k : c.n;
            const std::int64_t pairs = c.m * (keys - c.m) + c.m * (c.m + 1) / 2;
            d.checked("macs_per_instance", "MACs", "count·(m·(keys−m) + m(m+1)/2)·" + std::string(c.causal == 1 ? "k" : "n"),
                      num(c.count) + "·" + num(pairs) + "·" + num(other), c.count * pairs * other,
                      layer.forward(1).macs.value(), "", "the (query, key) pairs a causal mask keeps");
        }
        d.count("paper_ops", "paper ops", "MACs", "", layer.paper_ops(), "", "one operation per multiply-add");
    }
    /// Both inputs are activations: two products, twice the forward MACs; there is no weight gradient.
    static std::optional<PassMacs> pass_macs(const MatMul& layer, Pass pass, std::int64_t instances) {
        if (pass != Pass::backward_data) return std::nullopt;
        const std::int64_t forward = layer.forward(1).macs.value();
        return PassMacs{"B·2·MACs", num(instances) + "·2·" + num(forward), instances * 2 * forward,
                        "dA = dC·Bᵀ and dB = Aᵀ·dC: twice the forward MACs"};
    }
};

}  // namespace roofplan::layers

namespace roofplan {
using layers::MatMul;
}  // namespace roofplan

// roofplan/layers/attention.hpp — multi-head (and grouped-query) attention, projections included.
#pragma once

#include <roofplan/layers/describe.hpp>
#include <roofplan/layers/detail_cost.hpp>
#include <roofplan/layers/explain.hpp>
#include <roofplan/shape.hpp>

namespace roofplan::layers {

/// Multi-head attention with its four projections, as one layer:
///   Q = X·Wq (d → heads·head_dim), K = X·Wk and V = X·Wv (d → kv_heads·head_dim), scores S = Q·Kᵀ/√head_dim,
///   P = softmax(S) (optionally causal), context = P·V, out = context·Wo (heads·head_dim → d).
/// kv_heads < heads is grouped-query attention (kv_heads = 1: multi-query).  `rotary` applies rotary position
/// embeddings to Q and K.  Per instance the cost is the projections, which are linear in the length, plus
/// the score and context products, 2·heads·pairs·head_dim MACs, where pairs = q_len·kv_len (causal: only the
/// unmasked pairs) — the quadratic term.
/// Softmax is counted as 5 FLOP per score (max, subtract, exp, sum, divide) plus 1 for the 1/√d scaling.
class MultiHeadAttention {
public:
    struct Config {
        std::int64_t model_dim = 0;   ///< d, width of the input and the output
        std::int64_t heads = 0;
        std::int64_t head_dim = 0;    ///< 0 = model_dim / heads
        std::int64_t kv_heads = 0;    ///< 0 = heads (plain multi-head attention)
        std::int64_t q_len = 0;
        std::int64_t kv_len = 0;      ///< 0 = q_len (self-attention)
        bool causal = false;
        bool bias = true;
        bool rotary = false;
        double dropout = 0;           ///< dropout on the attention probabilities (training), in [0, 1)
        bool fused_qkv = false;       ///< one GEMM computes Q, K and V (GPT-2's c_attn); self-attention only
    };
    static constexpr std::string_view type_name = "attention";
    static constexpr std::int64_t softmax_flops_per_score = 6;

    constexpr explicit MultiHeadAttention(const Config& config) : c_(config) {
        using roofplan::detail::fail;
        using roofplan::detail::require_positive;
        require_positive(c_.model_dim, "attention", "model_dim");
        require_positive(c_.heads, "attention", "heads");
        require_positive(c_.q_len, "attention", "q_len");
        if (!(c_.dropout >= 0.0 && c_.dropout < 1.0)) fail("attention: dropout must be in [0, 1)");
        if (c_.fused_qkv && c_.kv_len != 0 && c_.kv_len != c_.q_len)
            fail("attention: fused_qkv needs self-attention (kv_len = seq), got kv_len ", c_.kv_len, " and seq ", c_.q_len);
        if (c_.kv_len == 0) c_.kv_len = c_.q_len;
        require_positive(c_.kv_len, "attention", "kv_len");
        if (c_.head_dim == 0) {
            if (c_.model_dim % c_.heads != 0)
                fail("attention: heads (", c_.heads, ") must divide model_dim (", c_.model_dim,
                     ") when head_dim is not given");
            c_.head_dim = c_.model_dim / c_.heads;
        }
        require_positive(c_.head_dim, "attention", "head_dim");
        if (c_.kv_heads == 0) c_.kv_heads = c_.heads;
        require_positive(c_.kv_heads, "attention", "kv_heads");
        if (c_.heads % c_.kv_heads != 0)
            fail("attention: kv_heads (", c_.kv_heads, ") must divide heads (", c_.heads, ")");
        if (c_.causal && c_.kv_len < c_.q_len)
            fail("attention: a causal mask needs kv_len (", c_.kv_len, ") >= q_len (", c_.q_len, ")");
        q_width_ = detail::mul(c_.heads, c_.head_dim, "attention width");
        kv_width_ = detail::mul(c_.kv_heads, c_.head_dim, "attention width");
        // Unmasked (query, key) pairs.  Causal: query i (0-based) sees keys 0 .. i + (kv_len - q_len).
        pairs_ = c_.causal ? detail::mul(c_.q_len, c_.kv_len - c_.q_len) + c_.q_len * (c_.q_len + 1) / 2
                           : detail::mul(c_.q_len, c_.kv_len, "attention scores");
        projection_macs_ = detail::add(detail::mul(c_.q_len, c_.model_dim, q_width_ * 2),
                                       detail::mul(c_.kv_len, c_.model_dim, kv_width_ * 2), "attention MACs");
        core_macs_ = detail::mul(2 * c_.heads, pairs_, c_.head_dim);
        (void)detail::add(projection_macs_, core_macs_, "attention MACs");
    }

    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::int64_t score_pairs() const { return pairs_; }
    [[nodiscard]] constexpr std::int64_t params() const {
        const std::int64_t d = c_.model_dim;
        std::int64_t p = 2 * detail::mul(d, q_width_) + 2 * detail::mul(d, kv_width_);
        if (c_.bias) p += q_width_ + 2 * kv_width_ + d;
        return p;
    }
    [[nodiscard]] constexpr Shape input_shape() const { return Shape{c_.q_len, c_.model_dim}; }
    [[nodiscard]] constexpr Shape output_shape() const { return Shape{c_.q_len, c_.model_dim}; }
    /// Projection MACs (Q, K, V, O) per instance.
    [[nodiscard]] constexpr std::int64_t projection_macs() const { return projection_macs_; }
    /// Q·Kᵀ plus P·V MACs per instance (the term quadratic in sequence length).
    [[nodiscard]] constexpr std::int64_t core_macs() const { return core_macs_; }
    /// Paper's rule: MACs plus one operation per bias element added.
    [[nodiscard]] constexpr std::int64_t paper_ops() const {
        return projection_macs_ + core_macs_ + (c_.bias ? bias_adds() : 0);
    }

    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.macs = units::macs(detail::mul(batch, projection_macs_ + core_macs_, "attention MACs"));
        const std::int64_t scores = detail::mul(c_.heads, pairs_);
        std::int64_t vector = detail::mul(scores, softmax_flops_per_score);
        if (c_.bias) vector += bias_adds();
        if (c_.rotary) vector += 3 * (detail::mul(c_.q_len, q_width_) + detail::mul(c_.kv_len, kv_width_));
        p.vector_flops = units::flops(detail::mul(batch, vector));
        p.weight_elements_read = params();
        // Unfused kernels: projections read X (3×) and write Q, K, V; scores write S; softmax reads S, writes
        // P; P·V reads P and V, writes the context; the output projection reads it and writes the output.
        const std::int64_t x = detail::mul(c_.q_len, c_.model_dim);
        const std::int64_t xkv = detail::mul(c_.kv_len, c_.model_dim);
        const std::int64_t q = detail::mul(c_.q_len, q_width_);
        const std::int64_t kv = detail::mul(c_.kv_len, kv_width_);
        p.activation_elements_read = detail::mul(batch, x + 2 * xkv + q + kv + scores + scores + kv + q);
        p.activation_elements_written = detail::mul(batch, q + 2 * kv + scores + scores + q + x);
        p.gemm = {detail::mul(batch, c_.q_len), q_width_, c_.model_dim, 1};
        return p;
    }
    /// dX through the projections (their MACs again) and the four products of the attention core
    /// (dP = dC·Vᵀ, dV = Pᵀ·dC, dQ = dS·K, dK = dSᵀ·Q: twice the core's forward MACs).
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.macs = units::macs(detail::mul(batch, projection_macs_ + 2 * core_macs_, "attention MACs"));
        const std::int64_t scores = detail::mul(c_.heads, pairs_);
        p.vector_flops = units::flops(detail::mul(batch, detail::mul(scores, softmax_flops_per_score)));
        p.weight_elements_read = params() - (c_.bias ? q_width_ + 2 * kv_width_ + c_.model_dim : 0);
        const std::int64_t x = detail::mul(c_.q_len, c_.model_dim);
        const std::int64_t xkv = detail::mul(c_.kv_len, c_.model_dim);
        const std::int64_t q = detail::mul(c_.q_len, q_width_);
        const std::int64_t kv = detail::mul(c_.kv_len, kv_width_);
        p.activation_elements_read = detail::mul(batch, x + q + 2 * kv + 3 * scores + q + 2 * kv);
        p.activation_elements_written = detail::mul(batch, q + 2 * scores + q + 2 * kv + x + 2 * xkv);
        p.gemm = {detail::mul(batch, c_.q_len), c_.model_dim, q_width_, 1};
        return p;
    }
    /// Weight gradients of the four projections (their forward MACs) and of their biases.
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.macs = units::macs(detail::mul(batch, projection_macs_, "attention MACs"));
        p.vector_flops = units::flops(c_.bias ? detail::mul(batch, bias_adds()) : 0);
        const std::int64_t x = detail::mul(c_.q_len, c_.model_dim);
        const std::int64_t xkv = detail::mul(c_.kv_len, c_.model_dim);
        const std::int64_t q = detail::mul(c_.q_len, q_width_);
        const std::int64_t kv = detail::mul(c_.kv_len, kv_width_);
        p.activation_elements_read = detail::mul(batch, x + 2 * xkv + q + 2 * kv + q + x);
        p.gradient_elements_written = params();
        p.gemm = {q_width_, c_.model_dim, detail::mul(batch, c_.q_len), 1};
        return p;
    }

    /// In model files the input is [sequence, width].
    static constexpr auto describe() {
        return Description<Config, 11>{
            .types = {type_name},
            .input = {2, "[sequence, width]"},
            .fields = {field("d", "model_dim", &Config::model_dim, "model width").from(Source::input_axis1).needed(),
                       field("heads", "", &Config::heads, "attention heads").needed(),
                       field("seq", "q_len", &Config::q_len, "query length").from(Source::input_axis0).needed(),
                       field("kv_len", "", &Config::kv_len, "key length, default seq").at_least(0),
                       field("head_dim", "", &Config::head_dim, "width per head, default d/heads").at_least(0),
                       field("kv_heads", "", &Config::kv_heads, "key/value heads (GQA), default heads").at_least(0),
                       field("causal", "", &Config::causal, "causal mask, default 0"),
                       field("bias", "", &Config::bias, "projection biases, default 1"),
                       field("rotary", "", &Config::rotary, "rotary embeddings, default 0"),
                       field("dropout", "", &Config::dropout, "attention-probability dropout, default 0").in_range(0, 1),
                       field("fused_qkv", "", &Config::fused_qkv, "one GEMM for Q, K and V, default 0")}};
    }

private:
    [[nodiscard]] constexpr std::int64_t bias_adds() const {
        return c_.q_len * (q_width_ + c_.model_dim) + 2 * c_.kv_len * kv_width_;
    }

    Config c_;
    std::int64_t q_width_ = 0;
    std::int64_t kv_width_ = 0;
    std::int64_t pairs_ = 0;
    std::int64_t projection_macs_ = 0;
    std::int64_t core_macs_ = 0;
};

template <>
struct Explain<MultiHeadAttention> {
    static void steps(Derivation& d, const MultiHeadAttention& layer) {
        const MultiHeadAttention::Config& c = layer.config();
        output_step(d, layer, "seq×d");
        d.count("head_dim", "dh", "", "", c.head_dim, "", "width per head (d/heads unless given)");
        params(d, layer);
        d.section("operations per instance");
        if (c.causal)
            d.checked("score_pairs", "pairs", "L·(Lkv − L) + L·(L + 1)/2",
                      num(c.q_len) + "·(" + num(c.kv_len) + " − " + num(c.q_len) + ") + " + num(c.q_len) + "·(" +
                          num(c.q_len) + " + 1)/2",
                      c.q_len * (c.kv_len - c.q_len) + c.q_len * (c.q_len + 1) / 2, layer.score_pairs(), "",
                      "(query, key) pairs the causal mask keeps");
        else
            d.checked("score_pairs", "pairs", "L·Lkv", num(c.q_len) + "·" + num(c.kv_len), c.q_len * c.kv_len,
                      layer.score_pairs(), "", "(query, key) pairs");
        work(d, layer);
    }
    static std::optional<PassMacs> pass_macs(const MultiHeadAttention& layer, Pass pass, std::int64_t instances) {
        const std::int64_t projections = layer.projection_macs(), core = layer.core_macs();
        if (pass == Pass::backward_data)
            return PassMacs{"B·(projections + 2·(QKᵀ + P·V))",
                            num(instances) + "·(" + num(projections) + " + 2·" + num(core) + ")",
                            instances * (projections + 2 * core),
                            "dX through the projections; dP, dV, dQ, dK: two products per forward one"};
        if (pass == Pass::backward_weight)
            return PassMacs{"B·projections", num(instances) + "·" + num(projections), instances * projections,
                            "weight gradients of the four projections; the score products have no weights"};
        return std::nullopt;
    }

private:
    static void params(Derivation& d, const MultiHeadAttention& layer) {
        const MultiHeadAttention::Config& c = layer.config();
        const std::int64_t qw = c.heads * c.head_dim, kvw = c.kv_heads * c.head_dim;
        d.section("parameters");
        std::string f = "2·d·(h·dh) + 2·d·(hkv·dh)";
        std::string s = "2·" + num(c.model_dim) + "·(" + num(c.heads) + "·" + num(c.head_dim) + ") + 2·" +
                        num(c.model_dim) + "·(" + num(c.kv_heads) + "·" + num(c.head_dim) + ")";
        std::int64_t p = 2 * c.model_dim * qw + 2 * c.model_dim * kvw;
        if (c.bias) {
            f += " + (h·dh + 2·hkv·dh + d)";
            s += " + (" + num(qw) + " + 2·" + num(kvw) + " + " + num(c.model_dim) + ")";
            p += qw + 2 * kvw + c.model_dim;
        }
        d.checked("params", "params", f, s, p, layer.params(), "",
                  "Wq, Wo: d×(h·dh); Wk, Wv: d×(hkv·dh)" + std::string(c.bias ? "; and their biases" : ""));
    }
    /// The projections (linear in the length), the score and context products (quadratic), the rest.
    static void work(Derivation& d, const MultiHeadAttention& layer) {
        const MultiHeadAttention::Config& c = layer.config();
        const std::int64_t qw = c.heads * c.head_dim, kvw = c.kv_heads * c.head_dim;
        d.checked("projection_macs", "projections", "L·d·2·(h·dh) + Lkv·d·2·(hkv·dh)",
                  num(c.q_len) + "·" + num(c.model_dim) + "·2·" + num(qw) + " + " + num(c.kv_len) + "·" +
                      num(c.model_dim) + "·2·" + num(kvw),
                  c.q_len * c.model_dim * 2 * qw + c.kv_len * c.model_dim * 2 * kvw, layer.projection_macs(), "MACs",
                  "Q and O over the queries, K and V over the keys: linear in the length");
        d.checked("core_macs", "QKᵀ + P·V", "2·h·pairs·dh",
                  "2·" + num(c.heads) + "·" + num(layer.score_pairs()) + "·" + num(c.head_dim),
                  2 * c.heads * layer.score_pairs() * c.head_dim, layer.core_macs(), "MACs",
                  "scores and context: quadratic in the length");
        d.checked("macs_per_instance", "MACs", "projections + QKᵀ + P·V",
                  num(layer.projection_macs()) + " + " + num(layer.core_macs()),
                  layer.projection_macs() + layer.core_macs(), layer.forward(1).macs.value());
        d.count("vector_flops_per_instance", "vector FLOPs",
                "6·h·pairs + bias adds" + std::string(c.rotary ? " + rotary" : ""), "",
                layer.forward(1).vector_flops.value(), "FLOP", "softmax 5 and 1/√dh scaling 1 per score");
        d.count("paper_ops", "paper ops", "MACs + bias adds", "", layer.paper_ops(), "",
                "the paper's count: a multiply-add is 1, a bias add 1");
    }
};

/// Additive (Bahdanau) attention core, as GNMT uses it: score(q, k) = vᵀ·tanh(keys + W·q + b) (with
/// `normalized`, v is rescaled by g/‖v‖), alignments = softmax over the memory, context = Σ alignment·memory.
/// The key and query projections are separate Linear layers; this layer counts, per (query, memory) pair,
/// `units` MACs for vᵀ·tanh(…) and `memory_width` MACs for the context, plus 6 FLOP per pair and unit
/// (two adds, tanh) and the softmax (5 per pair).  params = v, b and (normalized) the scalar g.
class AdditiveAttention {
public:
    struct Config {
        std::int64_t query_len = 0;
        std::int64_t memory_len = 0;
        std::int64_t units = 0;
        std::int64_t memory_width = 0;
        bool normalized = true;
    };
    static constexpr std::string_view type_name = "additive_attention";

    constexpr explicit AdditiveAttention(const Config& config) : c_(config) {
        using roofplan::detail::require_positive;
        require_positive(c_.query_len, "additive_attention", "query_len");
        require_positive(c_.memory_len, "additive_attention", "memory_len");
        require_positive(c_.units, "additive_attention", "units");
        require_positive(c_.memory_width, "additive_attention", "memory_width");
        pairs_ = detail::mul(c_.query_len, c_.memory_len, "attention pairs");
        macs_ = detail::mul(pairs_, c_.units + c_.memory_width, "attention MACs");
    }
    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::int64_t params() const { return 2 * c_.units + (c_.normalized ? 1 : 0); }
    [[nodiscard]] constexpr Shape input_shape() const { return Shape{c_.query_len, c_.units}; }
    [[nodiscard]] constexpr Shape output_shape() const { return Shape{c_.query_len, c_.memory_width}; }
    [[nodiscard]] constexpr std::int64_t paper_ops() const { return macs_; }
    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.macs = units::macs(detail::mul(batch, macs_));
        p.vector_flops = units::flops(detail::mul(batch, detail::mul(pairs_, 6 * c_.units) + 5 * pairs_));
        p.weight_elements_read = params();
        p.activation_elements_read =
            detail::mul(batch, detail::mul(c_.memory_len, c_.units + c_.memory_width) + c_.query_len * c_.units);
        p.activation_elements_written = detail::mul(batch, 2 * pairs_ + c_.query_len * c_.memory_width);
        p.gemm = {detail::mul(batch, c_.query_len), c_.memory_width, c_.memory_len, 1};
        return p;
    }
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.macs = units::macs(detail::mul(batch, 2 * macs_));
        p.vector_flops = units::flops(detail::mul(batch, detail::mul(pairs_, 8 * c_.units) + 4 * pairs_));
        p.weight_elements_read = params();
        p.activation_elements_read =
            detail::mul(batch, detail::mul(c_.memory_len, c_.units + c_.memory_width) + 2 * pairs_ +
                                   c_.query_len * c_.memory_width);
        p.activation_elements_written =
            detail::mul(batch, detail::mul(c_.memory_len, c_.units + c_.memory_width) + c_.query_len * c_.units);
        p.gemm = {detail::mul(batch, c_.query_len), c_.memory_len, c_.memory_width, 1};
        return p;
    }
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.vector_flops = units::flops(detail::mul(batch, detail::mul(pairs_, 2 * c_.units)));
        p.activation_elements_read = detail::mul(batch, pairs_ + c_.memory_len * c_.units);
        p.gradient_elements_written = params();
        return p;
    }

    /// In model files the input is the projected queries, [queries, units].
    static constexpr auto describe() {
        return Description<Config, 5>{
            .types = {type_name},
            .input = {2, "[queries, units]"},
            .fields = {field("queries", "query_len", &Config::query_len, "query steps")
                           .from(Source::input_axis0)
                           .needed(),
                       field("memory", "memory_len", &Config::memory_len, "memory steps (keys)").needed(),
                       field("units", "", &Config::units, "attention units").from(Source::input_axis1).needed(),
                       field("width", "memory_width", &Config::memory_width, "memory width (values)").needed(),
                       field("normalized", "", &Config::normalized, "v rescaled by g/‖v‖, default 1")}};
    }

private:
    Config c_;
    std::int64_t pairs_ = 0;
    std::int64_t macs_ = 0;
};

template <>
struct Explain<AdditiveAttention> {
    static void params(Derivation& d, const AdditiveAttention& layer) {
        const AdditiveAttention::Config& c = layer.config();
        d.checked("params", "params", c.normalized ? "2·units + 1" : "2·units",
                  "2·" + num(c.units) + (c.normalized ? " + 1" : ""), 2 * c.units + (c.normalized ? 1 : 0),
                  layer.params(), "", c.normalized ? "v and b per unit, and the scalar g" : "v and b per unit");
    }
};

}  // namespace roofplan::layers

namespace roofplan {
using layers::AdditiveAttention;
using layers::MultiHeadAttention;
}  // namespace roofplan

// roofplan/layers/attention.hpp — multi-head (and grouped-query) attention, projections included.
#pragma once

#include <roofplan/layers/detail_cost.hpp>
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
    };
    static constexpr std::string_view type_name = "attention";
    static constexpr std::int64_t softmax_flops_per_score = 6;

    constexpr explicit MultiHeadAttention(const Config& config) : c_(config) {
        using roofplan::detail::fail;
        using roofplan::detail::require_positive;
        require_positive(c_.model_dim, "attention", "model_dim");
        require_positive(c_.heads, "attention", "heads");
        require_positive(c_.q_len, "attention", "q_len");
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

private:
    Config c_;
    std::int64_t pairs_ = 0;
    std::int64_t macs_ = 0;
};

}  // namespace roofplan::layers

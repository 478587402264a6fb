// roofplan/memory/walk.hpp — the bookkeeping of the memory walk: tensors with reference counts (a tensor is freed
// when its last reference goes, as a torch.Tensor's storage is), the values flowing between layers, what each
// layer saved for its backward, the parameters with their gradients, optimizer state and autocast copies.
//
// The layer rules (memory/rules.hpp) call this; memory/step.hpp drives it through a step.  Everything here runs
// once per model and settings, while the tape is recorded; a replay (memory/tape.hpp) never comes back here.
#pragma once

#include <roofplan/memory/context.hpp>
#include <roofplan/memory/dataflow.hpp>
#include <roofplan/memory/implementation.hpp>
#include <roofplan/memory/tape.hpp>
#include <roofplan/runtime/lowering.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <variant>
#include <vector>

namespace roofplan::memory {

/// How scaled-dot-product attention runs: one fused kernel that keeps Q, K, V, the output and the log-sum-exp
/// (flash, memory-efficient and cuDNN attention alike), or the unfused matmul-softmax-matmul that keeps the scores'
/// probabilities (Hugging Face's attn_implementation="eager").
enum class AttentionKernel : std::uint8_t { fused, unfused };

}  // namespace roofplan::memory

template <>
struct roofplan::EnumNames<roofplan::memory::AttentionKernel> {
    static constexpr std::string_view field = "attention_kernel";
    static constexpr std::string_view what = "attention kernel";
    static constexpr std::array<std::string_view, 2> names{"fused", "unfused"};
};

namespace roofplan::memory {

/// The settings a tape is recorded for.
struct StepSettings {
    Precision precision = Precision::fp32;
    Mode mode = Mode::train;
    Optimizer optimizer = Optimizer::sgd;
    Runtime runtime = Runtime::eager;
    AttentionKernel attention = AttentionKernel::fused;
    bool cudnn_benchmark = true;
    int blas_threads = 0;  ///< threads holding cuBLAS workspaces (0: 2 in training, 1 in inference)
    WorkspaceFigure workspaces{};
    Implementation implementation{};
};

/// A tensor of the walk (an index into Tape::tensors).
using TensorId = std::uint32_t;
inline constexpr TensorId no_tensor = std::numeric_limits<TensorId>::max();

/// A value flowing between layers: the model input or a node's output.
struct Value {
    TensorId tensor = no_tensor;
    DType dtype = DType::f32;
    std::int64_t elements = 0;   ///< per sample (the batch's instances times the node's repeat)
    std::int32_t readers = 0;    ///< forward readers still to come (and a module call holding it: `held`)
    std::int32_t held = 0;       ///< 1 when a Python module call keeps it past its last reader (step.hpp)
    bool needs_grad = false;
    TensorId grad = no_tensor;   ///< backward: its gradient
    TensorId half = no_tensor;   ///< fused runtimes: its FP16/BF16 copy, materialized once for every reader
};

/// A parameter tensor of the model (or a buffer), as the walk tracks it.
struct Parameter {
    std::int64_t numel = 0;
    bool trainable = true;    ///< false: a buffer (BatchNorm's running statistics)
    std::int64_t width = 4;   ///< bytes per element as stored
    TensorId weight = no_tensor, grad = no_tensor;
    std::array<TensorId, 2> state{no_tensor, no_tensor};
    TensorId cast_copy = no_tensor;  ///< this step's autocast copy, while the cache holds it
    bool grad_live = false;
};

/// A node's use of a parameter.
struct ParamUse {
    std::uint32_t param = 0;
    bool cast = false;        ///< autocast casts it to FP16/BF16 for the matrix op that reads it
    bool cast_saved = false;  ///< that op saves the copy for its backward (weights, not biases)
};

/// The step being recorded.
class Walk {
public:
    Walk(Tape& tape, const StepSettings& settings) : tape_(&tape), s_(settings) {
        amp_ = is_mixed(settings.precision);
        compute_ = settings.precision == Precision::int8 ? DType::i8 : amp_ ? DType::half : DType::f32;
    }

    // --- settings ---------------------------------------------------------------------------------------
    [[nodiscard]] const StepSettings& settings() const { return s_; }
    [[nodiscard]] const Implementation& impl() const { return s_.implementation; }
    [[nodiscard]] bool training() const { return s_.mode == Mode::train; }
    [[nodiscard]] bool amp() const { return amp_; }
    [[nodiscard]] bool eager() const { return s_.runtime == Runtime::eager; }
    /// A fusing runtime (compiled, ideal): pointwise chains fused, casts materialized once per tensor.
    [[nodiscard]] bool fused() const { return !eager(); }
    /// An inference engine: weights stored in the compute dtype, no casts.
    [[nodiscard]] bool engine() const { return fused() && !training(); }
    [[nodiscard]] DType compute() const { return compute_; }
    static constexpr std::int64_t width(DType t) { return t == DType::f32 ? 4 : t == DType::half ? 2 : 1; }

    // --- where events go ----------------------------------------------------------------------------------
    void record_into(std::vector<Event>& events) { events_ = &events; }
    void at(StepPhase phase, std::uint32_t node) {
        phase_ = phase;
        node_ = node;
    }
    [[nodiscard]] std::uint32_t node() const { return node_; }
    void empty_cache() { events_->push_back({Event::Kind::empty_cache, phase_, 0, node_}); }

    // --- tensors --------------------------------------------------------------------------------------------
    /// A tensor that exists across steps (weights, gradients, state): declared once, allocated by `allocate`.
    TensorId declare(AffineBytes bytes, Category category) {
        tape_->tensors.push_back({bytes, category});
        refs_.push_back(0);
        value_of_.push_back(no_node);
        return static_cast<TensorId>(tape_->tensors.size() - 1);
    }
    void allocate(TensorId t) {
        refs_[t] = 1;
        events_->push_back({Event::Kind::allocate, phase_, t, node_});
    }
    /// A new tensor, with one reference (the caller's).
    TensorId make(AffineBytes bytes, Category category = Category::transient) {
        const TensorId t = declare(bytes, category);
        allocate(t);
        return t;
    }
    void retain(TensorId t) { ++refs_[t]; }
    void release(TensorId t) {
        if (t == no_tensor) return;
        if (refs_[t] <= 0) detail::fail("internal error: memory walk released a free tensor");
        if (--refs_[t] == 0) events_->push_back({Event::Kind::free, phase_, t, node_});
    }
    /// The forward's output keeps `t` (a key/value cache entry) until the caller drops it: `release_forward_holds`.
    void hold_until_forward_end(TensorId t) {
        retain(t);
        forward_holds_.push_back(t);
    }
    void release_forward_holds() {
        for (const TensorId t : forward_holds_) release(t);
        forward_holds_.clear();
    }
    /// A temporary: allocated and freed at once (a workspace, an intermediate that nothing keeps).
    void temporary(AffineBytes bytes) {
        if (!bytes.empty()) release(make(bytes));
    }
    [[nodiscard]] Category category(TensorId t) const { return tape_->tensors[t].category; }

    // --- saved for backward ------------------------------------------------------------------------------
    void begin_nodes(std::size_t n) {
        tape_->saved.assign(n, {});
        saved_.assign(n, {});
        groups_.assign(n, {});
        saved_count_.assign(tape_->tensors.size(), 0);
    }
    /// The current node's next saves belong to a new autograd node (a sub-op: one projection of an attention
    /// layer); the backward releases groups last first (`release_last_group`), as autograd frees each node's
    /// saved tensors right after that node runs (before, say, the ToCopyBackward of a weight gradient).
    void begin_group() {
        if (training()) groups_[node_].push_back(saved_[node_].size());
    }
    /// The current node keeps `t` for its backward (training only).
    void save(TensorId t) {
        if (!training() || t == no_tensor) return;
        retain(t);
        saved_[node_].push_back(t);
        if (node_ < tape_->saved.size()) tape_->saved[node_].push_back({t, value_of_[t]});
        if (t >= saved_count_.size()) saved_count_.resize(tape_->tensors.size(), 0);
        saved_count_[t] += 1;
        if (category(t) == Category::transient) tape_->tensors[t].category = Category::saved_activations;
    }
    [[nodiscard]] bool is_saved(TensorId t) const { return t < saved_count_.size() && saved_count_[t] > 0; }
    /// After the node's backward: what it saved is released.
    void release_saved(std::uint32_t node) {
        for (const TensorId t : saved_[node]) {
            saved_count_[t] -= 1;
            release(t);
        }
        saved_[node].clear();
        groups_[node].clear();
    }
    /// Releases the node's last group of saved tensors (all of them when it has no groups).
    void release_last_group(std::uint32_t node) {
        std::vector<TensorId>& list = saved_[node];
        const std::size_t from = groups_[node].empty() ? 0 : groups_[node].back();
        if (!groups_[node].empty()) groups_[node].pop_back();
        for (std::size_t i = from; i < list.size(); ++i) {
            saved_count_[list[i]] -= 1;
            release(list[i]);
        }
        list.resize(from);
    }

    // --- values ---------------------------------------------------------------------------------------------
    std::vector<Value> values;
    std::vector<Parameter> params;
    std::vector<std::vector<ParamUse>> node_params;  ///< per node, in the order the layer registers them

    [[nodiscard]] AffineBytes bytes_of(const Value& v) const { return per_sample_bytes(v.elements, width(v.dtype)); }
    /// Gives value `v` a new tensor of `elements` per sample in `dtype` (the caller's reference moves to the value).
    TensorId produce(std::uint32_t v, std::int64_t elements, DType dtype) {
        Value& out = values[v];
        out.elements = elements;
        out.dtype = dtype;
        out.tensor = make(per_sample_bytes(elements, width(dtype)));
        value_of_[out.tensor] = v;
        return out.tensor;
    }
    /// Tensor `t` holds value `v` (the batch: value 0).
    void holds(TensorId t, std::uint32_t v) { value_of_[t] = v; }
    /// Value `v` is `from`'s tensor (an in-place op, a view).
    void alias(std::uint32_t v, std::uint32_t from) {
        Value& out = values[v];
        const Value& in = values[from];
        out.tensor = in.tensor;
        out.dtype = in.dtype;
        out.elements = in.elements;
        retain(out.tensor);
    }
    /// A reader of `v` is done with it; the last reader drops the value's references.
    void done_reading(std::uint32_t v) {
        Value& val = values[v];
        if (--val.readers > 0) return;
        drop(val);
    }
    void drop(Value& val) {
        release(val.tensor);
        release(val.half);
        val.half = no_tensor;
    }
    /// Backward: adds gradient `g` (one reference, given up here) to `v`'s — the first one becomes it, later
    /// ones are summed into it in place (autograd's InputBuffer::accumulate).
    void deliver(std::uint32_t v, TensorId g) {
        Value& val = values[v];
        if (!val.needs_grad || g == no_tensor) {
            release(g);
            return;
        }
        if (val.grad == no_tensor) {
            val.grad = g;
            return;
        }
        release(g);
    }

    // --- parameters ---------------------------------------------------------------------------------------
    /// Backward: parameter `p`'s gradient arrives (a new FP32 tensor, or summed into the existing one).
    void param_grad(std::uint32_t p) {
        Parameter& par = params[p];
        if (!par.trainable) return;
        if (par.grad_live) {
            temporary(fixed_bytes(par.numel, 4));
            return;
        }
        allocate(par.grad);
        par.grad_live = true;
    }
    /// Autocast's copy of parameter `p` (eager): made on first use, held by the cache until autocast exits.
    TensorId autocast_copy(std::uint32_t p) {
        Parameter& par = params[p];
        if (par.cast_copy == no_tensor) par.cast_copy = make(fixed_bytes(par.numel, 2), Category::autocast_copies);
        return par.cast_copy;
    }
    /// autocast's __exit__ (torch.clear_autocast_cache): the cache drops its copies.
    void clear_autocast_cache() {
        for (Parameter& par : params) {
            release(par.cast_copy);
            par.cast_copy = no_tensor;
        }
    }
    /// Every live reference count is back to zero but the persistent tensors' (checked at the end of a step).
    [[nodiscard]] bool balanced(const std::vector<TensorId>& persistent) const {
        std::vector<int> expected(refs_.size(), 0);
        for (const TensorId t : persistent) expected[t] = refs_[t];
        for (std::size_t t = 0; t < refs_.size(); ++t)
            if (refs_[t] != expected[t]) return false;
        return true;
    }

private:
    Tape* tape_;
    StepSettings s_;
    bool amp_ = false;
    DType compute_ = DType::f32;
    std::vector<Event>* events_ = nullptr;
    StepPhase phase_ = StepPhase::setup;
    std::uint32_t node_ = no_node;
    std::vector<int> refs_;
    std::vector<std::vector<TensorId>> saved_;
    std::vector<TensorId> forward_holds_;  ///< what the forward's output keeps (hold_until_forward_end)
    std::vector<std::vector<std::size_t>> groups_;
    std::vector<int> saved_count_;
    std::vector<std::uint32_t> value_of_;  ///< per tensor, the value it was made for (no_node: none)
};

}  // namespace roofplan::memory

// roofplan/memory/tape.hpp — a step as the sequence of allocations and frees the framework makes, with sizes
// affine in the batch, and its replay through the caching allocator.
//
// The step is recorded once per model and settings (memory/step.hpp builds it): which tensors exist, what each
// is (weights, a saved activation, a gradient, ...), and in which order they are allocated and freed.  Sizes are
// per_sample·batch + fixed bytes, so a batch sweep replays the same tape at other sizes.  A replay runs the setup
// (weights, inputs, workspaces), the first step (optimizer state created, cuDNN's algorithm searches), then steady
// steps; the figures are the last steady step's, as torch.cuda's peaks after warm-up and reset_peak_memory_stats.
#pragma once

#include <roofplan/detail/checked.hpp>
#include <roofplan/enum_names.hpp>
#include <roofplan/memory/allocator.hpp>
#include <roofplan/memory/conv_workspace.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

namespace roofplan::memory {

/// What a tensor is, for the breakdown of the peak.
enum class Category : std::uint8_t {
    weights,            ///< parameters and buffers (FP32 masters in training; the engine's copy in inference)
    gradients,          ///< parameter gradients (.grad), from their backward until the next zero_grad
    optimizer_state,    ///< momentum, Adam's moments
    autocast_copies,    ///< autocast's cached FP16/BF16 copies of the weights
    saved_activations,  ///< tensors autograd saved for the backward
    transient,          ///< everything else alive at the moment: outputs in flight, activation gradients, temporaries
    inputs,             ///< the batch on the device (images, token ids, labels)
    workspaces,         ///< library workspaces held by the allocator (cuBLAS, cuBLASLt)
};

/// Where in a step an event happens (the loss's backward is the backward's first part).
enum class StepPhase : std::uint8_t { setup, forward, loss, backward, optimizer };

}  // namespace roofplan::memory

template <>
struct roofplan::EnumNames<roofplan::memory::Category> {
    static constexpr std::string_view field = "category";
    static constexpr std::string_view what = "memory category";
    static constexpr std::array<std::string_view, 8> names{
        "weights", "gradients", "optimizer_state", "autocast_copies", "saved_activations", "transient", "inputs",
        "workspaces"};
};
template <>
struct roofplan::EnumNames<roofplan::memory::StepPhase> {
    static constexpr std::string_view field = "phase";
    static constexpr std::string_view what = "step phase";
    static constexpr std::array<std::string_view, 5> names{"setup", "forward", "loss", "backward", "optimizer"};
};

namespace roofplan::memory {

using roofplan::to_string;
inline constexpr std::size_t category_count = enum_count<Category>;

/// Bytes affine in the batch: per_sample·batch + fixed; or, for a size measured at some batches (a cuDNN
/// workspace), the measured curve, with per_sample its largest bytes per sample (the bound overflow checks use).
struct AffineBytes {
    std::int64_t per_sample = 0;
    std::int64_t fixed = 0;
    MeasuredCurve measured{};
    [[nodiscard]] constexpr std::int64_t at(std::int64_t batch) const {
        if (measured.points != nullptr) return measured.at(batch);
        return detail::add(detail::mul(per_sample, batch, "tensor bytes"), fixed, "tensor bytes");
    }
    [[nodiscard]] constexpr bool empty() const { return per_sample == 0 && fixed == 0 && measured.points == nullptr; }
};
constexpr AffineBytes measured_bytes(const MeasuredCurve& curve) { return {curve.slope(), 0, curve}; }
constexpr AffineBytes per_sample_bytes(std::int64_t elements, std::int64_t width) {
    return {detail::mul(elements, width, "tensor bytes"), 0};
}
constexpr AffineBytes fixed_bytes(std::int64_t elements, std::int64_t width) {
    return {0, detail::mul(elements, width, "tensor bytes")};
}

/// Where a step's node index says "not a layer" (the loss, the optimizer, the setup).
inline constexpr std::uint32_t no_node = std::numeric_limits<std::uint32_t>::max();

/// One allocation or free, or an emptyCache.
struct Event {
    enum class Kind : std::uint8_t { allocate, free, empty_cache };
    Kind kind = Kind::allocate;
    StepPhase phase = StepPhase::setup;
    std::uint32_t tensor = 0;
    std::uint32_t node = no_node;
};

/// A tensor a node saved for its backward, and whose tensor it is.
struct SavedTensor {
    std::uint32_t tensor = 0;
    /// The model value it is (0: the batch, v: node v−1's output), or no_node: the node's own tensor (a cast
    /// copy, statistics, a mask, indices).
    std::uint32_t value = no_node;
};

/// A recorded step: its tensors and its events in three parts (setup, first step, steady step).
struct Tape {
    struct Tensor {
        AffineBytes bytes;
        Category category = Category::transient;
    };
    std::vector<Tensor> tensors;
    std::vector<Event> setup, first_step, steady_step;
    bool exact = false;  ///< no allocator: blocks are the requested bytes, reserved = allocated (the ideal runtime)
    std::vector<std::vector<SavedTensor>> saved;  ///< per node, what it saved in the steady step (training)
};

/// The figures of a replay at one batch.
struct Replay {
    bool out_of_memory = false;
    std::int64_t allocated_at_start = 0;  ///< at the start of the measured step (after zero_grad)
    std::int64_t allocated_peak = 0;
    std::int64_t reserved_peak = 0;
    std::array<std::int64_t, category_count> at_peak{};  ///< the allocated peak by category (blocks)
    StepPhase peak_phase = StepPhase::setup;
    std::uint32_t peak_node = no_node;
    std::uint32_t failed_tensor = 0;  ///< the request that ran out of memory
};

/// Replays a tape through the caching allocator (or exactly) at `batch`, the allocator limited to `limit`
/// bytes.  `steady_steps` steady steps follow the first; the figures are the last one's.  `allocator` is
/// scratch storage (reset here), so that a sweep allocates nothing per call once warm.
class Replayer {
public:
    Replay run(const Tape& tape, std::int64_t batch, std::int64_t limit = std::numeric_limits<std::int64_t>::max(),
               int steady_steps = 2) {
        detail::require_batch(batch);
        allocator_.reset(limit);
        limit_ = limit;
        exact_ = tape.exact;
        exact_allocated_ = 0;
        sizes_.resize(tape.tensors.size());
        for (std::size_t i = 0; i < tape.tensors.size(); ++i) sizes_[i] = tape.tensors[i].bytes.at(batch);
        handles_.assign(tape.tensors.size(), CachingAllocator::out_of_memory);
        current_.fill(0);
        Replay out;
        measuring_ = false;
        if (!play(tape, tape.setup, out) || !play(tape, tape.first_step, out)) return out;
        for (int s = 0; s < steady_steps; ++s) {
            measuring_ = s + 1 == steady_steps;
            if (measuring_) start_measuring(out);
            if (!play(tape, tape.steady_step, out)) return out;
        }
        out.reserved_peak = exact_ ? out.allocated_peak : allocator_.peak_reserved();
        return out;
    }

private:
    void start_measuring(Replay& out) {
        allocator_.reset_peaks();
        out.allocated_peak = allocated();
        out.at_peak = current_;
        start_pending_ = true;
    }
    [[nodiscard]] std::int64_t allocated() const { return exact_ ? exact_allocated_ : allocator_.allocated(); }

    bool play(const Tape& tape, const std::vector<Event>& events, Replay& out) {
        for (const Event& e : events) {
            if (e.kind == Event::Kind::empty_cache) {
                if (!exact_) allocator_.empty_cache();
                continue;
            }
            const auto category = static_cast<std::size_t>(tape.tensors[e.tensor].category);
            if (start_pending_ && measuring_ && e.kind == Event::Kind::allocate) {  // after zero_grad's frees
                out.allocated_at_start = allocated();
                start_pending_ = false;
            }
            if (e.kind == Event::Kind::free) {
                current_[category] -= block(e.tensor);
                release(e.tensor);
                continue;
            }
            if (!acquire(e.tensor)) {
                out.out_of_memory = true;
                out.failed_tensor = e.tensor;
                out.peak_phase = e.phase;
                out.peak_node = e.node;
                return false;
            }
            current_[category] += block(e.tensor);
            if (measuring_ && allocated() > out.allocated_peak) {
                out.allocated_peak = allocated();
                out.at_peak = current_;
                out.peak_phase = e.phase;
                out.peak_node = e.node;
            }
        }
        return true;
    }
    bool acquire(std::uint32_t t) {
        if (exact_) {
            if (sizes_[t] > limit_ - exact_allocated_) return false;
            exact_allocated_ += sizes_[t];
            return true;
        }
        handles_[t] = allocator_.allocate(sizes_[t]);
        return handles_[t] != CachingAllocator::out_of_memory;
    }
    void release(std::uint32_t t) {
        if (exact_) {
            exact_allocated_ -= sizes_[t];
            return;
        }
        allocator_.free(handles_[t]);
        handles_[t] = CachingAllocator::out_of_memory;
    }
    [[nodiscard]] std::int64_t block(std::uint32_t t) const {
        return exact_ ? sizes_[t] : allocator_.block_bytes(handles_[t]);
    }

    CachingAllocator allocator_;
    std::vector<std::int64_t> sizes_;
    std::vector<CachingAllocator::Handle> handles_;
    std::array<std::int64_t, category_count> current_{};
    std::int64_t limit_ = 0, exact_allocated_ = 0;
    bool exact_ = false, measuring_ = false, start_pending_ = false;
};

}  // namespace roofplan::memory

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

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
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

struct Tape;

/// An exact tape (no allocator) holds what a replay needs without walking it event by event: with sizes affine in
/// the batch, the allocated total after every allocation of the replay (setup, first step, two steady steps) is a
/// line F + P·batch.  The allocations are cut into blocks of `block` consecutive ones (never across the measured
/// step's start), each with an upper bound max F + max P·batch of its lines, the lines where those maxima are
/// reached, and the totals per category before its first allocation.  A replay then scans only the blocks that
/// can hold the step's peak or exceed the limit (Replayer::run; a unit test checks it against the walk, field by
/// field).  Built by `index_exact` for tapes whose sizes are all affine; absent otherwise.
struct ExactIndex {
    static constexpr std::uint32_t block = 32;
    struct Line {
        std::int64_t fixed = 0, per_sample = 0;  ///< the allocated total after the allocation
        std::uint8_t part = 0;                   ///< 0 setup, 1 first step, 2 and 3 the steady steps
        std::uint32_t position = 0;              ///< the event's index in its part
    };
    struct Totals {  ///< allocated bytes by category, as lines in the batch
        std::array<std::int64_t, category_count> fixed{}, per_sample{};
    };
    struct Block {
        std::uint32_t lines_begin = 0, lines_end = 0;
        std::int64_t max_fixed = 0, max_per_sample = 0;  ///< over the block's lines
        std::uint32_t at_max_fixed = 0, at_max_per_sample = 0;  ///< lines reaching them (exact lower bounds)
        Totals before;  ///< by category, before the block's first allocation
    };
    std::vector<Line> lines;
    std::vector<Block> blocks;
    std::size_t measured_block = 0;  ///< the first block of the last steady step (blocks.size(): none)
    Totals measured_start;           ///< by category, at the last steady step's start
    std::int64_t max_fixed = 0, max_per_sample = 0;  ///< over every line (bounds of every total and size)
    std::int64_t max_tensor_fixed = 0, max_tensor_per_sample = 0;  ///< over every tensor (the walk sizes them all)
    std::size_t tensors = 0, setup = 0, first_step = 0, steady_step = 0;  ///< the tape's sizes, when indexed
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
    std::shared_ptr<const ExactIndex> exact_index;  ///< an exact tape's replay index (`index_exact`), or none
};

/// Builds an exact tape's replay index (see ExactIndex); leaves the tape without one when it is not exact, a size is
/// not affine (a measured workspace curve) or a total overflows 64 bits at batch 1.
inline void index_exact(Tape& tape) {
    tape.exact_index.reset();
    if (!tape.exact) return;
    auto index = std::make_shared<ExactIndex>();
    ExactIndex& x = *index;
    for (const Tape::Tensor& t : tape.tensors) {
        if (t.bytes.measured.points != nullptr || t.bytes.per_sample < 0 || t.bytes.fixed < 0) return;
        x.max_tensor_per_sample = std::max(x.max_tensor_per_sample, t.bytes.per_sample);
        x.max_tensor_fixed = std::max(x.max_tensor_fixed, t.bytes.fixed);
    }
    ExactIndex::Totals now;
    std::int64_t fixed = 0, per_sample = 0;
    const std::int64_t room = std::numeric_limits<std::int64_t>::max() / 2;
    const std::array<const std::vector<Event>*, 4> parts{&tape.setup, &tape.first_step, &tape.steady_step,
                                                          &tape.steady_step};
    x.measured_block = std::numeric_limits<std::size_t>::max();
    for (std::uint8_t part = 0; part < parts.size(); ++part) {
        if (part == 3) x.measured_start = now;
        bool open = false;  // a block is being filled (closed at each part's end, so the measured step starts one)
        const std::vector<Event>& events = *parts[part];
        for (std::uint32_t i = 0; i < events.size(); ++i) {
            const Event& e = events[i];
            if (e.kind == Event::Kind::empty_cache) continue;
            const Tape::Tensor& t = tape.tensors[e.tensor];
            const auto c = static_cast<std::size_t>(t.category);
            const std::int64_t sign = e.kind == Event::Kind::free ? -1 : 1;
            if (sign > 0 && (!open || x.lines.size() - x.blocks.back().lines_begin == ExactIndex::block)) {
                if (part == 3 && x.measured_block > x.blocks.size()) x.measured_block = x.blocks.size();
                ExactIndex::Block b;
                b.lines_begin = b.lines_end = static_cast<std::uint32_t>(x.lines.size());
                b.before = now;
                x.blocks.push_back(b);
                open = true;
            }
            now.fixed[c] += sign * t.bytes.fixed;
            now.per_sample[c] += sign * t.bytes.per_sample;
            fixed += sign * t.bytes.fixed;
            per_sample += sign * t.bytes.per_sample;
            if (fixed > room || per_sample > room) return;  // beyond what a replay can hold
            if (sign < 0) continue;
            ExactIndex::Block& b = x.blocks.back();
            const auto line = static_cast<std::uint32_t>(x.lines.size());
            if (line == b.lines_begin || fixed > b.max_fixed) b.max_fixed = fixed, b.at_max_fixed = line;
            if (line == b.lines_begin || per_sample > b.max_per_sample) b.max_per_sample = per_sample, b.at_max_per_sample = line;
            x.lines.push_back({fixed, per_sample, part, i});
            x.max_fixed = std::max(x.max_fixed, fixed);
            x.max_per_sample = std::max(x.max_per_sample, per_sample);
            b.lines_end = line + 1;
        }
    }
    if (x.measured_block > x.blocks.size()) x.measured_block = x.blocks.size();
    x.tensors = tape.tensors.size(), x.setup = tape.setup.size(), x.first_step = tape.first_step.size();
    x.steady_step = tape.steady_step.size();
    tape.exact_index = std::move(index);
}

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
        if (const ExactIndex* x = tape.exact_index.get(); x != nullptr && steady_steps == 2 && indexes(*x, tape)) {
            Replay out;
            if (run_indexed(tape, *x, batch, limit, out)) return out;
        }
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
    static bool indexes(const ExactIndex& x, const Tape& tape) {
        return tape.exact && x.tensors == tape.tensors.size() && x.setup == tape.setup.size() &&
               x.first_step == tape.first_step.size() && x.steady_step == tape.steady_step.size();
    }
    /// The replay of an exact tape from its index (see ExactIndex): false when the walk must decide (a size that
    /// overflows, which the walk reports, or an allocation beyond `limit`, whose partial figures the walk gives).
    static bool run_indexed(const Tape& tape, const ExactIndex& x, std::int64_t batch, std::int64_t limit, Replay& out) {
        // Every total below is at most the largest line's, max F + max P·batch: when that fits in 64 bits, so does
        // every size and sum (else the walk reports the overflow or the allocation it cannot make).
        constexpr std::int64_t top = std::numeric_limits<std::int64_t>::max();
        if (x.max_per_sample > 0 && batch > (top - x.max_fixed) / x.max_per_sample) return false;
        if (x.max_tensor_per_sample > 0 && batch > (top - x.max_tensor_fixed) / x.max_tensor_per_sample) return false;
        const auto value = [&](std::int64_t fixed, std::int64_t per_sample) { return fixed + per_sample * batch; };
        const auto line = [&](std::uint32_t l) { return value(x.lines[l].fixed, x.lines[l].per_sample); };
        const auto total = [&](const ExactIndex::Totals& t) {
            std::int64_t sum = 0;
            for (std::size_t c = 0; c < category_count; ++c) sum += value(t.fixed[c], t.per_sample[c]);
            return sum;
        };
        for (const ExactIndex::Block& k : x.blocks)  // no allocation beyond the limit
            if (value(k.max_fixed, k.max_per_sample) > limit)
                for (std::uint32_t l = k.lines_begin; l < k.lines_end; ++l)
                    if (line(l) > limit) return false;
        // The measured step's peak: the first allocation reaching the largest total above the step's start.  A
        // block whose bound is below a total some line reaches cannot hold it.
        const std::int64_t start = total(x.measured_start);
        std::int64_t floor = start;
        for (std::size_t j = x.measured_block; j < x.blocks.size(); ++j)
            floor = std::max({floor, line(x.blocks[j].at_max_fixed), line(x.blocks[j].at_max_per_sample)});
        std::int64_t best = start;
        std::size_t best_block = x.blocks.size();
        std::uint32_t best_line = 0;
        for (std::size_t j = x.measured_block; j < x.blocks.size(); ++j) {
            const ExactIndex::Block& k = x.blocks[j];
            if (value(k.max_fixed, k.max_per_sample) < floor) continue;
            for (std::uint32_t l = k.lines_begin; l < k.lines_end; ++l)
                if (const std::int64_t v = line(l); v > best) best = v, best_block = j, best_line = l;
        }
        const auto bytes = [&](const ExactIndex::Totals& t, std::size_t c) {
            return value(t.fixed[c], t.per_sample[c]);
        };
        if (x.measured_block < x.blocks.size())
            out.allocated_at_start = total(x.blocks[x.measured_block].before);
        out.allocated_peak = out.reserved_peak = best;
        if (best_block == x.blocks.size()) {
            for (std::size_t c = 0; c < category_count; ++c) out.at_peak[c] = bytes(x.measured_start, c);
            return true;
        }
        // The categories at the peak: from the block's start, the events up to the peak's allocation.
        const ExactIndex::Block& k = x.blocks[best_block];
        for (std::size_t c = 0; c < category_count; ++c) out.at_peak[c] = bytes(k.before, c);
        const ExactIndex::Line& first = x.lines[k.lines_begin];
        const ExactIndex::Line& peak = x.lines[best_line];
        const std::vector<Event>& events = first.part == 0 ? tape.setup : first.part == 1 ? tape.first_step : tape.steady_step;
        for (std::uint32_t i = first.position; i <= peak.position; ++i) {
            const Event& e = events[i];
            if (e.kind == Event::Kind::empty_cache) continue;
            const AffineBytes& size = tape.tensors[e.tensor].bytes;
            const std::int64_t n = value(size.fixed, size.per_sample);  // within 64 bits (checked above)
            out.at_peak[static_cast<std::size_t>(tape.tensors[e.tensor].category)] += e.kind == Event::Kind::free ? -n : n;
        }
        out.peak_phase = events[peak.position].phase;
        out.peak_node = events[peak.position].node;
        return true;
    }

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

// roofplan/memory/memory.hpp — device memory as the framework allocates it: the peak of torch.cuda's
// `memory_allocated` and `memory_reserved` over a training step (or an inference) at a batch, where in the step it
// happens and what it is made of, the context outside the allocator, whether it fits a device, and the largest
// batch that does.
//
//     const Model m = models::resnet50();
//     const MemoryModel memory(m);
//     const DeviceMemory h200 = DeviceMemory::of(find_device("h200"));
//     const MemoryEstimate e = memory({.batch = 256, .precision = Precision::amp_bf16}, h200);
//     // e.allocated_peak, e.reserved_peak, e.total, e.fits, e.peak_phase, e.peak_layer
//     const MaxBatch most = memory.max_batch({.precision = Precision::amp_bf16}, h200);
//
// The model: a step is recorded once per settings as the allocations and frees PyTorch makes (memory/step.hpp,
// with the layer rules of memory/rules.hpp), then replayed through the caching allocator (memory/allocator.hpp)
// at each batch.  A MemoryModel caches its recordings, so a batch sweep replays without recording again.
// docs/memory.md gives the rules with their sources and what is approximate.
#pragma once

#include <roofplan/memory/context.hpp>
#include <roofplan/memory/step.hpp>
#include <roofplan/memory/tape.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace roofplan::memory {

/// What to estimate.  The sequence length is the model's own (zoo builders take it).
struct MemoryRequest {
    std::int64_t batch = 1;
    Precision precision = Precision::fp32;
    Mode mode = Mode::train;
    Optimizer optimizer = Optimizer::sgd;
    Runtime runtime = Runtime::eager;
    AttentionKernel attention = AttentionKernel::fused;
    bool cudnn_benchmark = true;  ///< torch.backends.cudnn.benchmark (what training scripts set)
    /// Threads holding cuBLAS workspaces: 0 means 2 in training (the Python thread and the autograd engine's),
    /// 1 in inference.  A process that trained before keeps the autograd thread's workspace (2).
    int blas_threads = 0;
    /// How the framework code is written; default: implementation_of(model).
    std::optional<Implementation> implementation{};
};

/// The device-level figures: its memory, the context outside the allocator, the library workspaces.
struct DeviceMemory {
    std::int64_t capacity = 0;  ///< bytes (the datasheet figure, Device::memory())
    ContextFigure context;
    WorkspaceFigure workspaces;
    /// The device's memory with its measured (or borrowed) context.  Errors: a device without a memory size.
    static DeviceMemory of(const Device& device) {
        return {device_capacity(device), default_context(device), default_workspaces(device)};
    }
};

/// The estimate for one batch.  The components are the allocator blocks alive at the allocated peak; they sum to
/// `allocated_peak`.  All in bytes.
struct MemoryEstimate {
    std::int64_t batch = 0;
    byte_count weights{}, gradients{}, optimizer_state{}, autocast_copies{}, saved_activations{}, transient_peak{},
        inputs{}, workspaces{};
    byte_count allocated_at_start{};  ///< at the start of a step, after zero_grad (persistent state and the batch)
    byte_count allocated_peak{};      ///< torch.cuda.max_memory_allocated over a steady step
    byte_count reserved_peak{};       ///< torch.cuda.max_memory_reserved over a steady step (memory ample)
    byte_count allocator_slack{};     ///< reserved_peak - allocated_peak: rounding, cached and split blocks
    byte_count context{};             ///< outside the allocator (DeviceMemory::context)
    byte_count total{};               ///< reserved_peak + context
    byte_count capacity{};            ///< the device's memory
    /// The step runs without running out of memory: total <= capacity, or the allocator gets by after freeing its
    /// cached segments when a cudaMalloc fails (`tight`).
    bool fits = false;
    bool tight = false;
    StepPhase peak_phase = StepPhase::setup;
    std::string_view peak_layer;      ///< the node name (a view into the model), "loss" or "optimizer"
    std::string_view context_source;
};

/// The largest batch that fits a device.
struct MaxBatch {
    std::int64_t batch = 0;          ///< 0: not even one sample fits
    byte_count missing{};            ///< when none fits: what batch 1 lacks (its total beyond the memory)
    MemoryEstimate at{};             ///< the estimate at `batch` (at 1 when none fits)
    int evaluations = 0;             ///< replays the search made
};

/// A tensor a layer keeps for its backward, at a batch.
struct SavedTensorInfo {
    std::int64_t bytes = 0;          ///< at the request's batch (the requested size, before the allocator's rounding)
    std::int64_t bytes_per_sample = 0;
    /// Whose tensor it is: 0 the batch, v the output of node v−1 (the layer's own output or an input it read), or
    /// no_node: the layer's own (a cast copy of its input, statistics, a dropout mask, pooling indices).
    std::uint32_t value = no_node;
    int shared = 0;  ///< how many other layers keep the same tensor (an in-place ReLU's output, say)
};

/// A model compiled for memory estimates.  Keeps a pointer to the model, which must outlive it.
class MemoryModel {
public:
    explicit MemoryModel(const Model& model) : model_(&model) {}
    explicit MemoryModel(const Model&&) = delete;  ///< a memory model of a temporary model would dangle

    [[nodiscard]] const Model& model() const { return *model_; }

    /// The estimate at `request.batch` on `device`.  Errors: batch < 1, int8 training or int8 eager, a negative
    /// context, a device without memory, a batch whose sizes overflow 64 bits.
    [[nodiscard]] MemoryEstimate operator()(const MemoryRequest& request, const DeviceMemory& device) const {
        check(request, device);
        const Tape& tape = tape_for(settings_of(request, device.workspaces));
        thread_local Replayer replayer;
        const Replay r = replayer.run(tape, request.batch);
        MemoryEstimate e = fill(r, request, device);
        if (e.total.value() <= e.capacity.value()) {
            e.fits = true;
        } else if (device.capacity > device.context.bytes) {
            e.fits = !replayer.run(tape, request.batch, device.capacity - device.context.bytes).out_of_memory;
            e.tight = e.fits;
        }
        return e;
    }

    /// The largest batch whose step runs on `device` (a search over replays, never an extrapolation); when none
    /// does, what batch 1 lacks.  `request.batch` is ignored.
    [[nodiscard]] MaxBatch max_batch(MemoryRequest request, const DeviceMemory& device) const {
        request.batch = 1;
        check(request, device);
        const Tape& tape = tape_for(settings_of(request, device.workspaces));
        thread_local Replayer replayer;
        MaxBatch out;
        const std::int64_t limit = device.capacity - device.context.bytes;
        const std::int64_t safe = safe_batch(tape);
        const auto fits = [&](std::int64_t b) {
            ++out.evaluations;
            return limit > 0 && b <= safe && !replayer.run(tape, b, limit).out_of_memory;
        };
        if (!fits(1)) {
            request.batch = 1;
            out.at = (*this)(request, device);
            out.missing = units::bytes(std::max<std::int64_t>(1, out.at.total.value() - device.capacity));
            return out;
        }
        std::int64_t lo = 1, hi = 2;
        while (hi <= safe && fits(hi)) {
            lo = hi;
            hi = hi > safe / 2 ? safe + 1 : hi * 2;
        }
        while (hi - lo > 1) {
            const std::int64_t mid = lo + (hi - lo) / 2;
            (fits(mid) ? lo : hi) = mid;
        }
        out.batch = lo;
        request.batch = lo;
        out.at = (*this)(request, device);
        return out;
    }

    /// What node `node` keeps for its backward in a training step of `request` (empty in inference).  Errors: a
    /// node out of range, and those of operator().
    [[nodiscard]] std::vector<SavedTensorInfo> saved_tensors(const MemoryRequest& request, const DeviceMemory& device,
                                                           std::size_t node) const {
        check(request, device);
        if (node >= model_->size())
            detail::fail("node ", static_cast<std::int64_t>(node), " is out of range: model '", model_->id(), "' has ",
                         static_cast<std::int64_t>(model_->size()), " nodes");
        const Tape& tape = tape_for(settings_of(request, device.workspaces));
        std::vector<SavedTensorInfo> out;
        if (node >= tape.saved.size()) return out;
        for (const SavedTensor& s : tape.saved[node]) {
            SavedTensorInfo info;
            const AffineBytes& b = tape.tensors[s.tensor].bytes;
            info.bytes = b.at(request.batch);
            info.bytes_per_sample = b.per_sample;
            info.value = s.value;
            for (std::size_t other = 0; other < tape.saved.size(); ++other)
                if (other != node)
                    for (const SavedTensor& o : tape.saved[other]) info.shared += o.tensor == s.tensor ? 1 : 0;
            out.push_back(info);
        }
        return out;
    }

    /// The recorded step for a request (what the estimates replay), for inspection and tests.
    [[nodiscard]] const Tape& tape(const MemoryRequest& request, const WorkspaceFigure& workspaces) const {
        check_settings(request);
        return tape_for(settings_of(request, workspaces));
    }

private:
    static void check_settings(const MemoryRequest& r) {
        detail::require_batch(r.batch);
        if (r.precision == Precision::int8 && r.mode == Mode::train)
            detail::fail("precision int8 is inference only; accepted for training: fp32, tf32, amp-fp16, amp-bf16");
        if (r.precision == Precision::int8 && r.runtime == Runtime::eager)
            detail::fail("eager PyTorch has no int8 path; int8 is an inference engine's (runtime compiled) or ideal");
        if (r.blas_threads < 0)
            detail::fail("blas_threads must be >= 0 (0: the default, 2 in training, 1 in inference), got ",
                         r.blas_threads);
    }
    static void check(const MemoryRequest& r, const DeviceMemory& d) {
        check_settings(r);
        require_context(d.context);
        if (d.capacity <= 0)
            detail::fail("device memory must be > 0 bytes, got ", d.capacity, "; give the device its memory size");
        if (d.workspaces.cublas_bytes < 0 || d.workspaces.cublaslt_bytes < 0)
            detail::fail("library workspaces must be >= 0 bytes");
    }
    [[nodiscard]] StepSettings settings_of(const MemoryRequest& r, const WorkspaceFigure& workspaces) const {
        StepSettings s;
        s.precision = r.precision;
        s.mode = r.mode;
        s.optimizer = r.optimizer;
        s.runtime = r.runtime;
        s.attention = r.attention;
        s.cudnn_benchmark = r.cudnn_benchmark;
        s.blas_threads = r.blas_threads;
        s.workspaces = workspaces;
        if (r.cudnn_benchmark && workspaces.benchmarked_convolutions != nullptr)  // the engines the timing picks
            s.workspaces.convolutions = workspaces.benchmarked_convolutions;
        s.implementation = r.implementation ? *r.implementation : implementation_of(*model_);
        return s;
    }
    static bool same(const StepSettings& a, const StepSettings& b) {
        return a.precision == b.precision && a.mode == b.mode && a.optimizer == b.optimizer && a.runtime == b.runtime &&
               a.attention == b.attention && a.cudnn_benchmark == b.cudnn_benchmark &&
               a.blas_threads == b.blas_threads && a.workspaces.cublas_bytes == b.workspaces.cublas_bytes &&
               a.workspaces.cublaslt_bytes == b.workspaces.cublaslt_bytes &&
               a.workspaces.convolutions == b.workspaces.convolutions &&
               a.workspaces.benchmarked_convolutions == b.workspaces.benchmarked_convolutions &&
               a.implementation == b.implementation;
    }
    /// The recording of these settings, made on first use (copies of a MemoryModel share the cache).
    const Tape& tape_for(const StepSettings& s) const {
        const std::lock_guard<std::mutex> lock(cache_->mutex);
        for (const auto& [settings, tape] : cache_->tapes)
            if (same(settings, s)) return *tape;
        auto tape = std::make_unique<Tape>(record_step(*model_, s));
        index_exact(*tape);
        cache_->tapes.emplace_back(s, std::move(tape));
        return *cache_->tapes.back().second;
    }
    /// The largest batch at which every size of the tape, and their sum, fits in 64 bits.
    static std::int64_t safe_batch(const Tape& tape) {
        double per_sample = 0, fixed = 0;
        for (const Tape::Tensor& t : tape.tensors) {
            per_sample += static_cast<double>(t.bytes.per_sample);
            fixed += static_cast<double>(t.bytes.fixed);
        }
        const double room = static_cast<double>(std::numeric_limits<std::int64_t>::max()) / 2 - fixed;
        if (per_sample <= 0) return std::numeric_limits<std::int64_t>::max() / 2;
        return static_cast<std::int64_t>(std::max(1.0, room / per_sample));
    }
    [[nodiscard]] MemoryEstimate fill(const Replay& r, const MemoryRequest& request, const DeviceMemory& device) const {
        MemoryEstimate e;
        e.batch = request.batch;
        const auto at = [&](Category c) { return units::bytes(r.at_peak[static_cast<std::size_t>(c)]); };
        e.weights = at(Category::weights);
        e.gradients = at(Category::gradients);
        e.optimizer_state = at(Category::optimizer_state);
        e.autocast_copies = at(Category::autocast_copies);
        e.saved_activations = at(Category::saved_activations);
        e.transient_peak = at(Category::transient);
        e.inputs = at(Category::inputs);
        e.workspaces = at(Category::workspaces);
        e.allocated_at_start = units::bytes(r.allocated_at_start);
        e.allocated_peak = units::bytes(r.allocated_peak);
        e.reserved_peak = units::bytes(r.reserved_peak);
        e.allocator_slack = units::bytes(r.reserved_peak - r.allocated_peak);
        e.context = units::bytes(device.context.bytes);
        e.total = units::bytes(detail::add(r.reserved_peak, device.context.bytes, "memory total"));
        e.capacity = units::bytes(device.capacity);
        e.peak_phase = r.peak_phase;
        e.peak_layer = node_label(r.peak_node, r.peak_phase);
        e.context_source = device.context.source;
        return e;
    }
    [[nodiscard]] std::string_view node_label(std::uint32_t node, StepPhase phase) const {
        if (node < model_->size()) return model_->nodes()[node].name.view();
        if (node == model_->size()) return "loss";
        return to_string(phase);
    }

    const Model* model_;
    struct Cache {
        std::mutex mutex;
        std::vector<std::pair<StepSettings, std::unique_ptr<Tape>>> tapes;
    };
    std::shared_ptr<Cache> cache_ = std::make_shared<Cache>();
};

/// One-shot estimate (records the step each call; keep a MemoryModel for sweeps).
inline MemoryEstimate estimate_memory(const Model& model, const MemoryRequest& request, const DeviceMemory& device) {
    return MemoryModel(model)(request, device);
}

}  // namespace roofplan::memory

// roofplan/validation/memory.hpp — the memory model against measured peaks, case by case (never a fit).
//
// A sample is one case of validation/e2e/e2e_suite.py: torch.cuda.max_memory_allocated and max_memory_reserved
// over the steady steps (peaks reset after warm-up), and memory_allocated at the start of a step.  Each is
// predicted by memory::MemoryModel for the zoo model, batch, precision, optimizer and runtime of the case, with
// the threads that hold cuBLAS workspaces in the measuring process (the suite runs its cases in one process: once
// a case has trained, the autograd thread's workspace exists in every later case).  The error of a case is
// predicted / measured − 1.
#pragma once

#include <roofplan/memory/memory.hpp>
#include <roofplan/models/zoo.hpp>
#include <roofplan/validation/compare.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace roofplan::validation {

/// One measured case of a memory report.
struct MemorySample {
    std::string where;        ///< "e2e_eager_h200.json: .results[3]"
    std::string id;           ///< the case id ("resnet50-train-b256-amp-bf16")
    std::string model;        ///< the zoo model ("bert-squad")
    Mode mode = Mode::train;
    Precision precision = Precision::fp32;
    Optimizer optimizer = Optimizer::sgd;
    Runtime runtime = Runtime::eager;
    std::int64_t batch = 1;
    std::int64_t seq = 0;     ///< 0: the model's default (CNNs)
    bool cuda_graphs = false; ///< torch.compile mode "reduce-overhead": replayed CUDA graphs
    int blas_threads = 1;     ///< threads holding cuBLAS workspaces in the measuring process
    std::int64_t max_allocated = 0, max_reserved = 0, allocated_at_start = 0;
};

/// A sample beside its prediction.
struct MemoryComparison {
    MemorySample sample;
    memory::MemoryEstimate predicted;  ///< its peak_layer cleared (it would name a model built for the comparison)
    std::string peak_layer;            ///< where the predicted allocated peak is
    [[nodiscard]] double allocated_error() const { return ratio(predicted.allocated_peak.value(), sample.max_allocated); }
    [[nodiscard]] double reserved_error() const { return ratio(predicted.reserved_peak.value(), sample.max_reserved); }
    [[nodiscard]] double start_error() const {
        return ratio(predicted.allocated_at_start.value(), sample.allocated_at_start);
    }

private:
    static double ratio(std::int64_t predicted, std::int64_t measured) {
        return static_cast<double>(predicted) / static_cast<double>(measured) - 1.0;
    }
};

/// Predicts every sample on `device` (the device only sets the workspaces and the context; peaks are compared).
inline std::vector<MemoryComparison> compare_memory(const std::vector<MemorySample>& samples,
                                                    const memory::DeviceMemory& device) {
    std::vector<MemoryComparison> out;
    out.reserve(samples.size());
    for (const MemorySample& s : samples) {
        const Model model = models::build(s.model, {.seq = s.seq});
        memory::MemoryRequest r;
        r.batch = s.batch;
        r.precision = s.precision;
        r.mode = s.mode;
        r.optimizer = s.optimizer;
        r.runtime = s.runtime;
        r.blas_threads = s.blas_threads;
        const memory::MemoryEstimate e = memory::MemoryModel(model)(r, device);
        out.push_back({s, e, std::string(e.peak_layer)});
        out.back().predicted.peak_layer = {};
    }
    return out;
}

/// The comparisons as generic cases (group "memory.allocated" or "memory.reserved", in bytes), for summarize().
inline std::vector<CaseComparison> memory_cases(const std::vector<MemoryComparison>& comparisons, bool reserved) {
    std::vector<CaseComparison> out;
    for (const MemoryComparison& c : comparisons) {
        CaseComparison k;
        k.group = reserved ? "memory.reserved" : "memory.allocated";
        k.label = c.sample.id;
        k.unit = "bytes";
        k.measured = static_cast<double>(reserved ? c.sample.max_reserved : c.sample.max_allocated);
        k.predicted = static_cast<double>(reserved ? c.predicted.reserved_peak.value() : c.predicted.allocated_peak.value());
        out.push_back(k);
    }
    return out;
}

/// One case of the largest-batch search on the device (validation/memory/memory_bench.py, `max_batch`): the
/// largest batch whose training step ran, and the smallest that ran out of memory.
struct MaxBatchSample {
    std::string where;
    std::string id;
    std::string model;
    std::int64_t seq = 0;  ///< 0: the model's default
    Mode mode = Mode::train;
    Precision precision = Precision::fp32;
    Optimizer optimizer = Optimizer::sgd;
    Runtime runtime = Runtime::eager;
    std::int64_t largest_ok = 0;       ///< ran
    std::int64_t smallest_failed = 0;  ///< torch.cuda.OutOfMemoryError
};

/// A largest-batch case beside MemoryModel::max_batch.
struct MaxBatchComparison {
    MaxBatchSample sample;
    std::int64_t predicted = 0;
    /// predicted / largest batch that ran − 1.
    [[nodiscard]] double error() const {
        return static_cast<double>(predicted) / static_cast<double>(sample.largest_ok) - 1.0;
    }
    /// The prediction lies between the largest batch that ran and the smallest that failed (the search's bracket).
    [[nodiscard]] bool in_bracket() const {
        return predicted >= sample.largest_ok && predicted < sample.smallest_failed;
    }
};

/// MemoryModel::max_batch for every sample on `device` (its memory and context decide the answer).
inline std::vector<MaxBatchComparison> compare_max_batch(const std::vector<MaxBatchSample>& samples,
                                                         const memory::DeviceMemory& device) {
    std::vector<MaxBatchComparison> out;
    for (const MaxBatchSample& s : samples) {
        const Model model = models::build(s.model, {.seq = s.seq});
        memory::MemoryRequest r;
        r.precision = s.precision;
        r.mode = s.mode;
        r.optimizer = s.optimizer;
        r.runtime = s.runtime;
        out.push_back({s, memory::MemoryModel(model).max_batch(r, device).batch});
    }
    return out;
}

/// The comparisons as generic cases (group "memory.max_batch", in samples), for summarize().
inline std::vector<CaseComparison> max_batch_cases(const std::vector<MaxBatchComparison>& comparisons) {
    std::vector<CaseComparison> out;
    for (const MaxBatchComparison& c : comparisons) {
        CaseComparison k;
        k.group = "memory.max_batch";
        k.label = c.sample.id;
        k.unit = "samples";
        k.measured = static_cast<double>(c.sample.largest_ok);
        k.predicted = static_cast<double>(c.predicted);
        out.push_back(k);
    }
    return out;
}

}  // namespace roofplan::validation

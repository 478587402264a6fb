// roofplan/plan/scaling.hpp — a GPU-count sweep: data-parallel training on 1, 2, 4, ... GPUs of a system, with
// the throughput, scaling efficiency and exposed communication of each count (or why a count cannot run).
//
//     const Predictor predictor(model);
//     const auto points = scaling_sweep(predictor, device, default_profile(device), {.batch = 256},
//                                       find_system("dgx2"), std::array{1, 2, 4, 8, 16});
#pragma once

#include <roofplan/error.hpp>
#include <roofplan/system/parallel.hpp>

#include <optional>
#include <span>
#include <vector>

namespace roofplan {

/// One GPU count of a sweep.
struct ScalingPoint {
    int gpus = 0;
    double throughput = 0;     ///< samples/s, all GPUs
    double efficiency = 0;     ///< scaling efficiency
    double comm_fraction = 0;  ///< exposed communication / step time
    bool fits = true;          ///< the per-GPU batch fits in memory
    std::optional<Error> error;  ///< why this count cannot run (too many GPUs for the system, ...)
};

/// Predicts data-parallel training of `request` (per-GPU batch) on each of `gpu_counts` GPUs of `system`, with the
/// data-parallel settings of `base` (its `gpus` is each count in turn).  A count that cannot run is a point with an
/// error, not an exception.
inline std::vector<ScalingPoint> scaling_sweep(const Predictor& predictor, const Device& device,
                                               const EfficiencyProfile& profile, const PredictRequest& request,
                                               const System& system, std::span<const int> gpu_counts,
                                               ParallelRequest base = {}) {
    std::vector<ScalingPoint> out;
    for (int n : gpu_counts) {
        ScalingPoint pt;
        pt.gpus = n;
        try {
            ParallelRequest pr = base;
            pr.gpus = n;
            const ParallelPrediction p = predict_parallel(predictor, device, profile, request, system, pr);
            pt.throughput = p.throughput_samples_per_s;
            pt.efficiency = p.scaling_efficiency;
            pt.comm_fraction = p.comm_fraction;
            pt.fits = p.gpu.fits;
        } catch (const Error& e) {
            pt.error = e;
        }
        out.push_back(std::move(pt));
    }
    return out;
}

}  // namespace roofplan

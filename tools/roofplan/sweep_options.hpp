// tools/roofplan/sweep_options.hpp — the options compare and scaling share, and the GPU-count sweep they run.
#pragma once

#include "predict_options.hpp"

#include <roofplan/plan/scaling.hpp>

#include <string>
#include <vector>

namespace roofplan::cli {

struct SweepOptions {
    PredictOptions predict;
    std::string systems;  ///< compare: A,B,...; scaling: one
    std::string system_file;
    std::string gpus = "1,2,4,8,16";
    std::string batches;  ///< compare: per system
    std::string data_parallel = "ddp";
    bool single_flow = false;
    std::string svg;
};

inline void add_sweep_options(CLI::App* app, SweepOptions& o, bool compare) {
    add_device_options(app, o.predict.devices);
    add_model_source(app, o.predict.source);
    app->add_option(compare ? "--systems" : "--system", o.systems,
                    compare ? "Systems to compare, comma-separated (the first is the reference)" : "System id")
        ->required();
    app->add_option("--system-file", o.system_file, "JSON file with extra systems");
    app->add_option("--gpus", o.gpus, "GPU counts (in total), comma-separated (default 1,2,4,8,16)")
        ->check(int_list());
    app->add_option("--batch,-b", o.predict.batch, "Batch per GPU (default 32)")->check(positive_count());
    if (compare)
        app->add_option("--batch-per-system", o.batches, "Batch per GPU for each system, comma-separated")
            ->check(int_list(OptionLimits::max_batch));
    add_size_options(app, o.predict.source);
    app->add_option("--precision,-p", o.predict.precision, "fp32, tf32, amp-fp16, amp-bf16")->check(training_precision());
    app->add_option("--optimizer", o.predict.optimizer, "sgd or adam")->check(one_of<Optimizer>());
    add_runtime_option(app, o.predict, "eager (default), compiled or ideal (see predict --help)");
    app->add_option("--profile", o.predict.profile, "Calibrated efficiency profile (JSON)");
    app->add_option("--data-parallel", o.data_parallel, "ddp or dp")->check(one_of<DataParallel>());
    app->add_flag("--single-flow", o.single_flow, "Inter-node traffic on one TCP flow per node");
    add_output_flags(app, o.predict.json, o.predict.csv, "Print JSON",
                     "Print CSV (RFC 4180, raw numbers; one row per system and GPU count)");
    if (!compare) app->add_option("--svg", o.svg, "Write throughput vs GPUs (log-log) to this SVG file");
}

/// Training at `batch` per GPU on each GPU count of `counts` on system `s` (its GPU), resolved into `resolved`.
inline std::vector<ScalingPoint> sweep(const SweepOptions& o, const System& s, std::int64_t batch,
                                       const std::vector<int>& counts, Resolved& resolved) {
    PredictOptions po = o.predict;
    po.device = std::string(s.device.view());
    po.batch = batch;
    po.mode = "train";
    resolved = resolve(po);
    ParallelRequest base;
    base.links = profile_links(po.profile);
    base.mode = parse_data_parallel(o.data_parallel);
    base.single_flow = o.single_flow;
    return scaling_sweep(Predictor(resolved.model()), resolved.device, resolved.profile, resolved.request, s, counts,
                         base);
}

}  // namespace roofplan::cli

// roofplan/plan/plan.hpp — capacity planning: enumerate hardware options (systems at several GPU counts, single
// devices), predict a workload on each, check constraints (memory capacity, precision support, deadline, budget,
// power cap, throughput target) and rank the feasible options.
//
//   const Model model = models::find_model("resnet50").build();
//   const Predictor predictor(model);
//   const auto candidates = plan_candidates(builtin_systems(), DeviceCatalog{}, {}, 16);
//   PlanWorkload w;  w.batch_per_gpu = 256;  w.dataset = 1281167;  w.epochs = 90;
//   PlanConstraints c;  c.deadline_s = 24 * 3600.0;
//   const Plan plan = make_plan(predictor, candidates, w, c, PlanRank::time);
//   // plan.feasible: fastest first; plan.infeasible: each with its reasons
#pragma once

#include <roofplan/device/catalog.hpp>
#include <roofplan/engine/predict.hpp>
#include <roofplan/system/parallel.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace roofplan {

/// One hardware option: `gpus` GPUs of a system (on as few nodes as they need), or one device alone (no system,
/// no communication).  The system, when there is one, must outlive the candidate.
struct PlanCandidate {
    const System* system = nullptr;  ///< nullptr: a lone device
    Device device{};                 ///< the GPU (the system's, resolved in the catalog)
    EfficiencyProfile profile{};
    int gpus = 1;
    std::optional<double> price_per_gpu_hour;  ///< none: cost unknown

    /// The option's name: the system id, or the device id for a lone device.
    [[nodiscard]] std::string_view id() const { return system ? system->id.view() : device.id.view(); }
};

/// What runs: the batch (per GPU, or a global batch split evenly), precision, and either a training run
/// (dataset × epochs → time-to-train) or a throughput target, or neither (rank by throughput alone).
struct PlanWorkload {
    Mode mode = Mode::train;
    Precision precision = Precision::fp32;
    Optimizer optimizer = Optimizer::sgd;
    Runtime runtime = Runtime::ideal;  ///< how the framework runs it (PredictRequest::runtime)
    std::optional<memory::ContextFigure> context{};  ///< memory outside the allocator; none: the device's figure
    std::int64_t batch_per_gpu = 0;  ///< give this or global_batch
    std::int64_t global_batch = 0;   ///< split evenly over an option's GPUs
    double dataset = 0;              ///< samples per epoch (training; with epochs)
    double epochs = 0;
    double target_throughput = 0;    ///< samples/s an option must reach (0: no target)
    DataParallel data_parallel = DataParallel::ddp;
    bool overlap = true;
    bool single_flow = false;

    [[nodiscard]] bool has_run() const { return dataset > 0; }
};

/// Limits an option must respect.  Zero or none: no limit.
struct PlanConstraints {
    double deadline_s = 0;        ///< time-to-train at most this (needs a dataset)
    std::optional<double> budget{};  ///< total cost at most this (needs a dataset and prices)
    double power_cap_w = 0;       ///< GPUs × power (TDP, or the profile's measured power) at most this
};

/// How feasible options are ordered.
///   time:   time-to-train (with a dataset), else throughput, highest first
///   cost:   total cost (with a dataset), else cost per hour (with a throughput target), else cost per sample
///   energy: energy to train (with a dataset), else samples per joule, highest first
enum class PlanRank { time, cost, energy };

template <>
struct EnumNames<PlanRank> {
    static constexpr std::string_view field = "rank";
    static constexpr std::string_view what = "ranking";
    static constexpr std::array<std::string_view, 3> names{"time", "cost", "energy"};
};
inline PlanRank parse_plan_rank(std::string_view name) { return parse_enum<PlanRank>(name); }

/// What limits an option: the largest share of its step time (compute-bound kernels, memory-bandwidth-bound
/// kernels, per-kernel launch latency, exposed communication, the GPUs waiting for the host that dispatches their
/// work), or why it cannot run at all.
enum class PlanBound {
    compute,
    memory_bandwidth,
    latency,
    communication,
    host,
    memory_capacity,
    unsupported,
    none
};

template <>
struct EnumNames<PlanBound> {
    static constexpr std::string_view field = "bound";
    static constexpr std::array<std::string_view, 8> names{"compute",         "memory-bandwidth", "latency",
                                                           "communication",   "host",             "memory-capacity",
                                                           "unsupported",     "none"};
};

/// One evaluated option.
struct PlanOption {
    std::string system;  ///< empty for a lone device
    std::string device;
    int gpus = 1;
    int nodes = 1;
    std::int64_t batch_per_gpu = 0;
    std::int64_t global_batch = 0;
    bool predicted = false;  ///< false: no prediction (unsupported precision, batch does not split, ...)
    bool feasible = false;
    std::vector<std::string> reasons;  ///< why infeasible (all that apply)
    PlanBound bound = PlanBound::none;
    /// Shares of the step time: compute-bound kernels, memory-bound kernels (and the optimizer update),
    /// launch-latency-bound kernels, exposed communication, the GPUs idle waiting for the host (eager and compiled
    /// runtimes; nn.DataParallel's replicate).  They sum to 1.
    std::array<double, 5> shares{};
    double step_time_s = 0;
    double throughput = 0;  ///< samples/s, all GPUs
    double scaling_efficiency = 1;
    double comm_fraction = 0;
    double memory_bytes = 0;    ///< per GPU
    double capacity_bytes = 0;  ///< per GPU
    std::int64_t max_batch = 0; ///< per GPU
    double power_w = 0;         ///< all GPUs
    double samples_per_joule = 0;
    std::optional<double> price_per_gpu_hour;
    std::optional<double> cost_per_hour;  ///< gpus × price
    std::optional<double> time_s;         ///< time-to-train (with a dataset)
    std::optional<double> steps;
    std::optional<double> gpu_hours;
    std::optional<double> cost;
    std::optional<double> energy_j;

    /// The option's name as a planner shows it: "dgx2 x16", "v100-sxm2-16gb x1".
    [[nodiscard]] std::string label() const {
        return (system.empty() ? device : system) + " x" + std::to_string(gpus);
    }
};

/// The result: feasible options ranked (best first) and the infeasible ones, each with its reasons.
struct Plan {
    PlanRank rank = PlanRank::time;
    std::vector<PlanOption> feasible;
    std::vector<PlanOption> infeasible;
};

namespace detail {

/// A number for messages: whole numbers from 1000 on ("20000", "2400"), else `digits` significant digits
/// ("93.6", "2.75", "0.00123").
inline std::string plan_number(double v, int digits = 3) {
    char buffer[48];
    if (std::fabs(v) >= 1000 && std::fabs(v) < 1e15) std::snprintf(buffer, sizeof buffer, "%.0f", v);
    else std::snprintf(buffer, sizeof buffer, "%.*g", digits, v);
    return buffer;
}

}  // namespace detail

/// The GPU counts a plan tries on a system: 1, 2, 4, ... below one node, one whole node, then whole nodes,
/// doubling (2, 4, 8, ... nodes) up to the system's node limit (and that limit itself); at most `max_gpus`
/// (0: no limit).  E.g. dgx2: 1 2 4 8 16 32 64 ...; r740-p40 (3 GPUs, one node): 1 2 3.
inline std::vector<int> plan_gpu_counts(const System& s, int max_gpus = 0) {
    if (max_gpus < 0) detail::fail("the maximum number of GPUs must be >= 1 (or 0: no limit), got ", max_gpus);
    std::vector<int> out;
    const auto add = [&](long long n) {
        if ((max_gpus == 0 || n <= max_gpus) && (out.empty() || out.back() < n)) out.push_back(static_cast<int>(n));
    };
    for (int n = 1; n < s.gpus_per_node; n *= 2) add(n);
    int nodes = 1;
    for (; nodes <= s.max_nodes; nodes *= 2) add(static_cast<long long>(nodes) * s.gpus_per_node);
    if (nodes / 2 != s.max_nodes) add(static_cast<long long>(s.max_nodes) * s.gpus_per_node);
    return out;
}

/// The candidates of a plan: every system of `systems` at plan_gpu_counts (its GPU looked up in `catalog`),
/// then every device of `lone_devices` alone (1 GPU).  Profiles are the per-generation defaults.
inline std::vector<PlanCandidate> plan_candidates(std::span<const System> systems, const DeviceCatalog& catalog,
                                                  std::span<const Device> lone_devices, int max_gpus = 0) {
    std::vector<PlanCandidate> out;
    for (const System& s : systems) {
        const Device& d = catalog.find(s.device.view());
        for (int n : plan_gpu_counts(s, max_gpus)) {
            PlanCandidate c;
            c.system = &s;
            c.device = d;
            c.profile = default_profile(d);
            c.gpus = n;
            out.push_back(c);
        }
    }
    for (const Device& d : lone_devices) {
        PlanCandidate c;
        c.device = d;
        c.profile = default_profile(d);
        out.push_back(c);
    }
    return out;
}

/// Checks that a workload and constraints make sense together (and with the candidates' prices); errors say
/// what to give instead.
inline void validate_plan(std::span<const PlanCandidate> candidates, const PlanWorkload& w, const PlanConstraints& c,
                          PlanRank rank) {
    if (w.batch_per_gpu != 0 && w.global_batch != 0)
        detail::fail("give a batch per GPU (", field_ref("batch_per_gpu"), ") or a global batch (", field_ref("global_batch"),
                     "), not both");
    if (w.batch_per_gpu == 0 && w.global_batch == 0)
        detail::fail("give a batch per GPU (", field_ref("batch_per_gpu"), ") or a global batch (", field_ref("global_batch"),
                     ")");
    if (w.batch_per_gpu < 0) detail::fail("the batch per GPU must be a positive integer, got ", w.batch_per_gpu);
    if (w.global_batch < 0) detail::fail("the global batch must be a positive integer, got ", w.global_batch);
    if (!(w.dataset >= 0) || !(w.epochs >= 0) || !std::isfinite(w.dataset) || !std::isfinite(w.epochs))
        detail::fail("dataset size and epochs must be positive numbers");
    if ((w.dataset > 0) != (w.epochs > 0))
        detail::fail("time-to-train needs both a dataset size (", field_ref("dataset"), ", samples per epoch) and ",
                     field_ref("epochs"));
    if (w.mode == Mode::infer && w.has_run())
        detail::fail(field_ref("dataset"), "/", field_ref("epochs"), " are for training; for inference give ",
                     field_ref("target_throughput"), " (samples/s)");
    if (!(w.target_throughput >= 0) || !std::isfinite(w.target_throughput))
        detail::fail("the throughput target must be >= 0 samples/s, got ", detail::plan_number(w.target_throughput));
    if (!(c.deadline_s >= 0) || !std::isfinite(c.deadline_s))
        detail::fail("the deadline must be a positive number of hours, got ", detail::plan_number(c.deadline_s / 3600));
    if (c.deadline_s > 0 && !w.has_run())
        detail::fail_about("deadline", "a deadline needs a time-to-train: give ", field_ref("dataset"),
                           " (samples per epoch) and ", field_ref("epochs"));
    if (!(c.power_cap_w >= 0) || !std::isfinite(c.power_cap_w))
        detail::fail("the power cap must be a positive number of watts, got ", detail::plan_number(c.power_cap_w));
    const bool any_price = std::any_of(candidates.begin(), candidates.end(),
                                       [](const PlanCandidate& k) { return k.price_per_gpu_hour.has_value(); });
    for (const PlanCandidate& k : candidates)
        if (k.price_per_gpu_hour && (!(*k.price_per_gpu_hour >= 0) || !std::isfinite(*k.price_per_gpu_hour)))
            detail::fail("the price per GPU-hour of '", k.id(), "' must be >= 0, got ",
                         detail::plan_number(*k.price_per_gpu_hour));
    if (c.budget) {
        if (!(*c.budget >= 0) || !std::isfinite(*c.budget))
            detail::fail("the budget must be a positive amount, got ", detail::plan_number(*c.budget));
        if (!w.has_run())
            detail::fail_about("budget", "a budget is a total cost: give ", field_ref("dataset"), " (samples per epoch) and ",
                               field_ref("epochs"), " as well");
        if (!any_price)
            detail::fail_about("budget", "a budget needs prices per GPU-hour; roofplan has no price list: give ",
                               field_ref("price_per_gpu_hour"), " (one price for every option) or ",
                               field_ref("price_by_id"), " (per system or device id)");
    }
    if (rank == PlanRank::cost && !any_price)
        detail::fail_about("rank", "ranking by cost needs prices per GPU-hour: give ", field_ref("price_per_gpu_hour"),
                           " or ", field_ref("price_by_id"));
    if (candidates.empty()) detail::fail("no options to plan over (check the system, device and GPU-count filters)");
}

namespace detail {

/// The prediction of one option: data-parallel training on a system, or GPUs that work independently (inference,
/// or one device alone: no communication).
inline ParallelPrediction predict_option(const Predictor& predictor, const PlanCandidate& k, const PlanWorkload& w,
                                         PredictRequest request) {
    ParallelPrediction p;
    if (k.system && w.mode == Mode::train) {
        ParallelRequest pr;
        pr.gpus = k.gpus;
        pr.mode = w.data_parallel;
        pr.overlap = w.overlap;
        pr.single_flow = w.single_flow;
        return predict_parallel(predictor, k.device, k.profile, request, *k.system, pr);
    }
    request.per_layer = true;
    if (k.system) {
        ParallelRequest pr;
        pr.gpus = k.gpus;
        p.nodes = placement(*k.system, pr).nodes;
    }
    p.gpu = predictor(k.device, k.profile, request);
    p.gpus = k.gpus;
    p.step_time = p.gpu.step_time;
    p.compute_time = p.gpu.step_time;
    p.throughput_samples_per_s = p.gpu.throughput_samples_per_s * k.gpus;
    p.scaling_efficiency = 1;
    return p;
}

/// Shares of the step: each layer's time goes to the bound of its slowest pass; the optimizer update streams
/// memory; the exposed communication is what DDP could not hide; the host's share is the time the GPU waits for
/// the CPU that dispatches its kernels (the kernel-level runtimes' idle time beyond the gaps between back-to-back
/// kernels, and nn.DataParallel's replicate beyond its copies).  The bound is the largest share (plan's options
/// read synthetic input: no input pipeline).
inline void fill_shares(const ParallelPrediction& p, PlanOption& o) {
    std::array<double, 5> share{};
    const Prediction& g = p.gpu;
    for (const LayerPrediction& lp : g.layers) {
        const std::size_t at = lp.bound == Bound::compute ? 0 : lp.bound == Bound::memory ? 1 : 2;
        share[at] += lp.time.value();
    }
    share[1] += g.phase_time[Phase::optimizer].value();
    share[3] = p.exposed_comm.value();
    if (g.runtime != Runtime::ideal) share[4] = std::max(0.0, g.step_time.value() - g.gpu_busy_s - g.gpu_gap_s);
    share[4] += p.dp.host_exposed_s;
    double total = 0;
    for (double s : share) total += s;
    for (std::size_t i = 0; i < share.size(); ++i) o.shares[i] = total > 0 ? share[i] / total : 0;
    const auto largest = static_cast<std::size_t>(std::max_element(o.shares.begin(), o.shares.end()) - o.shares.begin());
    constexpr std::array<PlanBound, 5> kinds{PlanBound::compute, PlanBound::memory_bandwidth, PlanBound::latency,
                                             PlanBound::communication, PlanBound::host};
    o.bound = kinds[largest];
}

/// The figures of a predicted option (throughput, memory, power, the training run).
inline void fill_figures(const ParallelPrediction& p, const PlanCandidate& k, const PlanWorkload& w, PlanOption& o) {
    o.predicted = true;
    o.nodes = p.nodes;
    o.step_time_s = p.step_time.value();
    o.throughput = p.throughput_samples_per_s;
    o.scaling_efficiency = p.scaling_efficiency;
    o.comm_fraction = p.comm_fraction;
    o.memory_bytes = static_cast<double>(p.gpu.memory.total.value());
    o.capacity_bytes = static_cast<double>(p.gpu.capacity.value());
    o.max_batch = p.gpu.max_batch;
    o.power_w = p.gpu.power.value() * k.gpus;
    o.samples_per_joule = o.throughput / o.power_w;
    fill_shares(p, o);
    if (w.has_run()) {
        const TrainingRun run = time_to_train(p, o.batch_per_gpu, w.dataset, w.epochs, k.price_per_gpu_hour.value_or(0));
        o.time_s = run.time.value();
        o.steps = run.steps;
        o.gpu_hours = run.gpu_hours;
        if (k.price_per_gpu_hour) o.cost = run.cost;
        o.energy_j = o.power_w * run.time.value();
    }
}

/// Every limit a predicted option breaks, as a reason.
inline void check_limits(const ParallelPrediction& p, const PlanCandidate& k, const PlanWorkload& w,
                         const PlanConstraints& c, PlanRank rank, PlanOption& o) {
    const auto gib = [](double bytes) { return plan_number(bytes / 1073741824.0, 3) + " GiB"; };
    if (!p.gpu.fits) {
        o.bound = PlanBound::memory_capacity;
        o.reasons.push_back(cat("batch ", o.batch_per_gpu, " per GPU needs ", gib(o.memory_bytes), " of ",
                                gib(o.capacity_bytes), " (the largest batch that fits is ", p.gpu.max_batch, ")"));
    }
    if (w.target_throughput > 0 && o.throughput < w.target_throughput)
        o.reasons.push_back(cat("reaches ", plan_number(o.throughput, 4), " samples/s, below the target of ",
                                plan_number(w.target_throughput, 4)));
    if (c.deadline_s > 0 && o.time_s && *o.time_s > c.deadline_s)
        o.reasons.push_back(cat("time to train ", plan_number(*o.time_s / 3600, 3), " h exceeds the deadline of ",
                                plan_number(c.deadline_s / 3600, 3), " h"));
    if (c.budget) {
        if (!o.cost)
            o.reasons.push_back(cat("no price per GPU-hour for '", k.id(), "', so the budget cannot be checked"));
        else if (*o.cost > *c.budget)
            o.reasons.push_back(cat("cost ", plan_number(*o.cost, 4), " exceeds the budget of ", plan_number(*c.budget, 4)));
    }
    if (rank == PlanRank::cost && !o.cost_per_hour && !c.budget)  // (with a budget, said above)
        o.reasons.push_back(cat("no price per GPU-hour for '", k.id(), "' to rank by cost"));
    if (c.power_cap_w > 0 && o.power_w > c.power_cap_w)
        o.reasons.push_back(cat("draws ", plan_number(o.power_w, 4), " W (", k.gpus, " x ",
                                plan_number(p.gpu.power.value(), 4), " W), above the power cap of ",
                                plan_number(c.power_cap_w, 4), " W"));
}

}  // namespace detail

/// Predicts one option and checks it against the constraints.  Never throws for what an option cannot do
/// (unsupported precision, a batch that does not split or fit): those make it infeasible with a reason.
inline PlanOption evaluate_option(const Predictor& predictor, const PlanCandidate& k, const PlanWorkload& w,
                                  const PlanConstraints& c, PlanRank rank = PlanRank::time) {
    PlanOption o;
    o.system = k.system ? std::string(k.system->id.view()) : std::string();
    o.device = std::string(k.device.id.view());
    o.gpus = k.gpus;
    o.price_per_gpu_hour = k.price_per_gpu_hour;
    if (k.price_per_gpu_hour) o.cost_per_hour = *k.price_per_gpu_hour * k.gpus;
    const auto infeasible = [&](PlanBound b, std::string reason) {
        o.feasible = false;
        o.bound = b;
        o.reasons.push_back(std::move(reason));
        return o;
    };
    if (w.global_batch > 0) {
        o.global_batch = w.global_batch;
        if (w.global_batch % k.gpus != 0)
            return infeasible(PlanBound::none, detail::cat("the global batch ", w.global_batch,
                                                           " does not split evenly over ", k.gpus, " GPUs"));
        o.batch_per_gpu = w.global_batch / k.gpus;
    } else {
        o.batch_per_gpu = w.batch_per_gpu;
        o.global_batch = detail::mul(w.batch_per_gpu, k.gpus, "global batch");
    }
    PredictRequest request;
    request.batch = o.batch_per_gpu;
    request.precision = w.precision;
    request.mode = w.mode;
    request.optimizer = w.optimizer;
    request.runtime = w.runtime;
    request.context = w.context;
    ParallelPrediction p;
    try {
        if (!supports(k.device, w.precision, w.mode)) (void)math_class(k.device, w.precision, w.mode);  // the reason
        p = detail::predict_option(predictor, k, w, request);
    } catch (const Error& e) {
        return infeasible(PlanBound::unsupported, e.what());
    }
    detail::fill_figures(p, k, w, o);
    detail::check_limits(p, k, w, c, rank, o);
    o.feasible = o.reasons.empty();
    return o;
}

/// The ranking key of an option (smaller is better) and its name for reports.
inline double plan_rank_key(const PlanOption& o, PlanRank rank, const PlanWorkload& w) {
    switch (rank) {
        case PlanRank::time: return o.time_s ? *o.time_s : -o.throughput;
        case PlanRank::cost:
            if (o.cost) return *o.cost;
            if (!o.cost_per_hour) return HUGE_VAL;
            return w.target_throughput > 0 ? *o.cost_per_hour : *o.cost_per_hour / (3600.0 * o.throughput);
        case PlanRank::energy: return o.energy_j ? *o.energy_j : -o.samples_per_joule;
    }
    return 0;
}
inline std::string_view plan_rank_key_name(PlanRank rank, const PlanWorkload& w) {
    switch (rank) {
        case PlanRank::time: return w.has_run() ? "time_to_train_s" : "throughput_samples_per_s";
        case PlanRank::cost:
            return w.has_run() ? "cost" : w.target_throughput > 0 ? "cost_per_hour" : "cost_per_sample";
        case PlanRank::energy: return w.has_run() ? "energy_j" : "samples_per_joule";
    }
    return "";
}

/// Sorts options best first by `rank`; ties go to the higher throughput, then to fewer GPUs, then by name.
inline void rank_options(std::vector<PlanOption>& options, PlanRank rank, const PlanWorkload& w) {
    std::stable_sort(options.begin(), options.end(), [&](const PlanOption& a, const PlanOption& b) {
        const double ka = plan_rank_key(a, rank, w), kb = plan_rank_key(b, rank, w);
        if (ka != kb) return ka < kb;
        if (a.throughput != b.throughput) return a.throughput > b.throughput;
        if (a.gpus != b.gpus) return a.gpus < b.gpus;
        return a.label() < b.label();
    });
}

/// Evaluates every candidate and ranks the feasible ones (the infeasible ones too: predicted ones first, in ranking
/// order, then those with no prediction).  `progress(done, total, candidate)` is called before
/// each candidate (for a progress display; the library never prints).
inline Plan make_plan(const Predictor& predictor, std::span<const PlanCandidate> candidates, const PlanWorkload& w,
                      const PlanConstraints& c, PlanRank rank = PlanRank::time,
                      const std::function<void(std::size_t, std::size_t, const PlanCandidate&)>& progress = {}) {
    validate_plan(candidates, w, c, rank);
    Plan plan;
    plan.rank = rank;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        if (progress) progress(i, candidates.size(), candidates[i]);
        PlanOption o = evaluate_option(predictor, candidates[i], w, c, rank);
        (o.feasible ? plan.feasible : plan.infeasible).push_back(std::move(o));
    }
    rank_options(plan.feasible, rank, w);
    // The infeasible ones: those that ran but broke a limit first, in ranking order (the nearest misses of a
    // deadline or budget lead), then those that cannot run at all (precision, batch split).
    rank_options(plan.infeasible, rank, w);
    std::stable_partition(plan.infeasible.begin(), plan.infeasible.end(), [](const PlanOption& o) { return o.predicted; });
    return plan;
}

}  // namespace roofplan

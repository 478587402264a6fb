// tools/roofplan/plan.cpp — `roofplan plan`: rank hardware options for a workload under constraints.
#include "commands.hpp"
#include "predict_options.hpp"
#include "progress.hpp"

#include <roofplan/plan/plan.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <optional>

namespace roofplan::cli {
namespace {

struct PlanOptions {
    PredictOptions predict;  // model, batch (per GPU), seq, image size, precision, mode, optimizer, device files
    std::int64_t global_batch = 0;
    double dataset = 0, epochs = 0;         ///< samples per epoch, epochs: time-to-train
    double target_throughput = 0;           ///< samples/s
    double deadline_h = 0, budget = 0;      ///< hours; money
    std::string price;                      ///< "P", "ID=P,ID=P" or "P,ID=P"
    double power_cap_w = 0;
    int max_gpus = 0;
    std::string systems, devices;           ///< comma-separated filters
    std::string system_file;
    std::string data_parallel = "ddp";
    bool no_overlap = false, single_flow = false;
    std::string rank = "time";
    int top = 15;
    // Which options were given (CLI11 2.1 has no std::optional options).
    CLI::Option *deadline_given = nullptr, *budget_given = nullptr, *power_cap_given = nullptr;
    CLI::Option *target_given = nullptr, *max_gpus_given = nullptr, *batch_given = nullptr;
};

/// --price: "3.5" (every option), "dgx2=30,v100=2.5" (per id), or "3.5,dgx2=30" (default and overrides).
struct PriceList {
    std::optional<double> everything;
    std::vector<std::pair<std::string, double>> by_id;
};

double parse_price_value(const std::string& text, const std::string& item) {
    double v = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || !(v >= 0) || !std::isfinite(v))
        fail("--price: '", item, "' is not a price; give a number >= 0 per GPU-hour, e.g. 2.5 or dgx2=2.5,aws-p3dn=3.9");
    return v;
}

PriceList parse_prices(const std::string& text) {
    PriceList out;
    if (text.empty()) return out;
    for (const std::string& item : parse_list(text)) {
        const auto eq = item.find('=');
        if (eq == std::string::npos) {
            if (out.everything) fail("--price: more than one price without an id ('", item, "')");
            out.everything = parse_price_value(item, item);
        } else {
            const std::string id = item.substr(0, eq);
            if (id.empty()) fail("--price: '", item, "' has no id before '='");
            out.by_id.emplace_back(id, parse_price_value(item.substr(eq + 1), item));
        }
    }
    return out;
}

/// Gives each candidate its price; an id that names no candidate is an error with suggestions.
void apply_prices(std::vector<PlanCandidate>& candidates, const PriceList& prices) {
    for (PlanCandidate& c : candidates) c.price_per_gpu_hour = prices.everything;
    for (const auto& [id, value] : prices.by_id) {
        bool used = false;
        for (PlanCandidate& c : candidates)
            if (c.system ? c.system->answers_to(id) : c.device.answers_to(id)) {
                c.price_per_gpu_hour = value;
                used = true;
            }
        if (used) continue;
        std::vector<std::string> names;
        for (const PlanCandidate& c : candidates) names.emplace_back(c.id());
        const std::string hint = did_you_mean(id, names, 1);
        fail("--price: '", id, "' is none of the options planned over (a system id, or a device id for a device alone)",
             hint.empty() ? "" : "; " + hint);
    }
}

/// The candidates the options ask for (--systems, --devices, --max-gpus).
std::vector<PlanCandidate> candidates_for(const PlanOptions& o, const DeviceCatalog& catalog,
                                          std::vector<System>& systems_out) {
    std::vector<const Device*> wanted_devices;
    if (!o.devices.empty())
        for (const std::string& id : parse_list(o.devices)) wanted_devices.push_back(&catalog.find(id));
    systems_out.clear();
    if (!o.systems.empty()) {
        for (const std::string& id : parse_list(o.systems)) systems_out.push_back(pick_system(id, o.system_file));
    } else {
        const auto wanted = [&](const System& s) {
            if (wanted_devices.empty()) return true;
            const Device& d = catalog.find(s.device.view());
            return std::any_of(wanted_devices.begin(), wanted_devices.end(),
                               [&](const Device* w) { return w->id.view() == d.id.view(); });
        };
        for (const System& s : system_catalog(o.system_file))
            if (wanted(s)) systems_out.push_back(s);
    }
    std::vector<Device> lone;
    if (!wanted_devices.empty()) {
        for (const Device* d : wanted_devices) lone.push_back(*d);
    } else if (o.systems.empty()) {
        lone.assign(catalog.devices().begin(), catalog.devices().end());
    }
    return plan_candidates(systems_out, catalog, lone, o.max_gpus);
}

/// The workload the options describe (the model's precision, mode and optimizer come with `r`).
PlanWorkload workload_of(const PlanOptions& o) {
    PlanWorkload w;
    if (o.global_batch != 0 && o.batch_given->count() > 0) fail("give --batch (per GPU) or --global-batch, not both");
    if (o.global_batch < 0) fail("--global-batch must be a positive integer, got ", o.global_batch);
    if (o.batch_given->count() > 0) require_batch(o.predict.batch);
    w.global_batch = o.global_batch;
    w.batch_per_gpu = o.global_batch != 0 ? 0 : (o.predict.batch ? o.predict.batch : 32);
    w.dataset = o.dataset;
    w.epochs = o.epochs;
    if (o.target_given->count() > 0 && !(o.target_throughput > 0))
        fail("--target-throughput must be > 0 samples/s, got ", fixed(o.target_throughput, 3));
    w.target_throughput = o.target_throughput;
    w.data_parallel = parse_data_parallel(o.data_parallel);
    w.overlap = !o.no_overlap;
    w.single_flow = o.single_flow;
    return w;
}

PlanConstraints constraints_of(const PlanOptions& o) {
    PlanConstraints c;
    if (o.deadline_given->count() > 0 && !(o.deadline_h > 0 && o.deadline_h <= 1e9))
        fail("--deadline must be a positive number of hours, got ", fixed(o.deadline_h, 3));
    c.deadline_s = o.deadline_h * 3600.0;
    if (o.budget_given->count() > 0) {
        if (!(o.budget > 0)) fail("--budget must be a positive amount, got ", fixed(o.budget, 2));
        c.budget = o.budget;
    }
    if (o.power_cap_given->count() > 0 && !(o.power_cap_w > 0))
        fail("--power-cap must be a positive number of watts, got ", fixed(o.power_cap_w, 1));
    c.power_cap_w = o.power_cap_w;
    if (o.max_gpus_given->count() > 0 && o.max_gpus < 1) fail("--max-gpus must be a positive integer, got ", o.max_gpus);
    if (o.top < 0) fail("--top must be >= 0 (0: all rows), got ", o.top);
    return c;
}

/// A number CSV and JSON show only when the option was predicted (else empty / null).
Cell figure(bool known, double v) { return known ? Cell("", v) : Cell::missing(); }
Cell optional_figure(const std::optional<double>& v) { return v ? Cell("", *v) : Cell::missing(); }

/// The machine views of a plan: one row per option, the ranked feasible ones first (rank 1, 2, ...), then the
/// infeasible ones (no rank).
Table option_table(const Plan& plan) {
    std::vector<Column> columns = machine_columns(
        {"rank", "system", "device", "gpus", "nodes", "batch_per_gpu", "global_batch", "feasible", "bound",
         "throughput_samples_per_s", "step_time_s", "scaling_efficiency", "comm_fraction", "time_to_train_s",
         "gpu_hours", "cost", "cost_per_hour", "energy_j", "power_w", "samples_per_joule", "memory_bytes",
         "capacity_bytes", "max_batch", "reasons"});
    for (const char* json_only : {"price_per_gpu_hour", "steps", "step_share"}) columns.push_back({"", "", json_only});
    Table t(columns);
    const auto add = [&](const PlanOption& x, std::size_t rank) {
        std::string why;
        for (const std::string& reason : x.reasons) why += (why.empty() ? "" : "; ") + reason;
        const bool p = x.predicted;
        const json share = p ? json{{"compute", x.shares[0]}, {"memory_bandwidth", x.shares[1]},
                                    {"latency", x.shares[2]}, {"communication", x.shares[3]},
                                    {"host", x.shares[4]}}
                             : json(nullptr);
        t.add({rank ? Cell("", rank) : Cell::missing(),
               Cell::structured(x.system, x.system.empty() ? json(nullptr) : json(x.system)), x.device,
               Cell("", x.gpus), p ? Cell("", x.nodes) : Cell::missing(),
               x.batch_per_gpu ? Cell("", x.batch_per_gpu) : Cell::missing(), Cell("", x.global_batch),
               Cell("", x.feasible), std::string(to_string(x.bound)), figure(p, x.throughput), figure(p, x.step_time_s),
               figure(p, x.scaling_efficiency), figure(p, x.comm_fraction), optional_figure(x.time_s),
               optional_figure(x.gpu_hours), optional_figure(x.cost), optional_figure(x.cost_per_hour),
               optional_figure(x.energy_j), figure(p, x.power_w), figure(p, x.samples_per_joule),
               figure(p, x.memory_bytes), figure(p, x.capacity_bytes), p ? Cell("", x.max_batch) : Cell::missing(),
               Cell::structured(why, x.reasons), optional_figure(x.price_per_gpu_hour), optional_figure(x.steps),
               Cell::structured("", share)});
    };
    for (std::size_t i = 0; i < plan.feasible.size(); ++i) add(plan.feasible[i], i + 1);
    for (const PlanOption& x : plan.infeasible) add(x, 0);
    return t;
}

json plan_json(const PlanOptions& o, const Resolved& r, const PlanWorkload& w, const PlanConstraints& c,
               PlanRank rank, std::size_t evaluated, const Plan& plan) {
    const json options = option_table(plan).json();
    json feasible = json::array(), infeasible = json::array();
    for (std::size_t i = 0; i < options.size(); ++i) (i < plan.feasible.size() ? feasible : infeasible).push_back(options[i]);
    json out = {{"model", r.model_id()},
                {"mode", to_string(w.mode)},
                {"precision", to_string(w.precision)},
                {"batch_per_gpu", w.batch_per_gpu ? json(w.batch_per_gpu) : json(nullptr)},
                {"global_batch", w.global_batch ? json(w.global_batch) : json(nullptr)},
                {"dataset", w.has_run() ? json(w.dataset) : json(nullptr)},
                {"epochs", w.has_run() ? json(w.epochs) : json(nullptr)},
                {"target_throughput", w.target_throughput > 0 ? json(w.target_throughput) : json(nullptr)},
                {"data_parallel", to_string(w.data_parallel)},
                {"constraints",
                 {{"deadline_h", c.deadline_s > 0 ? json(o.deadline_h) : json(nullptr)},
                  {"budget", c.budget ? json(*c.budget) : json(nullptr)},
                  {"power_cap_w", c.power_cap_w > 0 ? json(c.power_cap_w) : json(nullptr)},
                  {"max_gpus", o.max_gpus > 0 ? json(o.max_gpus) : json(nullptr)}}},
                {"rank", to_string(rank)},
                {"rank_key", plan_rank_key_name(rank, w)},
                {"options_evaluated", evaluated},
                {"feasible", feasible},
                {"infeasible", infeasible}};
    if (w.mode == Mode::train) out["optimizer"] = to_string(w.optimizer);
    out[r.loaded->uses_seq ? "seq" : "image_size"] = r.loaded->size;
    return out;
}

/// The header of the terminal view: the workload, the constraints and how options are ranked.
void print_plan_header(const PlanOptions& o, const Resolved& r, const PlanWorkload& w, const PlanConstraints& c,
                       PlanRank rank, std::size_t evaluated, const Plan& plan) {
    std::cout << "plan for " << r.model_id() << ", " << (w.mode == Mode::train ? "training" : "inference") << ", "
              << to_string(w.precision) << ", "
              << (w.global_batch ? "global batch " + std::to_string(w.global_batch)
                                 : "batch " + std::to_string(w.batch_per_gpu) + " per GPU");
    if (w.has_run()) std::cout << ", " << grouped(static_cast<std::int64_t>(w.dataset)) << " samples x " << w.epochs << " epochs";
    if (w.target_throughput > 0) std::cout << ", target " << fixed(w.target_throughput, 1) << " samples/s";
    std::vector<std::string> limits;
    if (c.deadline_s > 0) limits.push_back("deadline " + fixed(o.deadline_h, 2) + " h");
    if (c.budget) limits.push_back("budget " + fixed(*c.budget, 2));
    if (c.power_cap_w > 0) limits.push_back("power cap " + fixed(c.power_cap_w, 0) + " W");
    if (o.max_gpus > 0) limits.push_back("at most " + std::to_string(o.max_gpus) + " GPUs");
    limits.push_back("the batch fits in memory");
    limits.push_back("the GPU supports " + std::string(to_string(w.precision)));
    std::cout << "\nconstraints: ";
    for (std::size_t i = 0; i < limits.size(); ++i) std::cout << (i ? ", " : "") << limits[i];
    std::cout << "\n" << evaluated << " options evaluated: " << plan.feasible.size() << " feasible, "
              << plan.infeasible.size() << " infeasible; ranked by ";
    if (rank == PlanRank::time) std::cout << (w.has_run() ? "time-to-train (fastest first)" : "throughput (highest first)");
    else if (rank == PlanRank::cost)
        std::cout << (w.has_run() ? "total cost" : w.target_throughput > 0 ? "cost per hour" : "cost per sample")
                  << " (cheapest first)";
    else std::cout << (w.has_run() ? "energy to train (least first)" : "samples per joule (highest first)");
    std::cout << "\nbound: the largest share of the step (compute, memory-bandwidth, latency: kernel launches, "
                 "communication: exposed collectives, host: GPUs waiting for the CPU's dispatch); "
                 "power: GPUs x TDP\n\n";
}

/// The terminal's table of feasible options (the columns a run, prices and energy add where they apply).
Table feasible_table(const Plan& plan, const PlanWorkload& w, std::size_t limit) {
    const bool priced = std::any_of(plan.feasible.begin(), plan.feasible.end(),
                                    [](const PlanOption& x) { return x.cost_per_hour.has_value(); });
    const bool run = w.has_run();
    Table t({{"#", "", "", true}, {"option", "", ""}, {"GPU", "", ""}, {"nodes", "", "", true},
             {"batch/GPU", "", "", true}, {"samples/s", "", "", true}, {"scaling", "", "", true},
             {run ? "time" : "", "", "", true}, {priced ? (run ? "cost" : "cost/h") : "", "", "", true},
             {run ? "energy kWh" : "", "", "", true}, {"power W", "", "", true}, {"mem/GPU", "", "", true},
             {"bound", "", ""}});
    for (std::size_t i = 0; i < plan.feasible.size() && i < limit; ++i) {
        const PlanOption& x = plan.feasible[i];
        const std::optional<double> money = run ? x.cost : x.cost_per_hour;
        t.add({std::to_string(i + 1), x.label(), x.device, std::to_string(x.nodes), std::to_string(x.batch_per_gpu),
               fixed(x.throughput, 1), fixed(100 * x.scaling_efficiency, 1) + "%",
               run ? duration_text(*x.time_s) : "", money ? fixed(*money, 2) : "-",
               run ? fixed(*x.energy_j / 3.6e6, 1) : "", fixed(x.power_w, 0),
               fixed(x.memory_bytes / 1073741824.0, 1) + "/" + fixed(x.capacity_bytes / 1073741824.0, 0) + " GiB",
               std::string(to_string(x.bound))});
    }
    return t;
}

Table infeasible_table(const Plan& plan, std::size_t limit) {
    Table t({{"option", "", ""}, {"GPU", "", ""}, {"batch/GPU", "", "", true}, {"bound", "", ""}, {"why", "", ""}});
    for (std::size_t i = 0; i < plan.infeasible.size() && i < limit; ++i) {
        const PlanOption& x = plan.infeasible[i];
        std::string why;
        for (const std::string& reason : x.reasons) why += (why.empty() ? "" : "; ") + reason;
        t.add({x.label(), x.device, x.batch_per_gpu ? std::to_string(x.batch_per_gpu) : "-",
               std::string(to_string(x.bound)), why});
    }
    return t;
}

void print_plan(const PlanOptions& o, const Plan& plan, const PlanWorkload& w) {
    const std::size_t limit = o.top == 0 ? SIZE_MAX : static_cast<std::size_t>(o.top);
    if (plan.feasible.empty()) std::cout << "no feasible option\n";
    else std::cout << "feasible:\n" << feasible_table(plan, w, limit).render();
    if (plan.feasible.size() > limit)
        std::cout << "... and " << plan.feasible.size() - limit << " more (--top 0 shows all)\n";
    if (plan.infeasible.empty()) return;
    std::cout << "\ninfeasible:\n" << infeasible_table(plan, limit).render();
    if (plan.infeasible.size() > limit)
        std::cout << "... and " << plan.infeasible.size() - limit << " more (--top 0 shows all)\n";
}

int run_plan(const PlanOptions& o) {
    PlanWorkload w = workload_of(o);
    const PlanConstraints c = constraints_of(o);
    const PlanRank rank = parse_plan_rank(o.rank);
    const DeviceCatalog catalog = o.predict.devices.catalog();
    std::vector<System> systems;
    std::vector<PlanCandidate> candidates = candidates_for(o, catalog, systems);
    apply_prices(candidates, parse_prices(o.price));
    if (candidates.empty()) fail("no options to plan over: --max-gpus ", o.max_gpus, " with the systems/devices chosen");
    // The model, resolved as `predict` does (the first option's GPU stands in for the device).
    PredictOptions po = o.predict;
    po.device = std::string(candidates.front().device.id.view());
    po.batch = w.batch_per_gpu ? w.batch_per_gpu : 1;
    const Resolved r = resolve(po);
    w.mode = r.request.mode;
    w.precision = r.request.precision;
    w.optimizer = r.request.optimizer;
    w.runtime = r.request.runtime;
    w.context = r.request.context;
    const Predictor predictor(r.model());
    Progress progress = Progress::for_terminal("plan " + r.model_id(), candidates.size(), o.predict.json || o.predict.csv);
    const Plan plan = make_plan(predictor, candidates, w, c, rank, [&](std::size_t i, std::size_t, const PlanCandidate& k) {
        progress.step(i, std::string(k.id()) + " x" + std::to_string(k.gpus));
    });
    progress.finish();
    if (o.predict.json) {
        std::cout << plan_json(o, r, w, c, rank, candidates.size(), plan).dump(2) << '\n';
    } else if (o.predict.csv) {
        std::cout << option_table(plan).csv();
    } else {
        print_plan_header(o, r, w, c, rank, candidates.size(), plan);
        print_plan(o, plan, w);
    }
    return 0;
}

void add_plan_options(CLI::App* app, PlanOptions& o) {
    add_device_options(app, o.predict.devices);
    add_model_source(app, o.predict.source);  // or --model-file
    o.batch_given = app->add_option("--batch,-b", o.predict.batch, "Batch per GPU (default 32 unless --global-batch)")
                        ->check(positive_count());
    app->add_option("--global-batch", o.global_batch, "Global batch, split evenly over each option's GPUs")
        ->check(integer_in(1, OptionLimits::max_global_batch));
    add_size_options(app, o.predict.source);
    app->add_option("--precision,-p", o.predict.precision, "fp32, tf32, amp-fp16, amp-bf16 (int8: inference)")
        ->check(one_of<Precision>());
    app->add_option("--mode", o.predict.mode, "train (default) or infer")->check(one_of<Mode>());
    app->add_option("--optimizer", o.predict.optimizer, "sgd (with momentum) or adam")->check(one_of<Optimizer>());
    add_runtime_option(app, o.predict,
                       "eager (PyTorch eager with autocast; default), compiled (fused kernels, CUDA graphs; default "
                       "for int8) or ideal (one kernel per layer pass, no host cost)");
    add_context_option(app, o.predict);
    app->add_option("--dataset", o.dataset, "Samples per epoch (with --epochs: time-to-train)")
        ->check(number_in(0, 1e15, true));
    app->add_option("--epochs", o.epochs, "Epochs (with --dataset)")->check(number_in(0, 1e6, true));
    o.target_given = app->add_option("--target-throughput", o.target_throughput,
                                     "Samples/s an option must reach (all GPUs together)")
                         ->check(number_in(0, 1e15, true));
    o.deadline_given = app->add_option("--deadline", o.deadline_h, "Longest acceptable time-to-train, hours");
    o.budget_given = app->add_option("--budget", o.budget, "Largest acceptable cost (needs --price)")
                         ->check(number_in(0, 1e15, true));
    app->add_option("--price", o.price,
                    "Price per GPU-hour: P for every option, or ID=P,ID=P per system/device id (P,ID=P: default + "
                    "overrides). roofplan has no price list");
    o.power_cap_given = app->add_option("--power-cap", o.power_cap_w, "Largest power of an option's GPUs, watts (TDP)")
                            ->check(number_in(0, 1e9, true));
    o.max_gpus_given = app->add_option("--max-gpus", o.max_gpus, "Most GPUs an option may use")
                           ->check(integer_in(1, OptionLimits::max_gpus));
    app->add_option("--systems", o.systems, "Only these systems, comma-separated (default: all; see `roofplan systems`)");
    app->add_option("--devices", o.devices,
                    "Only these GPUs, comma-separated: each alone (1 GPU) and the systems built on it");
    app->add_option("--system-file", o.system_file, "JSON file with extra systems (schema of data/systems.json)");
    app->add_option("--data-parallel", o.data_parallel, "ddp (default) or dp")->check(one_of<DataParallel>());
    app->add_flag("--no-overlap", o.no_overlap, "DDP without overlapping all-reduce and backward");
    app->add_flag("--single-flow", o.single_flow, "Inter-node traffic on one TCP flow per node");
    app->add_option("--rank", o.rank, "Order of feasible options: time (default), cost or energy");
    app->add_option("--top", o.top, "Rows per table (default 15; 0: all)")->check(integer_in(0, 1'000'000));
    add_output_flags(app, o.predict.json, o.predict.csv, "Print JSON (every option)",
                     "Print CSV (RFC 4180, raw numbers; one row per option, ranked first)");
}

}  // namespace

const Command plan_command = command<PlanOptions>(
    "plan", "Rank systems and GPU counts for a workload: time-to-train, cost, energy, bounds, what is infeasible",
    add_plan_options, run_plan);

}  // namespace roofplan::cli

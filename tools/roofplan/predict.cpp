// tools/roofplan/predict.cpp — `roofplan predict`: one GPU (--device) or data-parallel training on a system
// (--system): throughput, step time, bounds, memory, energy.
#include "breakdown_svg.hpp"
#include "commands.hpp"
#include "predict_single.hpp"

#include <roofplan/system/parallel.hpp>

#include <algorithm>
#include <iostream>
#include <optional>

namespace roofplan::cli {
namespace {

/// predict --system: the data-parallel options.
struct SystemOptions {
    std::string system;
    std::string system_file;
    int gpus = 0;
    int nodes = 0;
    std::string data_parallel;  ///< empty: ddp
    bool overlap_copies = false;
    bool no_overlap = false;
    bool single_flow = false;
    double dataset = 0;
    double epochs = 0;
    double price = 0;
};

/// The input request of the options for `device`.
InputRequest input_request(const InputOptions& o, const Device& device) {
    InputRequest r;
    r.source = o.source.empty() ? InputSource::synthetic : parse_enum<InputSource>(o.source);
    const bool decodes = r.source == InputSource::cpu_decode || r.source == InputSource::gpu_decode;
    if (o.workers > 0 && !decodes) fail("--loader-workers is for --input-source cpu-decode or gpu-decode");
    if (o.decode_rate > 0 && r.source != InputSource::cpu_decode) fail("--decode-rate is for --input-source cpu-decode");
    r.workers = o.workers;
    r.rates = default_decode_rates();
    if (o.decode_rate > 0) r.rates = {o.decode_rate, o.decode_rate, "--decode-rate"};
    r.gpu = gpu_decode_of(device);
    return r;
}

/// The input lines of a prediction's summary.
void print_input(const Prediction& p) {
    if (p.input == "synthetic") {
        std::cout << "  input           synthetic: made on the GPU, nothing read, decoded or copied (--input-source "
                     "host, cpu-decode or gpu-decode for a real pipeline)\n";
        return;
    }
    std::cout << "  input           " << p.input << ": ";
    if (p.input_copy_s > 0) std::cout << "copy " << seconds_text(p.input_copy_s) << " on the GPU";
    if (p.input == "gpu-decode") std::cout << "decoded on the GPU's JPEG engines";
    if (p.input_copy_s == 0 && p.input != "gpu-decode") std::cout << "nothing copied";
    if (p.input_pipeline_s > 0)
        std::cout << "; pipeline " << seconds_text(p.input_pipeline_s) << " a batch"
                  << (p.input_workers > 0 ? " on " + std::to_string(p.input_workers) +
                                                (p.input == "gpu-decode" ? " threads" : " workers")
                                          : std::string())
                  << (p.bound == StepBound::input ? " (the step waits for it)" : " (beside the GPU)");
    std::cout << "\n";
}

/// Every layer of a prediction, in model order (the terminal's "slowest layers" is the same rows, reordered).
Table layer_table(const Resolved& r, const Prediction& p) {
    const bool train = p.mode == Mode::train;
    Table t({{"layer", "layer", "name"},
             {"type", "type", "type"},
             {"time", "time_s", "time_s", true},
             {"fwd", "forward_s", "forward_s", true},
             {"bwd-data", "backward_data_s", "backward_data_s", true},
             {"bwd-weight", "backward_weight_s", "backward_weight_s", true},
             {"", "flops", "flops"},
             {"", "bytes", "bytes"},
             {"FLOP/B", "arithmetic_intensity", "", true},
             {"bound", "bound", "bound"}});
    for (const LayerPrediction& lp : p.layers) {
        const Node& n = r.model().nodes()[lp.node];
        const double intensity = lp.bytes.value() > 0 ? lp.flops.value() / lp.bytes.value() : 0.0;
        const auto pass = [&](Pass which) {
            const double s = lp.pass[which].value();
            return Cell(train || which == Pass::forward ? seconds_text(s) : "-", s);
        };
        t.add({std::string(n.name.view()), std::string(type_label(n.layer)),
               {seconds_text(lp.time.value()), lp.time.value()}, pass(Pass::forward), pass(Pass::backward_data),
               pass(Pass::backward_weight), {"", lp.flops.value()},
               {"", lp.bytes.value()}, {fixed(intensity, 1), intensity}, std::string(to_string(lp.bound))});
    }
    return t;
}

/// The time per layer type (and the optimizer update), largest first.
Table type_table(const Prediction& p) {
    Table t({{"layer type", "", "type"}, {"time", "", "time_s", true}, {"share", "", "", true}});
    for (const auto& [type, time] : p.by_type)
        t.add({std::string(type), {seconds_text(time.value()), time.value()},
               fixed(100 * time.value() / p.step_time.value(), 1) + "%"});
    return t;
}

/// The layer a kernel belongs to: its node's name, or the loss / the optimizer for step-level kernels.
std::string kernel_layer(const TimedKernel& k, const Model& m) {
    if (k.kernel.step_level) return k.kernel.part == StepPart::optimizer ? "optimizer" : "loss";
    return std::string(m.nodes()[k.kernel.node].name.view());
}

/// Every kernel of the step in issue order (`predict --kernels`; JSON "kernels").
Table kernel_table(const Prediction& p, const Model& m) {
    Table t({{"#", "", "", true},
             {"layer", "", "layer"},
             {"part", "", "part"},
             {"class", "", "class"},
             {"kernel", "", "what"},
             {"bytes", "", "bytes", true},
             {"FLOPs", "", "flops", true},
             {"time", "", "time_s", true},
             {"bound", "", "bound"},
             {"", "", "issue_s"},
             {"", "", "start_s"}});
    std::size_t i = 0;
    for (const TimedKernel& k : p.kernels)
        t.add({std::to_string(++i), kernel_layer(k, m), std::string(to_string(k.kernel.part)),
               std::string(to_string(k.kernel.kind)), std::string(k.kernel.what),
               {si(k.kernel.bytes()) + "B", k.kernel.bytes()}, {si(k.time.flops), k.time.flops},
               {seconds_text(k.time.total_s), k.time.total_s}, std::string(to_string(k.time.bound)),
               {"", k.issue_s}, {"", k.start_s}});
    return t;
}

/// The execution model's fields: runtime, kernel count, GPU busy/idle, host time, the step's bound, time per
/// kernel class, fallbacks, and every kernel when asked.
void add_execution_json(const Prediction& p, const Model& m, const EfficiencyProfile& profile, json& out) {
    out["runtime"] = to_string(p.runtime);
    if (p.runtime == Runtime::compiled) {
        out["cuda_graphs"] = p.cuda_graphs;
        out["engine"] = p.engine;
    }
    out["kernel_count"] = p.kernel_count;
    out["gpu_busy_s"] = p.gpu_busy_s;
    out["gpu_idle_s"] = p.gpu_idle_s;
    out["gpu_gap_s"] = p.gpu_gap_s;
    out["host_s"] = p.host_s;
    out["bound"] = to_string(p.bound);
    if (p.runtime == Runtime::ideal) return;
    json classes = json::object();
    for (KernelClass c : enum_values<KernelClass>())
        if (p.class_time_s[c] > 0) classes[std::string(to_string(c))] = p.class_time_s[c];
    out["kernel_class_time_s"] = classes;
    out["kernel_class_source"] = profile.kernel_class_source.view();
    out["host_source"] = profile.host.source.view();
    out["fallbacks"] = p.fallbacks;
    if (!p.kernels.empty()) out["kernels"] = kernel_table(p, m).json();
}

/// The `memory` object: the step's memory at its peak, by component, in bytes (memory/memory.hpp).
json memory_json(const Prediction& p) {
    const memory::MemoryEstimate& m = p.memory;
    return {{"weights_bytes", m.weights.value()},
            {"gradients_bytes", m.gradients.value()},
            {"optimizer_state_bytes", m.optimizer_state.value()},
            {"autocast_copies_bytes", m.autocast_copies.value()},
            {"saved_activations_bytes", m.saved_activations.value()},
            {"transient_bytes", m.transient_peak.value()},
            {"inputs_bytes", m.inputs.value()},
            {"workspaces_bytes", m.workspaces.value()},
            {"allocated_at_start_bytes", m.allocated_at_start.value()},
            {"allocated_peak_bytes", m.allocated_peak.value()},
            {"reserved_peak_bytes", m.reserved_peak.value()},
            {"allocator_slack_bytes", m.allocator_slack.value()},
            {"context_bytes", m.context.value()},
            {"context_source", m.context_source},
            {"total_bytes", m.total.value()},
            {"capacity_bytes", p.capacity.value()},
            {"fits", p.fits},
            {"tight", m.tight},
            {"missing_bytes", p.missing.value()},
            {"max_batch", p.max_batch},
            {"peak_phase", to_string(m.peak_phase)},
            {"peak_layer", m.peak_layer}};
}

/// The memory lines of the summary: the total and fit, where the peak is, and its components.
void print_memory(const Prediction& p) {
    const memory::MemoryEstimate& m = p.memory;
    std::cout << gib(m.total.value()) << " of " << gib(p.capacity.value())
              << (p.fits ? (m.tight ? " (fits, once the allocator frees its cache)" : " (fits)")
                         : " (DOES NOT FIT: " + gib(p.missing.value()) + " missing)")
              << "; largest batch that fits: " << p.max_batch << "\n"
              << "    peak in the " << to_string(m.peak_phase) << " at " << m.peak_layer << ": allocated "
              << gib(m.allocated_peak.value()) << " + allocator slack " << gib(m.allocator_slack.value())
              << " + context " << gib(m.context.value()) << "\n"
              << "    weights " << gib(m.weights.value()) << ", gradients " << gib(m.gradients.value()) << ", optimizer "
              << gib(m.optimizer_state.value()) << ", autocast copies " << gib(m.autocast_copies.value())
              << ", saved activations " << gib(m.saved_activations.value()) << ", transient "
              << gib(m.transient_peak.value()) << ", inputs " << gib(m.inputs.value()) << ", workspaces "
              << gib(m.workspaces.value()) << "\n";
}

}  // namespace

json prediction_json(const Resolved& r, const Prediction& p) {
    json out = {{"model", r.model_id()},
                {"device", r.device.id.view()},
                {"mode", to_string(p.mode)},
                {"precision", to_string(p.precision)},
                {"math_class", to_string(p.math)},
                {"batch", p.batch},
                {"throughput_samples_per_s", p.throughput_samples_per_s},
                {"step_time_s", p.step_time.value()},
                {"compute_time_s", p.compute_time.value()},
                {"phase_time_s",
                 {{"forward", p.phase_time[Phase::forward].value()},
                  {"backward_data", p.phase_time[Phase::backward_data].value()},
                  {"backward_weight", p.phase_time[Phase::backward_weight].value()},
                  {"optimizer", p.phase_time[Phase::optimizer].value()}}},
                {"flops_per_step", p.flops.value()},
                {"bytes_per_step", p.bytes.value()},
                {"achieved_tflops", p.achieved.value() / 1e12},
                {"fraction_of_peak", p.fraction_of_peak},
                {"memory_bytes", p.memory.total.value()},
                {"memory", memory_json(p)},
                {"fits", p.fits},
                {"max_batch", p.max_batch},
                {"power_w", p.power.value()},
                {"samples_per_joule", p.samples_per_joule},
                {"samples_per_s_per_watt", p.samples_per_joule},
                {"profile", r.profile.source.view()},
                {"by_type", type_table(p).json()},
                {"layers", layer_table(r, p).json()}};
    if (p.mode == Mode::train) out["optimizer"] = to_string(p.optimizer);
    if (p.input != "synthetic") {
        out["input"] = p.input;
        out["input_copy_s"] = p.input_copy_s;
        out["input_pipeline_s"] = p.input_pipeline_s;
        out["input_workers"] = p.input_workers;
    }
    out[r.loaded->uses_seq ? "seq" : "image_size"] = r.loaded->size;
    add_execution_json(p, r.model(), r.profile, out);
    if (r.host_speed != 1) out["host_speed"] = r.host_speed;  // --host-speed: the host costs it scaled
    return out;
}

Prediction predict_single(const Resolved& r, const PredictOptions& o, const InputOptions& io) {
    return predict_single(Predictor(r.model()), r, o, io);
}

Prediction predict_single(const Predictor& predictor, const Resolved& r, const PredictOptions& o,
                          const InputOptions& io) {
    Prediction p = predictor(r.device, r.profile, r.request);
    const InputRequest in = input_request(io, r.device);
    if (in.source == InputSource::cpu_decode && in.workers == 0)
        fail("--input-source cpu-decode on one GPU needs --loader-workers (the data loader's worker processes; on a "
             "--system they default to the GPU's share of the host's cores)");
    const LinkParameters links = profile_links(o.profile);
    with_input(p, estimate_input(r.model(), r.request.batch, r.request.mode, in, 0),
               pcie_link(r.device, links.eff(LinkKind::pcie), links.latency(LinkKind::pcie)));
    return p;
}

namespace {

/// The execution model's summary lines (kernel-level runtimes), and the fallbacks the runtime took.
void print_execution(const Prediction& p, const EfficiencyProfile& profile) {
    if (p.runtime == Runtime::ideal) {
        std::cout << "  execution       ideal: one kernel per layer pass (" << p.kernel_count << "), no host cost\n";
        return;
    }
    const double step = p.step_time.value();
    std::cout << "  execution       " << to_string(p.runtime) << (p.engine ? " (inference engine)" : "") << ": "
              << p.kernel_count << " kernels; GPU busy "
              << seconds_text(p.gpu_busy_s) << ", idle " << seconds_text(p.gpu_idle_s) << " ("
              << fixed(100 * p.gpu_idle_s / step, 1) << "%, " << seconds_text(p.gpu_gap_s)
              << " of it between back-to-back kernels); host dispatch " << seconds_text(p.host_s) << "; bound: "
              << to_string(p.bound) << "\n"
              << "    kernel classes: " << profile.kernel_class_source.view() << "; host: " << profile.host.source.view()
              << "\n";
    if (!p.fallbacks.empty()) {
        std::string list;
        for (const auto& f : p.fallbacks) list += (list.empty() ? "" : ", ") + f;
        std::cout << "    no " << to_string(p.runtime) << " rule for " << list << ": lowered one kernel per pass\n";
    }
}

void print_summary(const Resolved& r, const Prediction& p) {
    const bool train = p.mode == Mode::train;
    std::cout << r.model_id() << " on " << r.device.name.view() << " (" << r.device.id.view() << "): "
              << (train ? "training" : "inference") << ", batch " << p.batch << ", " << to_string(p.precision)
              << " on " << to_string(p.math) << (r.loaded->uses_seq ? ", seq " : ", image ") << r.loaded->size << "\n"
              << "efficiency profile: " << r.profile.source.view() << "\n\n";
    std::cout << "  throughput      " << fixed(p.throughput_samples_per_s, 1) << " samples/s\n"
              << "  step time       " << seconds_text(p.step_time.value()) << "\n";
    print_input(p);
    print_execution(p, r.profile);
    if (train)
        std::cout << "    forward " << seconds_text(p.phase_time[Phase::forward].value()) << ", backward-data "
                  << seconds_text(p.phase_time[Phase::backward_data].value()) << ", backward-weight "
                  << seconds_text(p.phase_time[Phase::backward_weight].value()) << ", optimizer " << seconds_text(p.phase_time[Phase::optimizer].value())
                  << "\n";
    std::cout << "  arithmetic      " << si(p.flops.value()) << "FLOP, " << si(p.bytes.value()) << "B moved per step\n"
              << "  achieved        " << fixed(p.achieved.value() / 1e12, 1) << " TFLOP/s = "
              << fixed(100 * p.fraction_of_peak, 1) << "% of the " << to_string(p.math) << " peak ("
              << peak_text(r.device.peak[p.math]) << ")\n"
              << "  memory          ";
    print_memory(p);
    std::cout << "  energy          " << fixed(p.samples_per_joule, 2) << " samples/J at " << fixed(p.power.value(), 0)
              << " W (" << (r.profile.power_w > 0 ? "measured" : "TDP") << ")\n\n";
}

int run_predict(const PredictOptions& o, const InputOptions& io) {
    const Resolved r = resolve(o);
    const Prediction p = predict_single(r, o, io);
    if (!o.svg.empty()) write_breakdown_svg(o.svg, r.model(), r.device, p, r.model_id(), o.top);
    const Table layers = layer_table(r, p);
    if (print_machine(o.json, o.csv, layers, [&] { return prediction_json(r, p); })) return 0;
    print_summary(r, p);
    if (o.kernels) std::cout << kernel_table(p, r.model()).render() << "\n";
    std::cout << type_table(p).render() << "\n";
    std::vector<std::size_t> order(p.layers.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    if (!o.all_layers) {
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return p.layers[a].time.value() > p.layers[b].time.value(); });
        if (o.top >= 0 && order.size() > static_cast<std::size_t>(o.top)) order.resize(static_cast<std::size_t>(o.top));
    }
    std::cout << (o.all_layers ? "every layer:\n" : "slowest layers:\n") << layers.reordered(order).render();
    return 0;
}

/// The data-parallel figures of predict --system, added to the single-GPU prediction's JSON.
json system_json(const Resolved& r, const System& s, const ParallelRequest& pr, const ParallelPrediction& p,
                 const std::optional<TrainingRun>& run) {
    json out = prediction_json(r, p.gpu);
    out["system"] = s.id.view();
    out["gpus"] = p.gpus;
    out["nodes"] = p.nodes;
    out["data_parallel"] = to_string(pr.mode);
    out["step_time_s"] = p.step_time.value();
    out["compute_time_s"] = p.compute_time.value();
    out["comm_time_s"] = p.comm_time.value();
    out["exposed_comm_time_s"] = p.exposed_comm.value();
    out["comm_fraction"] = p.comm_fraction;
    out["comm_hidden"] = p.comm_hidden;
    out["scaling_efficiency"] = p.scaling_efficiency;
    out["throughput_samples_per_s"] = p.throughput_samples_per_s;
    out["throughput_per_gpu_alone"] = p.alone_samples_per_s;
    out["samples_per_joule"] = p.throughput_samples_per_s / (p.gpus * p.gpu.power.value());
    if (pr.mode == DataParallel::dp) {
        const DataParallelCosts& d = p.dp;
        out["dp"] = {{"scatter_s", d.scatter_s},
                     {"broadcast_s", d.broadcast_s},
                     {"replicate_host_s", d.replicate_host_s},
                     {"threads_host_s", d.threads_host_s},
                     {"forward_host_scale", d.forward_host_scale},
                     {"gather_s", d.gather_s},
                     {"output_grad_s", d.output_grad_s},
                     {"loss_s", d.loss_s},
                     {"reduce_s", d.reduce_s},
                     {"host_exposed_s", d.host_exposed_s},
                     {"replicated_modules", d.modules},
                     {"replicated_tensors", d.tensors}};
    }
    if (pr.input.source != InputSource::synthetic) {
        out["input"] = to_string(pr.input.source);
        out["input_copy_s"] = p.input_copy_time.value();
            out["input_pipeline_s"] = p.input.pipeline_s;
        out["input_workers"] = p.input.workers;
        out["input_bound"] = p.input_bound;
    }
    if (run) {
        out["time_to_train_s"] = run->time.value();
        out["gpu_hours"] = run->gpu_hours;
        out["cost"] = run->cost;
    }
    return out;
}

/// predict --system --csv: one row, the JSON's scalar figures.
Table system_row(const json& out) {
    std::vector<Column> columns;
    std::vector<Cell> row;
    for (const char* key : {"model", "system", "device", "gpus", "nodes", "data_parallel", "batch", "precision",
                            "throughput_samples_per_s", "throughput_per_gpu_alone", "scaling_efficiency",
                            "step_time_s", "compute_time_s", "comm_time_s", "exposed_comm_time_s", "comm_fraction",
                            "comm_hidden", "replicas", "input", "copy_time_s", "copy_bound", "input_pipeline_s",
                            "input_bound", "power_w",
                            "samples_per_s_per_watt", "memory_bytes", "fits", "samples_per_joule", "time_to_train_s",
                            "gpu_hours", "cost"}) {
        if (!out.contains(key)) continue;
        const json& v = out.at(key);
        columns.push_back({key, key, key});
        if (v.is_number_integer()) row.emplace_back("", v.get<std::int64_t>());
        else if (v.is_number()) row.emplace_back("", v.get<double>());
        else if (v.is_boolean()) row.emplace_back(v.get<bool>() ? "true" : "false");
        else row.emplace_back(v.get<std::string>());
    }
    Table t(columns);
    t.add(row);
    return t;
}

void print_system(const Resolved& r, const System& s, const ParallelRequest& pr, const ParallelPrediction& p,
                  const std::optional<TrainingRun>& run, double price) {
    std::cout << r.model_id() << " on " << s.name.view() << ": " << p.gpus << " GPU" << (p.gpus > 1 ? "s" : "") << " ("
              << p.nodes << " node" << (p.nodes > 1 ? "s" : "") << "), " << to_string(pr.mode) << ", batch "
              << r.request.batch << " per GPU, " << to_string(r.request.precision) << "\n\n"
              << "  throughput        " << fixed(p.throughput_samples_per_s, 1) << " samples/s (one GPU alone: "
              << fixed(p.alone_samples_per_s, 1) << ")\n"
              << "  scaling           " << fixed(100 * p.scaling_efficiency, 1) << "% efficiency\n"
              << "  step time         " << seconds_text(p.step_time.value()) << " = compute "
              << seconds_text(p.compute_time.value()) << " + exposed communication "
              << seconds_text(p.exposed_comm.value()) << " (" << fixed(100 * p.comm_fraction, 1) << "%)"
              << (p.dp.host_exposed_s > 0 ? " + nn.DataParallel's host " + seconds_text(p.dp.host_exposed_s) : std::string())
              << "\n"
              << "  communication     " << seconds_text(p.comm_time.value()) << " per step in all, "
              << (pr.mode == DataParallel::dp ? "exposed (nothing overlaps it under nn.DataParallel)"
                  : p.comm_hidden                 ? "hidden behind the backward pass"
                                                  : "partly exposed")
              << "\n";
    if (pr.mode == DataParallel::dp && p.gpus > 1) {
        const DataParallelCosts& d = p.dp;
        std::cout << "  nn.DataParallel   scatter " << seconds_text(d.scatter_s) << " + broadcast "
                  << seconds_text(d.broadcast_s) << " beside replicate's Python " << seconds_text(d.replicate_host_s)
                  << " and " << p.gpus << " threads " << seconds_text(d.threads_host_s) << "; forward dispatch x"
                  << fixed(d.forward_host_scale, 2) << " (the interpreter lock); gather "
                  << seconds_text(d.gather_s) << " and back " << seconds_text(d.output_grad_s) << ", loss on GPU 0 +"
                  << seconds_text(d.loss_s) << ", gradients reduced " << seconds_text(d.reduce_s) << "\n";
    }
    if (pr.input.source == InputSource::synthetic)
        std::cout << "  input             synthetic: made on "
                  << (pr.mode == DataParallel::dp ? "GPU 0 and scattered" : "each GPU")
                  << " (--input-source for a real pipeline)\n";
    else
        std::cout << "  input             " << to_string(pr.input.source) << ": "
                  << (p.input_copy_time.value() > 0 ? "copy " + seconds_text(p.input_copy_time.value()) + " on each GPU; "
                                                    : std::string("decoded on each GPU's JPEG engines; "))
                  << "pipeline " << seconds_text(p.input.pipeline_s) << " a batch"
                  << (p.input.workers > 0 ? " on " + std::to_string(p.input.workers) +
                                                (pr.input.source == InputSource::gpu_decode ? " threads" : " workers") + " per GPU"
                                          : std::string())
                  << (p.input_bound ? " (the step waits for it)" : " (beside the GPUs)") << "\n";
    std::cout
              << "  memory per GPU    ";
    print_memory(p.gpu);
    if (run)
        std::cout << "  time to train     " << fixed(run->time.value() / 3600.0, 2) << " h (" << fixed(run->steps, 0)
                  << " steps), " << fixed(run->gpu_hours, 1) << " GPU-hours"
                  << (price > 0 ? ", cost " + fixed(run->cost, 2) : std::string()) << "\n";
}

/// The replica figures of predict --system --mode infer, added to the single-GPU prediction's JSON.
json replicas_json(const Resolved& r, const System& s, const ReplicaRequest& rr, const ReplicaPrediction& p) {
    json out = prediction_json(r, p.gpu);
    out["system"] = s.id.view();
    out["gpus"] = p.gpus;
    out["nodes"] = p.nodes;
    out["replicas"] = p.gpus;
    out["input"] = to_string(rr.input.source);
    out["input_pipeline_s"] = p.input.pipeline_s;
    out["input_workers"] = p.input.workers;
    out["input_bound"] = p.input_bound();
    out["overlap_copies"] = rr.overlap_copies;
    out["input_bytes_per_step"] = p.input_bytes;
    out["output_bytes_per_step"] = p.output_bytes;
    out["copy_time_s"] = p.copy_time.value();
    out["copy_bound"] = p.copy_bound;
    out["step_time_s"] = p.step_time.value();
    out["compute_time_s"] = p.gpu.step_time.value();
    out["throughput_samples_per_s"] = p.throughput_samples_per_s;
    out["throughput_per_gpu_alone"] = p.gpu.throughput_samples_per_s;
    out["power_w"] = p.power.value();
    out["samples_per_s_per_watt"] = p.samples_per_s_per_watt;
    out["samples_per_joule"] = p.samples_per_s_per_watt;
    return out;
}

void print_replicas(const Resolved& r, const System& s, const ReplicaRequest& rr, const ReplicaPrediction& p) {
    const bool copied = p.input_bytes > 0;
    std::cout << r.model_id() << " on " << s.name.view() << ": " << p.gpus << " independent inference replica"
              << (p.gpus > 1 ? "s" : "") << " (one process per GPU, " << p.nodes << " node" << (p.nodes > 1 ? "s" : "")
              << "), batch " << r.request.batch << " per GPU, " << to_string(r.request.precision) << ", "
              << to_string(r.request.runtime) << " runtime\n\n"
              << "  throughput        " << fixed(p.throughput_samples_per_s, 1) << " samples/s (one GPU: "
              << fixed(p.throughput_samples_per_s / p.gpus, 1) << ")\n"
              << "  per watt          " << fixed(p.samples_per_s_per_watt, 2) << " samples/s/W at "
              << fixed(p.power.value(), 0) << " W for " << p.gpus << " GPU" << (p.gpus > 1 ? "s" : "") << " ("
              << (r.profile.power_w > 0 ? "measured" : "TDP") << ")\n"
              << "  step time         " << seconds_text(p.step_time.value()) << " = network "
              << seconds_text(p.gpu.step_time.value());
    if (rr.input.source == InputSource::synthetic)
        std::cout << " (input synthetic: made on the GPU, no copies; see --input-source)\n";
    else if (copied)
        std::cout << (rr.overlap_copies ? ", overlapped with " : " + ") << "copies " << seconds_text(p.copy_time.value())
                  << " (" << si(p.input_bytes) << "B in, " << si(p.output_bytes) << "B out over the host link"
                  << (p.copy_bound ? "; the copies bound the step" : "") << ")\n";
    else
        std::cout << "\n";
    if (p.input.pipeline_s > 0)
        std::cout << "  input pipeline    " << to_string(rr.input.source) << ": " << seconds_text(p.input.pipeline_s)
                  << " a batch" << (p.input.workers > 0 ? " on " + std::to_string(p.input.workers) + " workers per GPU" : std::string())
                  << (p.input_bound() ? " (the step waits for it)" : " (beside the GPU)") << "\n";
    std::cout << "  memory per GPU    ";
    print_memory(p.gpu);
}

/// predict --system --mode infer: independent replicas.  Training's options are errors here.
int run_predict_replicas(const PredictOptions& po, const SystemOptions& so, const InputOptions& io, const System& s,
                         const Resolved& r) {
    if (!so.data_parallel.empty()) fail("--data-parallel is for training; inference on a system runs independent replicas");
    if (so.no_overlap) fail("--no-overlap is for DDP training; for inference replicas see --overlap-copies");
    if (so.single_flow) fail("--single-flow is for multi-node training; inference replicas do not communicate");
    if (so.dataset > 0 || so.epochs > 0) fail("--dataset/--epochs are for training (time to train)");
    ReplicaRequest rr;
    rr.gpus = so.gpus == 0 ? 1 : so.gpus;
    rr.nodes = so.nodes;
    rr.input = input_request(io, r.device);
    if (so.overlap_copies && rr.input.source != InputSource::host && rr.input.source != InputSource::cpu_decode)
        fail("--overlap-copies needs --input-source host or cpu-decode (a batch that is copied)");
    rr.overlap_copies = so.overlap_copies;
    rr.links = profile_links(po.profile);
    const ReplicaPrediction p = predict_replicas(Predictor(r.model()), r.device, r.profile, r.request, s, rr);
    if (!po.svg.empty()) write_breakdown_svg(po.svg, r.model(), r.device, p.gpu, r.model_id(), po.top);
    const json out = replicas_json(r, s, rr, p);
    if (!print_machine(po.json, po.csv, system_row(out), [&] { return out; })) print_replicas(r, s, rr, p);
    return 0;
}

int run_predict_system(const PredictOptions& po, const SystemOptions& so, const InputOptions& io) {
    const System& s = pick_system(so.system, so.system_file);
    PredictOptions with_device = po;
    if (!po.device.empty() && !po.devices.catalog().find(po.device).answers_to(s.device.view()))
        fail("--device ", po.device, " and --system ", s.id.view(), " (whose GPU is ", s.device.view(),
             ") disagree; give one of them");
    with_device.device = std::string(s.device.view());
    const Resolved r = resolve(with_device);
    if (r.request.mode == Mode::infer) return run_predict_replicas(po, so, io, s, r);
    if (so.overlap_copies) fail("--overlap-copies is for inference replicas (--mode infer)");
    ParallelRequest pr;
    pr.input = input_request(io, r.device);
    pr.gpus = so.gpus == 0 ? 1 : so.gpus;
    pr.nodes = so.nodes;
    pr.mode = so.data_parallel.empty() ? DataParallel::ddp : parse_data_parallel(so.data_parallel);
    pr.overlap = !so.no_overlap;
    pr.single_flow = so.single_flow;
    pr.links = profile_links(po.profile);
    const ParallelPrediction p = predict_parallel(Predictor(r.model()), r.device, r.profile, r.request, s, pr);
    if (!po.svg.empty()) write_breakdown_svg(po.svg, r.model(), r.device, p.gpu, r.model_id(), po.top);
    std::optional<TrainingRun> run;
    if (so.dataset > 0 || so.epochs > 0) run = time_to_train(p, r.request.batch, so.dataset, so.epochs, so.price);
    const json out = system_json(r, s, pr, p, run);
    if (!print_machine(po.json, po.csv, system_row(out), [&] { return out; })) print_system(r, s, pr, p, run, so.price);
    return 0;
}

/// predict's options: one GPU, and with --system the data-parallel ones.
struct PredictCommand {
    PredictOptions predict;
    SystemOptions system;
    InputOptions input;
};

int run_predict_command(const PredictCommand& o) {
    return o.system.system.empty() ? run_predict(o.predict, o.input) : run_predict_system(o.predict, o.system, o.input);
}

void add_input_options(CLI::App* app, InputOptions& o) {
    app->add_option("--input-source", o.source,
                    "Where batches come from: synthetic (made on the GPU; default), host (copied each step), "
                    "cpu-decode (JPEGs decoded by data-loader workers, then copied) or gpu-decode (nvJPEG on the GPU)")
        ->check(one_of<InputSource>());
    app->add_option("--loader-workers", o.workers,
                    "cpu-decode: data-loader workers per GPU (default on a --system: the GPU's share of its cores)")
        ->check(integer_in(1, 4096));
    app->add_option("--decode-rate", o.decode_rate,
                    "cpu-decode: images/s one core decodes and augments (default: measured, see docs/systems.md; "
                    "`roofplan-bench host-decode` measures yours)")
        ->check(number_in(0, 1e7, false));
}

void add_system_options(CLI::App* app, SystemOptions& o) {
    auto* system = app->add_option("--system", o.system, "Predict on this system (see `roofplan systems`): data-parallel training, or independent inference replicas with --mode infer");
    // Every other option of the group applies only with --system (an error without it, not ignored).
    for (CLI::Option* option : {
             app->add_option("--system-file", o.system_file, "JSON file with extra systems (schema of data/systems.json)"),
             app->add_option("--gpus", o.gpus, "GPUs in total (with --system; default 1)")
                 ->check(integer_in(1, OptionLimits::max_gpus)),
             app->add_option("--nodes", o.nodes, "Nodes (with --system; default: as few as the GPUs need)")
                 ->check(integer_in(1, OptionLimits::max_nodes)),
             app->add_option("--data-parallel", o.data_parallel, "Training: ddp (DistributedDataParallel; default) or dp (nn.DataParallel)")
                 ->check(one_of<DataParallel>()),
             app->add_flag("--overlap-copies", o.overlap_copies, "Inference replicas with a copied input: copies overlap the network"),
             app->add_flag("--no-overlap", o.no_overlap, "DDP without overlapping all-reduce and backward"),
             app->add_flag("--single-flow", o.single_flow, "Inter-node traffic on one TCP flow per node"),
             app->add_option("--dataset", o.dataset, "Samples per epoch (for time-to-train)")->check(number_in(0, 1e15, true)),
             app->add_option("--epochs", o.epochs, "Epochs (for time-to-train)")->check(number_in(0, 1e6, true)),
             app->add_option("--price", o.price, "Price per GPU-hour (for cost)")->check(number_in(0, 1e9, false))})
        only_with(option, system);
    only_with(app->get_option("--price"), app->get_option("--dataset"));  // a cost needs a time-to-train
}

void add_predict_command_options(CLI::App* app, PredictCommand& o) {
    add_predict_options(app, o.predict, false);
    app->add_option("--top", o.predict.top, "Layers to list, slowest first (default 12)");
    app->add_flag("--kernels", o.predict.kernels,
                  "List every kernel of the step (layer, class, bytes, FLOPs, time, bound)");
    app->add_option("--svg", o.predict.svg,
                    "Write the step-time breakdown chart (slowest layers, layer types) to this SVG");
    app->add_flag("--layers", o.predict.all_layers, "List every layer in model order");
    add_system_options(app, o.system);
    add_input_options(app, o.input);
}

}  // namespace

const Command predict_command = command<PredictCommand>(
    "predict", "Predict training or inference on one GPU: throughput, step time, bounds, memory, energy",
    add_predict_command_options, run_predict_command);

}  // namespace roofplan::cli

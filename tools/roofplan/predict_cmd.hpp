// tools/roofplan/predict_cmd.hpp — `roofplan devices`, `roofplan predict`, `roofplan roofline`.
#pragma once

#include "model_source.hpp"
#include "report.hpp"
#include "svg.hpp"
#include "breakdown_svg.hpp"

#include <roofplan/io/json.hpp>
#include <roofplan/roofplan.hpp>

#include <CLI/CLI.hpp>

#include <charconv>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace roofplan::cli {

using json = nlohmann::json;

/// Options every device-aware command shares.
struct DeviceOptions {
    std::vector<std::string> device_files;
    DeviceCatalog catalog() const {
        DeviceCatalog c;
        for (const std::string& f : device_files) io::load_devices(c, f);
        return c;
    }
};

inline void add_device_options(CLI::App* app, DeviceOptions& o) {
    app->add_option("--device-file", o.device_files,
                    "JSON file with extra devices (schema of data/devices.json); repeatable");
}

inline std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

inline std::string peak_text(double tflops) { return tflops > 0 ? fixed(tflops, tflops < 10 ? 2 : 1) : "-"; }

/// A peak for tables: "67.0" (raw 67) or "-" (an empty CSV field) where the device has none.
inline Cell peak_cell(double tflops) { return tflops > 0 ? Cell(peak_text(tflops), tflops) : Cell::missing(); }

inline int run_devices(const DeviceOptions& o, bool as_json, bool as_csv = false) {
    const DeviceCatalog catalog = o.catalog();
    if (as_json) {
        json out = json::array();
        for (const Device& d : catalog.devices()) out.push_back(io::to_json(d));
        std::cout << out.dump(2) << '\n';
        return 0;
    }
    Table table({"id", "arch", "SMs", "boost MHz", "FP32", "TF32", "FP16 (fp32 acc)", "BF16", "INT8 TC", "DP4A",
                 "memory", "GB/s", "L2 MiB", "TDP W", "NVLink"},
                {false, false, true, true, true, true, true, true, true, true, true, true, true, true, false});
    for (const Device& d : catalog.devices()) {
        std::string fp16 = peak_text(d.peak.fp16_tensor_fp32_acc);
        if (d.peak.fp16_tensor_fp16_acc > d.peak.fp16_tensor_fp32_acc)
            fp16 += " (" + peak_text(d.peak.fp16_tensor_fp16_acc) + ")";
        table.add({std::string(d.id.view()), std::string(to_string(d.architecture)), {std::to_string(d.sms), d.sms},
                   {fixed(d.boost_clock_mhz, 0), d.boost_clock_mhz}, peak_cell(d.peak.fp32),
                   peak_cell(d.peak.tf32_tensor),
                   d.peak.fp16_tensor_fp32_acc > 0 ? Cell(fp16, d.peak.fp16_tensor_fp32_acc) : Cell::missing(),
                   peak_cell(d.peak.bf16_tensor), peak_cell(d.peak.int8_tensor), peak_cell(d.peak.int8_dp4a),
                   {fixed(d.memory_gib, 0) + " GiB " + std::string(d.memory_type.view()), d.memory_gib},
                   {fixed(d.bandwidth_gb_s, 0), d.bandwidth_gb_s}, {fixed(d.l2_mib, 1), d.l2_mib},
                   {fixed(d.tdp_w, 0), d.tdp_w},
                   d.nvlink.links ? std::to_string(d.nvlink.links) + "x" + fixed(d.nvlink.gb_s_per_link_per_direction, 0)
                                  : std::string("-")});
    }
    if (as_csv) {
        table.csv_names({"id", "architecture", "sms", "boost_mhz", "fp32_tflops", "tf32_tensor_tflops",
                         "fp16_tensor_fp32_acc_tflops", "bf16_tensor_tflops", "int8_tensor_tops", "int8_dp4a_tops",
                         "memory_gib", "bandwidth_gb_s", "l2_mib", "tdp_w", "nvlink"});
        std::cout << table.csv();
        return 0;
    }
    std::cout << "Dense peaks in TFLOPS/TOPS (FP16 column: FP32 accumulate, FP16-accumulate rate in brackets where "
                 "faster); NVLink: links x GB/s per direction.\nSources for every figure: data/devices.json.\n\n"
              << table.render();
    return 0;
}

struct PredictOptions {
    DeviceOptions devices;
    std::string model;
    std::string model_file;           // --model-file (ONNX or roofplan-model/1 JSON) instead of --model
    bool strict = false;              // ONNX: unsupported operators are errors
    std::vector<std::string> inputs;  // ONNX: data inputs
    std::string device;
    std::int64_t batch = 0;
    std::int64_t seq = 0;
    std::int64_t image_size = 0;
    std::string precision = "fp32";
    std::string mode = "train";
    std::string optimizer = "sgd";
    std::string runtime;  // empty: eager (int8: compiled, PyTorch eager has no int8 path)
    bool kernels = false;
    std::string profile;
    double reserved_gib = 1.0;
    int top = 12;
    bool all_layers = false;
    bool json = false;
    bool csv = false;
    std::string svg;  // roofline: the roofline chart; predict: the step-time breakdown chart
};

/// A CLI11 check for counts that must be >= 1 (a batch): "--batch: must be an integer >= 1, got '0'".
inline CLI::Validator positive_count() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            std::int64_t v = 0;
            const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (ec != std::errc{} || ptr != text.data() + text.size() || v < 1)
                return "must be an integer >= 1, got '" + text + "'";
            return {};
        },
        "INT>=1");
}

inline void add_predict_options(CLI::App* app, PredictOptions& o, bool roofline) {
    add_device_options(app, o.devices);
    add_model_source(app, o.model, o.model_file, o.strict, o.inputs);
    auto* device = app->add_option("--device,-d", o.device, "Device id or alias (see `roofplan devices`)");
    if (roofline) device->required();
    app->add_option("--batch,-b", o.batch, "Batch size per GPU (default: 32 for training, 1... see docs)")
        ->check(positive_count());
    app->add_option("--seq,-s", o.seq, "Sequence length (transformers, GNMT)");
    app->add_option("--image-size", o.image_size, "Square input resolution (CNNs)");
    app->add_option("--precision,-p", o.precision, "fp32, tf32, amp-fp16, amp-bf16 or int8 (inference)");
    app->add_option("--mode", o.mode, "train or infer");
    app->add_option("--optimizer", o.optimizer, "sgd (with momentum) or adam (training memory and update)");
    app->add_option("--runtime", o.runtime,
                    "eager (PyTorch eager with autocast; default), compiled (fused kernels, CUDA graphs; default for "
                    "int8) or ideal (one kernel per layer pass, no host cost)");
    app->add_option("--profile", o.profile, "Calibrated efficiency profile (JSON); default: per-generation defaults");
    app->add_option("--reserved-gib", o.reserved_gib,
                    "Framework memory besides tensors: CUDA context, workspaces (GiB, default 1)");
    app->add_flag("--json", o.json, "Print JSON");
    app->add_flag("--csv", o.csv, roofline ? "Print the layers' points as CSV (RFC 4180, raw numbers)"
                                           : "Print every layer (model order) as CSV: raw seconds, FLOPs, bytes, bound");
    if (roofline) {
        app->add_option("--svg", o.svg, "Write the roofline chart to this SVG file");
    } else {
        app->add_option("--top", o.top, "Layers to list, slowest first (default 12)");
        app->add_flag("--kernels", o.kernels, "List every kernel of the step (layer, class, bytes, FLOPs, time, bound)");
        app->add_option("--svg", o.svg, "Write the step-time breakdown chart (slowest layers, layer types) to this SVG");
        app->add_flag("--layers", o.all_layers, "List every layer in model order");
    }
}

/// What a predict/roofline run resolved its options to.
struct Resolved {
    Model model;
    Device device;
    EfficiencyProfile profile;
    PredictRequest request;
    std::int64_t size = 0;
    bool uses_seq = false;
    std::string model_id;
};

inline Resolved resolve(const PredictOptions& o) {
    if (o.device.empty()) roofplan::detail::fail("give --device D (or --system S, whose GPU is used)");
    const DeviceCatalog catalog = o.devices.catalog();
    LoadedModel loaded = load_model({o.model, o.model_file, o.strict, o.inputs}, o.seq, o.image_size);
    Resolved r{std::move(loaded.model), catalog.find(o.device), {}, {}, loaded.size, loaded.uses_seq, loaded.id};
    r.profile = o.profile.empty() ? default_profile(r.device) : io::load_profile(o.profile, r.device);
    r.request.mode = parse_mode(o.mode);
    r.request.precision = parse_precision(o.precision);
    r.request.optimizer = parse_optimizer(o.optimizer);
    r.request.runtime = o.runtime.empty() ? (r.request.precision == Precision::int8 ? Runtime::compiled : Runtime::eager)
                                          : parse_runtime(o.runtime);
    r.request.kernels = o.kernels;
    r.request.batch = o.batch != 0 ? o.batch : (r.request.mode == Mode::train ? 32 : 1);
    roofplan::detail::require_batch(r.request.batch);
    if (!(o.reserved_gib >= 0 && o.reserved_gib < 1e6))
        roofplan::detail::fail("--reserved-gib must be a number of GiB >= 0, got ", fixed(o.reserved_gib, 3));
    r.request.reserved = units::bytes(static_cast<std::int64_t>(o.reserved_gib * 1073741824.0));
    return r;
}

/// The execution model's fields: runtime, kernel count, GPU busy/idle, host time, the step's bound, time per
/// kernel class, fallbacks, and every kernel when asked.
inline void add_execution_json(const Prediction& p, const Model& m, const EfficiencyProfile& profile, json& out) {
    out["runtime"] = to_string(p.runtime);
    out["kernel_count"] = p.kernel_count;
    out["gpu_busy_s"] = p.gpu_busy_s;
    out["gpu_idle_s"] = p.gpu_idle_s;
    out["host_s"] = p.host_s;
    out["bound"] = to_string(p.bound);
    if (p.runtime == Runtime::ideal) return;
    json classes = json::object();
    for (KernelClass c : all_kernel_classes)
        if (p.class_time_s[static_cast<std::size_t>(c)] > 0) classes[std::string(to_string(c))] = p.class_time_s[static_cast<std::size_t>(c)];
    out["kernel_class_time_s"] = classes;
    out["kernel_class_source"] = profile.kernel_class_source.view();
    out["host_source"] = profile.host.source.view();
    out["fallbacks"] = p.fallbacks;
    if (p.kernels.empty()) return;
    json kernels = json::array();
    for (const TimedKernel& k : p.kernels)
        kernels.push_back({{"layer", k.kernel.step_level ? std::string_view(k.kernel.part == StepPart::optimizer ? "optimizer" : "loss")
                                                         : m.nodes()[k.kernel.node].name.view()},
                           {"part", to_string(k.kernel.part)}, {"class", to_string(k.kernel.kind)}, {"what", k.kernel.what},
                           {"bytes", k.kernel.bytes()}, {"flops", k.time.flops}, {"time_s", k.time.total_s},
                           {"bound", to_string(k.time.bound)}, {"issue_s", k.issue_s}, {"start_s", k.start_s}});
    out["kernels"] = kernels;
}

inline json prediction_json(const Resolved& r, const Prediction& p) {
    const Model& m = r.model;
    json layers = json::array();
    for (const LayerPrediction& lp : p.layers) {
        const Node& n = m.nodes()[lp.node];
        layers.push_back({{"name", n.name.view()},
                          {"type", type_label(n.layer)},
                          {"time_s", lp.time.value()},
                          {"forward_s", lp.pass[0].value()},
                          {"backward_data_s", lp.pass[1].value()},
                          {"backward_weight_s", lp.pass[2].value()},
                          {"bound", to_string(lp.bound)},
                          {"flops", lp.flops.value()},
                          {"bytes", lp.bytes.value()}});
    }
    json by_type = json::array();
    for (const auto& [type, t] : p.by_type) by_type.push_back({{"type", type}, {"time_s", t.value()}});
    json out = {{"model", r.model_id},
                {"device", r.device.id.view()},
                {"mode", to_string(p.mode)},
                {"precision", to_string(p.precision)},
                {"math_class", to_string(p.math)},
                {"batch", p.batch},
                {"throughput_samples_per_s", p.throughput_samples_per_s},
                {"step_time_s", p.step_time.value()},
                {"compute_time_s", p.compute_time.value()},
                {"phase_time_s",
                 {{"forward", p.phase_time[0].value()},
                  {"backward_data", p.phase_time[1].value()},
                  {"backward_weight", p.phase_time[2].value()},
                  {"optimizer", p.phase_time[3].value()}}},
                {"flops_per_step", p.flops.value()},
                {"bytes_per_step", p.bytes.value()},
                {"achieved_tflops", p.achieved.value() / 1e12},
                {"fraction_of_peak", p.fraction_of_peak},
                {"memory_bytes", p.memory.total().value()},
                {"memory",
                 {{"weights", p.memory.weights.value()},
                  {"gradients", p.memory.gradients.value()},
                  {"optimizer_state", p.memory.optimizer_state.value()},
                  {"activations", p.memory.activations.value()},
                  {"activations_per_sample", p.memory.activations_per_sample.value()},
                  {"reserved", p.memory.reserved.value()},
                  {"capacity", p.capacity.value()}}},
                {"fits", p.fits},
                {"max_batch", p.max_batch},
                {"power_w", p.power.value()},
                {"samples_per_joule", p.samples_per_joule},
                {"samples_per_s_per_watt", p.samples_per_joule},
                {"profile", r.profile.source.view()},
                {"by_type", by_type},
                {"layers", layers}};
    if (p.mode == Mode::train) out["optimizer"] = to_string(p.optimizer);
    out[r.uses_seq ? "seq" : "image_size"] = r.size;
    add_execution_json(p, r.model, r.profile, out);
    return out;
}

inline std::string seconds_text(double s) {
    if (s >= 1) return fixed(s, 3) + " s";
    if (s >= 1e-3) return fixed(s * 1e3, 3) + " ms";
    return fixed(s * 1e6, 1) + " us";
}

inline std::string gib(std::int64_t bytes) { return fixed(static_cast<double>(bytes) / 1073741824.0, 2) + " GiB"; }

/// The execution model's summary lines (kernel-level runtimes), and the fallbacks the runtime took.
inline void print_execution(const Prediction& p, const EfficiencyProfile& profile) {
    if (p.runtime == Runtime::ideal) {
        std::cout << "  execution       ideal: one kernel per layer pass (" << p.kernel_count << "), no host cost\n";
        return;
    }
    const double step = p.step_time.value();
    std::cout << "  execution       " << to_string(p.runtime) << ": " << p.kernel_count << " kernels; GPU busy "
              << seconds_text(p.gpu_busy_s) << ", idle " << seconds_text(p.gpu_idle_s) << " ("
              << fixed(100 * p.gpu_idle_s / step, 1) << "%); host dispatch " << seconds_text(p.host_s) << "; bound: "
              << to_string(p.bound) << "\n"
              << "    kernel classes: " << profile.kernel_class_source.view() << "; host: " << profile.host.source.view()
              << "\n";
    if (!p.fallbacks.empty()) {
        std::string list;
        for (const auto& f : p.fallbacks) list += (list.empty() ? "" : ", ") + f;
        std::cout << "    no " << to_string(p.runtime) << " rule for " << list << ": lowered one kernel per pass\n";
    }
}

/// `predict --kernels`: every kernel of the step in issue order.
inline void print_kernels(const Prediction& p, const Model& m) {
    Table t({"#", "layer", "part", "class", "kernel", "bytes", "FLOPs", "time", "bound"},
            {true, false, false, false, false, true, true, true, false});
    std::size_t i = 0;
    for (const TimedKernel& k : p.kernels)
        t.add({std::to_string(++i),
               k.kernel.step_level ? std::string(k.kernel.part == StepPart::optimizer ? "optimizer" : "loss")
                                   : std::string(m.nodes()[k.kernel.node].name.view()),
               std::string(to_string(k.kernel.part)), std::string(to_string(k.kernel.kind)), std::string(k.kernel.what),
               si(k.kernel.bytes()) + "B", si(k.time.flops), seconds_text(k.time.total_s), std::string(to_string(k.time.bound))});
    std::cout << t.render() << "\n";
}

inline int run_predict(const PredictOptions& o) {
    const Resolved r = resolve(o);
    const Prediction p = Predictor(r.model)(r.device, r.profile, r.request);
    if (!o.svg.empty()) write_breakdown_svg(o.svg, r.model, r.device, p, r.model_id, o.top);
    if (o.json) {
        std::cout << prediction_json(r, p).dump(2) << '\n';
        return 0;
    }
    if (o.csv) {
        Table t({"layer", "type", "time", "fwd", "bwd-data", "bwd-weight", "FLOPs", "bytes", "FLOP/B", "bound"}, {});
        t.csv_names({"layer", "type", "time_s", "forward_s", "backward_data_s", "backward_weight_s", "flops", "bytes",
                     "arithmetic_intensity", "bound"});
        for (const LayerPrediction& lp : p.layers) {
            const Node& n = r.model.nodes()[lp.node];
            t.add({std::string(n.name.view()), std::string(type_label(n.layer)), {"", lp.time.value()},
                   {"", lp.pass[0].value()}, {"", lp.pass[1].value()}, {"", lp.pass[2].value()}, {"", lp.flops.value()},
                   {"", lp.bytes.value()}, {"", lp.bytes.value() > 0 ? lp.flops.value() / lp.bytes.value() : 0.0},
                   std::string(to_string(lp.bound))});
        }
        std::cout << t.csv();
        return 0;
    }
    const bool train = p.mode == Mode::train;
    std::cout << r.model_id << " on " << r.device.name.view() << " (" << r.device.id.view() << "): "
              << (train ? "training" : "inference") << ", batch " << p.batch << ", " << to_string(p.precision)
              << " on " << to_string(p.math) << (r.uses_seq ? ", seq " : ", image ") << r.size << "\n"
              << "efficiency profile: " << r.profile.source.view() << "\n\n";
    std::cout << "  throughput      " << fixed(p.throughput_samples_per_s, 1) << " samples/s\n"
              << "  step time       " << seconds_text(p.step_time.value()) << "\n";
    print_execution(p, r.profile);
    if (train)
        std::cout << "    forward " << seconds_text(p.phase_time[0].value()) << ", backward-data "
                  << seconds_text(p.phase_time[1].value()) << ", backward-weight "
                  << seconds_text(p.phase_time[2].value()) << ", optimizer " << seconds_text(p.phase_time[3].value())
                  << "\n";
    std::cout << "  arithmetic      " << si(p.flops.value()) << "FLOP, " << si(p.bytes.value()) << "B moved per step\n"
              << "  achieved        " << fixed(p.achieved.value() / 1e12, 1) << " TFLOP/s = "
              << fixed(100 * p.fraction_of_peak, 1) << "% of the " << to_string(p.math) << " peak ("
              << peak_text(r.device.peak[p.math]) << ")\n"
              << "  memory          " << gib(p.memory.total().value()) << " of " << gib(p.capacity.value())
              << (p.fits ? " (fits)" : " (DOES NOT FIT)") << "; largest batch that fits: " << p.max_batch << "\n"
              << "    weights " << gib(p.memory.weights.value()) << ", gradients " << gib(p.memory.gradients.value())
              << ", optimizer " << gib(p.memory.optimizer_state.value()) << ", activations "
              << gib(p.memory.activations.value()) << ", reserved " << gib(p.memory.reserved.value()) << "\n"
              << "  energy          " << fixed(p.samples_per_joule, 2) << " samples/J at " << fixed(p.power.value(), 0)
              << " W (" << (r.profile.power_w > 0 ? "measured" : "TDP") << ")\n\n";

    if (o.kernels) print_kernels(p, r.model);
    Table types({"layer type", "time", "share"}, {false, true, true});
    for (const auto& [type, t] : p.by_type)
        types.add({std::string(type), seconds_text(t.value()), fixed(100 * t.value() / p.step_time.value(), 1) + "%"});
    std::cout << types.render() << "\n";

    std::vector<const LayerPrediction*> order;
    for (const LayerPrediction& lp : p.layers) order.push_back(&lp);
    if (!o.all_layers) {
        std::stable_sort(order.begin(), order.end(),
                         [](const auto* a, const auto* b) { return a->time.value() > b->time.value(); });
        if (o.top >= 0 && order.size() > static_cast<std::size_t>(o.top)) order.resize(static_cast<std::size_t>(o.top));
    }
    Table layers({"layer", "type", "time", "fwd", "bwd-data", "bwd-weight", "FLOP/B", "bound"},
                 {false, false, true, true, true, true, true, false});
    for (const LayerPrediction* lp : order) {
        const Node& n = r.model.nodes()[lp->node];
        layers.add({std::string(n.name.view()), std::string(type_label(n.layer)), seconds_text(lp->time.value()),
                    seconds_text(lp->pass[0].value()), train ? seconds_text(lp->pass[1].value()) : "-",
                    train ? seconds_text(lp->pass[2].value()) : "-",
                    fixed(lp->bytes.value() > 0 ? lp->flops.value() / lp->bytes.value() : 0.0, 1),
                    std::string(to_string(lp->bound))});
    }
    std::cout << (o.all_layers ? "every layer:\n" : "slowest layers:\n") << layers.render();
    return 0;
}

inline int run_roofline(const PredictOptions& o) {
    Resolved r = resolve(o);
    r.request.per_layer = true;
    const Prediction p = Predictor(r.model)(r.device, r.profile, r.request);
    RooflineChart chart = roofline_chart(r.model, r.device, r.profile, p, r.model_id);
    if (!o.svg.empty()) {
        std::ofstream out(o.svg);
        if (!out) roofplan::detail::fail("cannot write '", o.svg, "'");
        out << render_svg(chart);
        if (!out) roofplan::detail::fail("writing '", o.svg, "' failed");
    }
    if (o.json) {
        json roofs = json::array();
        for (const auto& roof : chart.roofs)
            roofs.push_back({{"label", roof.label}, {"peak_flops_per_s", roof.peak}, {"ridge_flops_per_byte", roof.peak / chart.bandwidth}});
        json points = json::array();
        for (const auto& pt : chart.points)
            points.push_back({{"name", pt.name}, {"type", pt.type}, {"arithmetic_intensity", pt.intensity},
                              {"flops_per_s", pt.performance}, {"time_s", pt.time}, {"bound", pt.bound}});
        std::cout << json{{"model", r.model_id}, {"device", r.device.id.view()}, {"precision", to_string(p.precision)},
                          {"mode", to_string(p.mode)}, {"batch", p.batch}, {"bandwidth_bytes_per_s", chart.bandwidth},
                          {"roofs", roofs}, {"points", points}, {"svg", o.svg}}
                         .dump(2)
                  << '\n';
        return 0;
    }
    if (o.csv) {
        Table t({"name", "type", "FLOP/B", "FLOP/s", "time", "bound"}, {});
        t.csv_names({"name", "type", "arithmetic_intensity", "flops_per_s", "time_s", "bound"});
        for (const auto& pt : chart.points)
            t.add({pt.name, pt.type, {"", pt.intensity}, {"", pt.performance}, {"", pt.time}, pt.bound});
        std::cout << t.csv();
        return 0;
    }
    if (o.svg.empty())
        roofplan::detail::fail("roofline: give --svg FILE for the chart, or --json / --csv for its data");
    std::cout << "wrote " << o.svg << ": " << chart.points.size() << " layers of " << r.model_id << " on "
              << r.device.id.view() << " (" << to_string(p.precision) << ", batch " << p.batch << ")\n";
    return 0;
}

}  // namespace roofplan::cli

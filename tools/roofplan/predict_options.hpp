// tools/roofplan/predict_options.hpp — the workload options of predict, roofline, compare, scaling and plan, and
// what they resolve to (model, device, profile, request).
#pragma once

#include "options.hpp"

#include <roofplan/roofplan.hpp>

#include <optional>
#include <string>

namespace roofplan::cli {

struct PredictOptions {
    DeviceOptions devices;
    io::ModelSource source;  ///< --model / --model-file, --seq, --image-size
    std::string device;
    std::int64_t batch = 0;
    std::string precision = "fp32";
    std::string mode = "train";
    std::string optimizer = "sgd";
    std::string runtime;  ///< empty: eager (int8: compiled, PyTorch eager has no int8 path)
    std::string cuda_graphs;  ///< --cuda-graphs on|off (compiled runtime only); empty: on
    std::string engine;  ///< --engine on|off (compiled runtime, inference); empty: off (int8: on)
    std::optional<double> host_speed;  ///< --host-speed: the host's speed against the profile's (kernel-level runtimes)
    bool kernels = false;  ///< predict --kernels: keep every kernel of the step
    std::string profile;
    std::optional<double> context_gib;  ///< --context-gib; none: the device's measured (or borrowed) context
    std::optional<double> reserved_gib;  ///< the retired --reserved-gib, kept to say what replaced it
    int top = 12;
    bool all_layers = false;
    bool json = false;
    bool csv = false;
    std::string svg;  ///< roofline: the roofline chart; predict: the step-time breakdown chart
};

/// --runtime: how the framework runs the model (see PredictRequest::runtime).
inline void add_runtime_option(CLI::App* app, PredictOptions& o, const std::string& help) {
    app->add_option("--runtime", o.runtime, help)->check(one_of<Runtime>());
    app->add_option("--cuda-graphs", o.cuda_graphs,
                    "Compiled runtime: on (replayed as CUDA graphs: torch.compile mode=\"reduce-overhead\", inference "
                    "engines; default) or off (torch.compile's default mode: its wrapper launches every kernel)");
    app->add_option("--engine", o.engine,
                    "Compiled runtime in inference: on (an inference engine, TensorRT-like: batch norm folded, bias, "
                    "activation and residual add in the convolution/GEMM epilogue, weights stored in the compute type) "
                    "or off (torch.compile: a generated kernel after each convolution; default). int8: always on");
    app->add_option("--host-speed", o.host_speed,
                    "Eager and compiled runtimes: how much slower (>1) or faster (<1) this host runs Python than the "
                    "profile's host: its view-op probe over the profile's view_s (docs/model.md: Host timeline); "
                    "each host cost moves by its class's sensitivity. Default 1")
        ->check(number_in(min_host_speed, max_host_speed, false));
}

/// The runtime a run asked for: --runtime, else eager (int8: compiled, PyTorch eager has no int8 path).
inline Runtime runtime_of(const PredictOptions& o, Precision precision) {
    if (!o.runtime.empty()) return parse_runtime(o.runtime);
    return precision == Precision::int8 ? Runtime::compiled : Runtime::eager;
}

/// --context-gib, and the retired --reserved-gib (an error that names its replacement).
inline void add_context_option(CLI::App* app, PredictOptions& o) {
    app->add_option("--context-gib", o.context_gib,
                    "Device memory outside PyTorch's allocator: CUDA context, library modules (GiB; default: the "
                    "device's measured figure, see docs/memory.md)");
    app->add_option("--reserved-gib", o.reserved_gib)->group("");  // hidden: retired
}

/// The options predict (`roofline` false) and roofline share.
inline void add_predict_options(CLI::App* app, PredictOptions& o, bool roofline) {
    add_device_options(app, o.devices);
    add_model_source(app, o.source);
    auto* device = app->add_option("--device,-d", o.device, "Device id or alias (see `roofplan devices`)");
    if (roofline) device->required();
    app->add_option("--batch,-b", o.batch, "Batch size per GPU (default: 32 for training, 1... see docs)")
        ->check(positive_count());
    add_size_options(app, o.source);
    app->add_option("--precision,-p", o.precision, "fp32, tf32, amp-fp16, amp-bf16 or int8 (inference)")
        ->check(one_of<Precision>());
    app->add_option("--mode", o.mode, "train or infer")->check(one_of<Mode>());
    app->add_option("--optimizer", o.optimizer, "sgd (with momentum) or adam (training memory and update)")
        ->check(one_of<Optimizer>());
    add_runtime_option(app, o,
                       "eager (PyTorch eager with autocast; default), compiled (fused kernels, CUDA graphs; default "
                       "for int8) or ideal (one kernel per layer pass, no host cost)");
    app->add_option("--profile", o.profile, "Calibrated efficiency profile (JSON); default: per-generation defaults");
    add_context_option(app, o);
    add_output_flags(app, o.json, o.csv, "Print JSON",
                     roofline ? "Print the layers' points as CSV (RFC 4180, raw numbers)"
                              : "Print every layer (model order) as CSV: raw seconds, FLOPs, bytes, bound");
}

/// What a run resolved its options to.
struct Resolved {
    const io::LoadedModel* loaded = nullptr;
    Device device;
    EfficiencyProfile profile;
    PredictRequest request;
    double host_speed = 1;  ///< --host-speed (the profile's host costs are already scaled by it)
    [[nodiscard]] const Model& model() const { return loaded->model; }
    [[nodiscard]] const std::string& model_id() const { return loaded->id; }
};

/// The options resolved for `loaded` (a model the caller holds: the Python package's models; `o.source` unused).
inline Resolved resolve(const PredictOptions& o, const io::LoadedModel& loaded) {
    if (o.device.empty()) fail("give --device D (or --system S, whose GPU is used)");
    const DeviceCatalog catalog = o.devices.catalog();
    Resolved r{&loaded, catalog.find(o.device), {}, {}, 1};
    r.profile = o.profile.empty() ? default_profile(r.device) : io::load_profile(o.profile, r.device);
    r.request.mode = parse_mode(o.mode);
    r.request.precision = parse_precision(o.precision);
    r.request.optimizer = parse_optimizer(o.optimizer);
    r.request.runtime = runtime_of(o, r.request.precision);
    if (!o.cuda_graphs.empty()) {
        if (o.cuda_graphs != "on" && o.cuda_graphs != "off")
            fail("--cuda-graphs: expected on or off, got '", o.cuda_graphs, "'");
        if (r.request.runtime != Runtime::compiled)
            fail("--cuda-graphs applies to --runtime compiled only (this run's runtime is ", to_string(r.request.runtime), ")");
        r.request.cuda_graphs = o.cuda_graphs == "on";
    }
    if (!o.engine.empty()) {
        if (o.engine != "on" && o.engine != "off") fail("--engine: expected on or off, got '", o.engine, "'");
        if (r.request.runtime != Runtime::compiled || r.request.mode != Mode::infer)
            fail("--engine applies to --runtime compiled with --mode infer only (this run: runtime ",
                 to_string(r.request.runtime), ", mode ", to_string(r.request.mode), ")");
        if (o.engine == "off" && r.request.precision == Precision::int8)
            fail("--engine off: an int8 inference runs only as an inference engine (torch.compile has no int8 path)");
        r.request.engine = o.engine == "on";
    }
    if (o.host_speed) {
        if (r.request.runtime == Runtime::ideal)
            fail("--host-speed applies to the eager and compiled runtimes (this run's runtime is ideal: no host)");
        if (*o.host_speed != 1) {
            r.host_speed = *o.host_speed;
            r.profile.host = at_host_speed(r.profile.host, *o.host_speed);
            const std::string source = "x" + fixed(*o.host_speed, 2) + " speed; " + std::string(r.profile.host.source.view());
            r.profile.host.source = FixedString<63>(std::string_view(source).substr(0, 63));
        }
    }
    r.request.kernels = o.kernels;
    r.request.batch = o.batch != 0 ? o.batch : (r.request.mode == Mode::train ? 32 : 1);
    require_batch(r.request.batch);
    if (o.reserved_gib)
        fail("--reserved-gib was retired: the memory model predicts the allocator's reserved memory and the library "
             "workspaces; give only what lies outside the allocator with --context-gib (GiB, default: the device's "
             "measured figure)");
    if (o.context_gib) {
        if (!(*o.context_gib >= 0 && *o.context_gib < 1e6))
            fail("--context-gib must be a number of GiB >= 0 and < 1e6, got ", fixed(*o.context_gib, 3));
        r.request.context = memory::ContextFigure{static_cast<std::int64_t>(*o.context_gib * 1073741824.0),
                                                  "given with --context-gib", false};
    }
    return r;
}

/// The options resolved, the model loaded from `o.source` (once per process and source).
inline Resolved resolve(const PredictOptions& o) { return resolve(o, cached_model(o.source)); }

}  // namespace roofplan::cli

// python/src/module.cpp — roofplan._core, the compiled half of the Python package (python/roofplan/): the command
// line run in this process (every subcommand, the same figures and errors as the roofplan binary), models loaded
// once and kept, and one-GPU predictions and sweeps that call the library directly, for speed, with the CLI's JSON.
#include "../../tools/roofplan/commands.hpp"
#include "../../tools/roofplan/predict_single.hpp"
#include "../../tools/roofplan/run.hpp"

#include <roofplan/version.hpp>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace py = pybind11;
using namespace roofplan;

namespace {

/// std::cout and std::cerr into strings while a command runs (restored however it ends).
class Captured {
public:
    Captured() : out_(std::cout.rdbuf(out.rdbuf())), err_(std::cerr.rdbuf(err.rdbuf())) {}
    ~Captured() {
        std::cout.rdbuf(out_);
        std::cerr.rdbuf(err_);
    }
    Captured(const Captured&) = delete;
    Captured& operator=(const Captured&) = delete;
    std::ostringstream out, err;

private:
    std::streambuf* out_;
    std::streambuf* err_;
};

/// roofplan ARGS... in this process: (exit status, stdout, stderr).  Exit statuses as the binary's (docs/cli.md).
py::tuple run_cli(const std::vector<std::string>& args) {
    std::vector<const char*> argv{"roofplan"};
    for (const std::string& a : args) argv.push_back(a.c_str());
    int code = 0;
    std::string out, err;
    {
        Captured c;
        code = cli::run(static_cast<int>(argv.size()), argv.data());
        out = c.out.str();
        err = c.err.str();
    }
    return py::make_tuple(code, out, err);
}

/// The options of one subcommand: (flag names, positional, takes a value, repeatable, description).
py::list command_options(const std::string& name) {
    for (const cli::Command* c : cli::all_commands) {
        if (c->name != name) continue;
        CLI::App app;
        cli::Session session;
        CLI::App* sub = app.add_subcommand(c->name, c->description);
        c->attach(sub, session);
        py::list options;
        for (const CLI::Option* o : sub->get_options()) {
            if (o->get_group().empty()) continue;  // hidden (retired) options
            std::vector<std::string> names = o->get_lnames();
            const bool positional = names.empty();
            if (positional) names = {o->get_name(true, false)};
            options.append(py::make_tuple(names, positional, o->get_expected_max() != 0,  // flags expect none
                                          o->get_expected_max() > 1,
                                          o->get_description()));
        }
        return options;
    }
    throw py::value_error("no roofplan command '" + name + "'");
}

/// An error of the library, or of the CLI's checks, as a Python ValueError with the CLI's message.
[[noreturn]] void raise_value_error(const Error& e) { throw py::value_error(cli::message_of(e)); }

/// A model loaded once (zoo id or file), its predictor made on first use and kept.
struct PyModel {
    io::ModelSource source;
    std::shared_ptr<const io::LoadedModel> loaded;
    std::unique_ptr<Predictor> predictor;
    std::vector<std::string> warnings;

    const Predictor& predict() {
        if (!predictor) predictor = std::make_unique<Predictor>(loaded->model);
        return *predictor;
    }
};

std::shared_ptr<PyModel> load_model(const std::string& model, const std::string& model_file, std::int64_t seq,
                              std::int64_t image_size, bool strict, const std::vector<std::string>& inputs) {
    auto m = std::make_shared<PyModel>();
    m->source = io::ModelSource{model, model_file, strict, inputs, seq, image_size};
    try {
        if (model.empty() && model_file.empty())
            throw Error("no model given: give a zoo id (model, see roofplan.models()) or a file (model_file)");
        if (!model.empty() && !model_file.empty())
            throw Error("give a zoo id (model) or a file (model_file), not both");
        if (seq < 0 || image_size < 0) throw Error("seq and image_size must be positive (0: the model's default)");
        m->loaded = std::make_shared<const io::LoadedModel>(io::load_model(m->source));
    } catch (const Error& e) {
        raise_value_error(e);
    }
    for (const io::SkippedOperator& u : m->loaded->unsupported)
        m->warnings.push_back(cli::skipped_operator_warning(model_file, u));
    return m;
}

/// The operators an ONNX import left out, one record each: type, count, first (the first node), reason.
py::list unsupported_of(const PyModel& m) {
    py::list out;
    for (const io::SkippedOperator& u : m.loaded->unsupported) {
        py::dict entry;
        entry["type"] = u.op_type;
        entry["count"] = u.count;
        entry["first"] = u.first_node;
        entry["reason"] = u.reason;
        out.append(std::move(entry));
    }
    return out;
}

/// A subcommand's CLI11 app, built once, whose options' own validators check values given from Python.
struct CheckedCommand {
    CLI::App app;
    cli::Session session;
    CLI::App* sub = nullptr;
};

/// What the CLI's check of option `name` (its long name: "seq", "loader-workers") of subcommand `command` says of
/// `text`: the message the CLI prints ("--seq: must be an integer in [1, 16777216], got '0'"), or "" when the
/// value passes (or the option has no check).  Python's fast paths call it, so they apply exactly the CLI's limits.
std::string option_problem(const std::string& command, const std::string& name, std::string text) {
    static std::map<std::string, std::unique_ptr<CheckedCommand>> apps;
    auto it = apps.find(command);
    if (it == apps.end()) {
        const auto c = std::find_if(cli::all_commands.begin(), cli::all_commands.end(),
                                    [&](const cli::Command* x) { return x->name == command; });
        if (c == cli::all_commands.end()) throw py::value_error("no roofplan command '" + command + "'");
        auto checked = std::make_unique<CheckedCommand>();
        checked->sub = checked->app.add_subcommand((*c)->name, (*c)->description);
        (*c)->attach(checked->sub, checked->session);
        it = apps.emplace(command, std::move(checked)).first;
    }
    CLI::Option* option = it->second->sub->get_option_no_throw("--" + name);
    if (!option) throw py::value_error("roofplan " + command + " has no option --" + name);
    for (int i = 0;; ++i) {
        const CLI::Validator* v = nullptr;
        try {
            v = option->get_validator(i);  // CLI11 2.1 throws past the last one (and has no count)
        } catch (const CLI::OptionNotFound&) {
            return {};
        }
        if (std::string problem = (*v)(text); !problem.empty()) return option->get_name() + ": " + problem;
    }
}

/// One-GPU prediction options as predict's flags give them (python/roofplan/_commands.py checks types and ranges).
struct Request {
    std::string device;
    std::vector<std::string> device_files;
    std::int64_t batch = 0;
    std::string precision = "fp32", mode = "train", optimizer = "sgd", runtime, cuda_graphs, engine, profile;
    std::optional<double> context_gib;
    std::optional<double> host_speed;
    bool kernels = false;
    std::string input_source;
    int loader_workers = 0;
    double decode_rate = 0;
    bool per_layer = true;   ///< the per-layer breakdown (a sweep's records have none)
    bool memory = true;      ///< the memory estimate (memory_bytes, fits, max_batch)

    /// The library's request of `r` with what only the Python side can ask for.
    void adjust(cli::Resolved& r) const {
        r.request.per_layer = per_layer;
        r.request.estimate_memory = memory;
    }

    [[nodiscard]] cli::PredictOptions options() const {
        cli::PredictOptions o;
        o.devices.device_files = device_files;
        o.device = device;
        o.batch = batch;
        o.precision = precision;
        o.mode = mode;
        o.optimizer = optimizer;
        o.runtime = runtime;
        o.cuda_graphs = cuda_graphs;
        o.engine = engine;
        o.profile = profile;
        o.context_gib = context_gib;
        o.host_speed = host_speed;
        o.kernels = kernels;
        return o;
    }
    [[nodiscard]] cli::InputOptions input() const { return {input_source, loader_workers, decode_rate}; }
};

/// A one-GPU prediction: the library's figures, and the CLI's JSON of them on request.
struct PyPrediction {
    std::shared_ptr<PyModel> model;  ///< keeps the model the resolved options point to
    cli::Resolved resolved;
    Prediction p;

    [[nodiscard]] std::string json() const { return cli::prediction_json(resolved, p).dump(); }
};

PyPrediction predict_gpu(const std::shared_ptr<PyModel>& m, const Request& q) {
    try {
        const cli::PredictOptions o = q.options();
        cli::Resolved r = cli::resolve(o, *m->loaded);
        Prediction p = cli::predict_single(m->predict(), r, o, q.input());
        return {m, std::move(r), std::move(p)};
    } catch (const Error& e) {
        raise_value_error(e);
    }
}

/// Predictions over every combination (devices × precisions × modes × batches, in that nesting), one record each
/// with predict's JSON names for the headline figures; a combination the library refuses (int8 on a GPU without
/// it) gets its message under "error" and no figures.
py::list sweep_all(const std::shared_ptr<PyModel>& m, const std::vector<std::string>& devices,
               const std::vector<std::int64_t>& batches, const std::vector<std::string>& precisions,
               const std::vector<std::string>& modes, const Request& base) {
    py::list records;
    const Predictor& predictor = m->predict();
    for (const std::string& device : devices)
        for (const std::string& precision : precisions)
            for (const std::string& mode : modes) {
                Request q = base;
                q.device = device;
                q.precision = precision;
                q.mode = mode;
                q.per_layer = false;  // the records have no per-layer figures
                std::optional<cli::Resolved> r;
                std::string error;
                try {
                    r = cli::resolve(q.options(), *m->loaded);
                    q.adjust(*r);
                } catch (const Error& e) {
                    error = cli::message_of(e);
                }
                for (std::int64_t batch : batches) {
                    if (PyErr_CheckSignals() != 0) throw py::error_already_set();  // Ctrl-C ends a long sweep
                    py::dict rec;
                    rec["device"] = device;
                    rec["precision"] = precision;
                    rec["mode"] = mode;
                    rec["batch"] = batch;
                    std::string why = error;
                    if (why.empty()) try {
                            require_batch(batch);
                            r->request.batch = batch;
                            const Prediction p = cli::predict_single(predictor, *r, q.options(), q.input());
                            rec["step_time_s"] = p.step_time.value();
                            rec["throughput_samples_per_s"] = p.throughput_samples_per_s;
                            if (q.memory) {
                                rec["memory_bytes"] = p.memory.total.value();
                                rec["fits"] = p.fits;
                                rec["max_batch"] = p.max_batch;
                            }
                            rec["bound"] = std::string(to_string(p.bound));
                            rec["gpu_idle_s"] = p.gpu_idle_s;
                            rec["host_s"] = p.host_s;
                            rec["power_w"] = p.power.value();
                            rec["samples_per_joule"] = p.samples_per_joule;
                        } catch (const Error& e) {
                            why = cli::message_of(e);
                        }
                    if (!why.empty()) rec["error"] = why;
                    records.append(std::move(rec));
                }
            }
    return records;
}

/// What one C++ call of the library costs, measured here so that Python's overhead can be told apart
/// (python/bench/bench_predict.py): the median of `rounds` rounds of `calls` predictions, seconds per prediction.
double cpp_predict_seconds(const std::shared_ptr<PyModel>& m, const Request& q, int calls, int rounds) {
    if (calls < 1 || rounds < 1)
        throw py::value_error("cpp_predict_seconds: calls and rounds must be at least 1, got calls=" +
                              std::to_string(calls) + ", rounds=" + std::to_string(rounds));
    const cli::PredictOptions o = q.options();
    std::vector<double> per_call;
    for (int k = 0; k < rounds; ++k) {
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i) {
            cli::Resolved r = cli::resolve(o, *m->loaded);
            q.adjust(r);
            const Prediction p = cli::predict_single(m->predict(), r, o, q.input());
            if (!(p.step_time.value() > 0)) throw py::value_error("no step time");
        }
        per_call.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / calls);
    }
    std::sort(per_call.begin(), per_call.end());
    return per_call[per_call.size() / 2];
}

}  // namespace

PYBIND11_MODULE(_core, mod) {
    mod.doc() = "roofplan's C++ library for Python (use the roofplan package, not this module)";
    mod.attr("__version__") = std::string(roofplan::version);
    mod.def("run_cli", &run_cli, py::arg("args"));
    mod.def("command_names", [] {
        std::vector<std::string> names;
        for (const cli::Command* c : cli::all_commands) names.push_back(c->name);
        return names;
    });
    mod.def("command_options", &command_options, py::arg("name"));
    mod.def("option_problem", &option_problem, py::arg("command"), py::arg("name"), py::arg("text"));

    py::class_<PyModel, std::shared_ptr<PyModel>>(mod, "Model")
        .def_property_readonly("id", [](const PyModel& m) { return m.loaded->id; })
        .def_property_readonly("kind", [](const PyModel& m) { return m.loaded->source; })
        .def_property_readonly("size", [](const PyModel& m) { return m.loaded->size; })
        .def_property_readonly("uses_seq", [](const PyModel& m) { return m.loaded->uses_seq; })
        .def_property_readonly("zoo_id", [](const PyModel& m) { return m.source.model; })
        .def_property_readonly("file", [](const PyModel& m) { return m.source.model_file; })
        .def_property_readonly("warnings", [](const PyModel& m) { return m.warnings; })
        .def_property_readonly("unsupported", &unsupported_of)
        .def_property_readonly("seq", [](const PyModel& m) { return m.source.seq; })
        .def_property_readonly("image_size", [](const PyModel& m) { return m.source.image_size; })
        .def_property_readonly("strict", [](const PyModel& m) { return m.source.strict; })
        .def_property_readonly("inputs", [](const PyModel& m) { return m.source.inputs; })
        .def_property_readonly("layer_count", [](const PyModel& m) { return m.loaded->model.nodes().size(); })
        .def_property_readonly("parameters", [](const PyModel& m) { return m.loaded->model.params(); })
        .def("to_json", [](const PyModel& m) { return io::model_to_json(m.loaded->model).dump(); });
    mod.def("load_model", &load_model, py::arg("model") = "", py::arg("model_file") = "", py::arg("seq") = 0,
            py::arg("image_size") = 0, py::arg("strict") = false, py::arg("inputs") = std::vector<std::string>{});

    py::class_<Request>(mod, "Request")
        .def(py::init<>())
        .def_readwrite("device", &Request::device)
        .def_readwrite("device_files", &Request::device_files)
        .def_readwrite("batch", &Request::batch)
        .def_readwrite("precision", &Request::precision)
        .def_readwrite("mode", &Request::mode)
        .def_readwrite("optimizer", &Request::optimizer)
        .def_readwrite("runtime", &Request::runtime)
        .def_readwrite("cuda_graphs", &Request::cuda_graphs)
        .def_readwrite("engine", &Request::engine)
        .def_readwrite("profile", &Request::profile)
        .def_readwrite("context_gib", &Request::context_gib)
        .def_readwrite("host_speed", &Request::host_speed)
        .def_readwrite("kernels", &Request::kernels)
        .def_readwrite("input_source", &Request::input_source)
        .def_readwrite("loader_workers", &Request::loader_workers)
        .def_readwrite("decode_rate", &Request::decode_rate)
        .def_readwrite("per_layer", &Request::per_layer)
        .def_readwrite("memory", &Request::memory);

    py::class_<PyPrediction>(mod, "Prediction")
        .def_property_readonly("step_time_s", [](const PyPrediction& x) { return x.p.step_time.value(); })
        .def_property_readonly("throughput_samples_per_s", [](const PyPrediction& x) { return x.p.throughput_samples_per_s; })
        .def_property_readonly("memory_bytes", [](const PyPrediction& x) { return x.p.memory.total.value(); })
        .def_property_readonly("fits", [](const PyPrediction& x) { return x.p.fits; })
        .def_property_readonly("max_batch", [](const PyPrediction& x) { return x.p.max_batch; })
        .def_property_readonly("bound", [](const PyPrediction& x) { return std::string(to_string(x.p.bound)); })
        .def_property_readonly("batch", [](const PyPrediction& x) { return x.p.batch; })
        .def("json", &PyPrediction::json);
    mod.def("predict", &predict_gpu, py::arg("model"), py::arg("request"));
    mod.def("sweep", &sweep_all, py::arg("model"), py::arg("devices"), py::arg("batches"), py::arg("precisions"),
            py::arg("modes"), py::arg("base"));
    mod.def("cpp_predict_seconds", &cpp_predict_seconds, py::arg("model"), py::arg("request"), py::arg("calls"),
            py::arg("rounds"));
}

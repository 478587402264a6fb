// tools/roofplan/main.cpp — the roofplan command-line interface.
#include "calibrate_cmd.hpp"
#include "cli.hpp"
#include "validate_cmd.hpp"
#include "explain_cmd.hpp"
#include "plan_cmd.hpp"
#include "predict_cmd.hpp"
#include "system_cmd.hpp"
#include "report.hpp"

#include <roofplan/roofplan.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

namespace {

using roofplan::cli::grouped;
using roofplan::cli::si;
using roofplan::cli::Table;
using json = nlohmann::json;

struct InspectOptions {
    std::string model;
    std::string model_file;  // --model-file: ONNX or roofplan-model/1 JSON
    bool strict = false;
    std::vector<std::string> inputs;
    std::int64_t batch = 1;
    std::int64_t seq = 0;
    std::int64_t image_size = 0;
    std::string precision = "fp32";
    bool json = false;
    bool csv = false;
};

int run_models(bool as_json, bool as_csv = false) {
    if (as_json) {
        json out = json::array();
        for (const auto& entry : roofplan::models::zoo()) {
            const roofplan::Model m = entry.build();
            out.push_back({{"id", entry.id},
                           {"family", roofplan::models::to_string(entry.family)},
                           {"description", m.description()},
                           {entry.uses_seq() ? "default_seq" : "default_image_size", entry.default_size},
                           {"params", m.params()},
                           {"macs_per_sample", m.forward_macs().value()},
                           {"flops_per_sample", m.forward_flops().value()},
                           {"layers", m.size()},
                           {"source", entry.source}});
        }
        std::cout << out.dump(2) << '\n';
        return 0;
    }
    Table table({"id", "family", "input", "params", "fwd MACs/sample", "fwd FLOPs/sample", "layers", "source"},
                {false, false, false, true, true, true, true, false});
    for (const auto& entry : roofplan::models::zoo()) {
        const roofplan::Model m = entry.build();
        const std::string input = entry.uses_seq() ? "seq " + std::to_string(entry.default_size)
                                                   : std::to_string(entry.default_size) + "px";
        table.add({std::string(entry.id), std::string(roofplan::models::to_string(entry.family)), input,
                   {grouped(m.params()), m.params()},
                   {si(static_cast<double>(m.forward_macs().value())), m.forward_macs().value()},
                   {si(static_cast<double>(m.forward_flops().value())), m.forward_flops().value()},
                   std::to_string(m.size()), std::string(entry.source)});
    }
    table.csv_names({"id", "family", "input", "params", "macs_per_sample", "flops_per_sample", "layers", "source"});
    std::cout << (as_csv ? table.csv() : table.render());
    return 0;
}

int run_inspect(const InspectOptions& o) {
    const roofplan::Precision precision = roofplan::parse_precision(o.precision);
    roofplan::detail::require_batch(o.batch);
    const roofplan::cli::LoadedModel loaded =
        roofplan::cli::load_model({o.model, o.model_file, o.strict, o.inputs}, o.seq, o.image_size);
    const roofplan::Model& m = loaded.model;
    const std::int64_t size = loaded.size;

    json layers = json::array();
    Table table({"layer", "type", "output", "params", "MACs", "FLOPs", "bytes", "FLOP/B", "gamma"},
                {false, false, false, true, true, true, true, true, true});
    table.csv_names({"layer", "type", "output_shape", "params", "macs_per_sample", "flops_per_sample", "bytes",
                     "arithmetic_intensity", "gamma"});
    for (const roofplan::Node& node : m.nodes()) {
        const roofplan::Work fwd = roofplan::work(node.layer, roofplan::Pass::forward, o.batch * node.repeat, precision);
        const std::int64_t macs = roofplan::forward_macs(node.layer).value() * node.repeat;
        const std::int64_t flops = roofplan::forward_flops(node.layer).value() * node.repeat;
        const std::optional<double> gamma = roofplan::gamma(node.layer, o.batch);
        const double intensity = fwd.arithmetic_intensity().value();
        json layer = {{"name", node.name.view()},
                      {"type", roofplan::type_label(node.layer)},
                      {"output_shape", roofplan::cli::shape_json(roofplan::output_shape(node.layer))},
                      {"params", roofplan::params(node.layer)},
                      {"macs", macs},
                      {"flops", flops},
                      {"paper_ops", roofplan::paper_ops(node.layer) * node.repeat},
                      {"bytes", fwd.bytes().value()},
                      {"arithmetic_intensity", intensity},
                      {"gamma", gamma ? json(*gamma) : json(nullptr)}};
        if (node.repeat != 1) layer["repeat"] = node.repeat;
        layers.push_back(std::move(layer));
        if (!o.json) {
            char ai[32];
            std::snprintf(ai, sizeof ai, "%.1f", intensity);
            table.add({std::string(node.name.view()), std::string(roofplan::type_label(node.layer)),
                       roofplan::output_shape(node.layer).to_string() + (node.repeat != 1 ? " x" + std::to_string(node.repeat) : ""),
                       {grouped(roofplan::params(node.layer)), roofplan::params(node.layer)},
                       {si(static_cast<double>(macs)), macs}, {si(static_cast<double>(flops)), flops},
                       {si(static_cast<double>(fwd.bytes().value())), fwd.bytes().value()}, {std::string(ai), intensity},
                       gamma ? roofplan::cli::Cell(si(*gamma), *gamma) : roofplan::cli::Cell::missing()});
        }
    }
    const roofplan::StepWork step = m.training_work(o.batch, precision);
    const roofplan::Work fwd = step.forward;
    const roofplan::Work total = step.total();
    if (o.json) {
        json out = {{"model", loaded.id},
                    {"description", m.description()},
                    {"batch", o.batch},
                    {"precision", roofplan::to_string(precision)},
                    {"params", m.params()},
                    {"macs_per_sample", m.forward_macs().value()},
                    {"flops_per_sample", m.forward_flops().value()},
                    {"paper_ops_per_sample", m.paper_ops()},
                    {"forward", {{"flops", fwd.flops().value()}, {"bytes", fwd.bytes().value()}}},
                    {"training_step",
                     {{"forward_flops", fwd.flops().value()},
                      {"backward_data_flops", step.backward_data.flops().value()},
                      {"backward_weight_flops", step.backward_weight.flops().value()},
                      {"flops", total.flops().value()},
                      {"bytes", total.bytes().value()}}},
                    {"layers", std::move(layers)}};
        out[loaded.uses_seq ? "seq" : "image_size"] = size;
        if (loaded.source != "zoo") out["model_file"] = o.model_file;
        if (!loaded.import.is_null()) out["import"] = loaded.import;
        std::cout << out.dump(2) << '\n';
        return 0;
    }
    table.rule();
    table.add({"total", "", "", {grouped(m.params()), m.params()},
               {si(static_cast<double>(m.forward_macs().value())), m.forward_macs().value()},
               {si(static_cast<double>(m.forward_flops().value())), m.forward_flops().value()},
               {si(static_cast<double>(fwd.bytes().value())), fwd.bytes().value()}, "", ""});
    if (o.csv) {
        std::cout << table.csv();
        return 0;
    }
    std::cout << m.id() << ": " << m.description() << "\n"
              << (loaded.uses_seq ? "sequence length " : "image size ") << size << ", batch " << o.batch
              << ", precision " << roofplan::to_string(precision)
              << " (MACs and FLOPs per sample, forward; bytes for the whole batch, forward; gamma = paper ops x "
                 "batch / params)\n\n"
              << table.render() << "\ntraining step (batch " << o.batch << "): forward " << si(static_cast<double>(fwd.flops().value()))
              << "FLOP, backward-data " << si(static_cast<double>(step.backward_data.flops().value()))
              << "FLOP, backward-weight " << si(static_cast<double>(step.backward_weight.flops().value()))
              << "FLOP; total " << si(static_cast<double>(total.flops().value())) << "FLOP, "
              << si(static_cast<double>(total.bytes().value())) << "B moved\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"roofplan: deep-learning workload arithmetic and roofline performance planning"};
    app.set_version_flag("--version", std::string(roofplan::version));
    app.require_subcommand(1);

    bool models_json = false;
    auto* models = app.add_subcommand("models", "List the model zoo with parameter and operation counts");
    models->add_flag("--json", models_json, "Print JSON");
    bool models_csv = false;
    models->add_flag("--csv", models_csv, "Print CSV (RFC 4180, raw numbers)");

    InspectOptions inspect_options;
    auto* inspect = app.add_subcommand("inspect", "Per-layer parameters, MACs, FLOPs, bytes, intensity and gamma");
    roofplan::cli::add_model_source(inspect, inspect_options.model, inspect_options.model_file, inspect_options.strict,
                                    inspect_options.inputs);
    inspect->add_option("--batch,-b", inspect_options.batch, "Batch size (bytes and gamma depend on it)");
    inspect->add_option("--seq,-s", inspect_options.seq, "Sequence length (transformers, GNMT)");
    inspect->add_option("--image-size", inspect_options.image_size, "Square input resolution (CNNs)");
    inspect->add_option("--precision,-p", inspect_options.precision, "fp32, tf32, amp-fp16, amp-bf16 or int8");
    inspect->add_flag("--json", inspect_options.json, "Print JSON");
    inspect->add_flag("--csv", inspect_options.csv, "Print the per-layer table as CSV (RFC 4180, raw numbers)");

    roofplan::cli::DeviceOptions devices_options;
    bool devices_json = false;
    auto* devices = app.add_subcommand("devices", "List the device catalog (dense datasheet peaks, memory, links)");
    roofplan::cli::add_device_options(devices, devices_options);
    devices->add_flag("--json", devices_json, "Print JSON");
    bool devices_csv = false;
    devices->add_flag("--csv", devices_csv, "Print CSV (RFC 4180, raw numbers)");

    roofplan::cli::PredictOptions predict_options;
    auto* predict = app.add_subcommand(
        "predict", "Predict training or inference on one GPU: throughput, step time, bounds, memory, energy");
    roofplan::cli::add_predict_options(predict, predict_options, false);
    roofplan::cli::SystemPredictOptions system_predict_options;
    roofplan::cli::add_system_predict_options(predict, system_predict_options);

    bool systems_json = false;
    std::string systems_file;
    auto* systems = app.add_subcommand("systems", "List the multi-GPU systems and their interconnects");
    systems->add_flag("--json", systems_json, "Print JSON");
    bool systems_csv = false;
    systems->add_flag("--csv", systems_csv, "Print CSV (RFC 4180, raw numbers)");
    systems->add_option("--system-file", systems_file, "JSON file with extra systems (schema of data/systems.json)");

    roofplan::cli::CollectiveOptions collective_options;
    auto* collective = app.add_subcommand("collective", "Predict NCCL collective time, algbw and busbw on a system");
    roofplan::cli::add_collective_options(collective, collective_options);

    roofplan::cli::PredictOptions roofline_options;
    auto* roofline = app.add_subcommand("roofline", "Draw a model's layers on a device's roofline (SVG)");
    roofplan::cli::add_predict_options(roofline, roofline_options, true);

    roofplan::cli::ScalingOptions compare_options;
    auto* compare = app.add_subcommand("compare", "Compare systems' data-parallel training throughput side by side");
    roofplan::cli::add_scaling_options(compare, compare_options, true);

    roofplan::cli::ScalingOptions scaling_options;
    auto* scaling = app.add_subcommand("scaling", "Throughput and scaling efficiency vs GPU count on a system");
    roofplan::cli::add_scaling_options(scaling, scaling_options, false);

    roofplan::cli::CalibrateOptions calibrate_options;
    auto* calibrate = app.add_subcommand(
        "calibrate", "Fit an efficiency profile to GEMM and bandwidth micro-benchmark reports (never end-to-end runs)");
    roofplan::cli::add_calibrate_options(calibrate, calibrate_options);

    roofplan::cli::ValidateOptions validate_options;
    auto* validate = app.add_subcommand(
        "validate", "Predicted vs measured per case (default and calibrated profiles); the recorded validation tables");
    roofplan::cli::add_validate_options(validate, validate_options);

    roofplan::cli::ExplainOptions explain_options;
    auto* explain = app.add_subcommand(
        "explain", "Teach one layer's arithmetic step by step: shapes, params, MACs, FLOPs, bytes, intensity, Γ, verdict");
    roofplan::cli::add_explain_options(explain, explain_options);

    roofplan::cli::PlanOptions plan_options;
    auto* plan = app.add_subcommand(
        "plan", "Rank systems and GPU counts for a workload: time-to-train, cost, energy, bounds, what is infeasible");
    roofplan::cli::add_plan_options(plan, plan_options);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help and --version exit 0; every command-line error exits 2, like the other errors of bad input.
        return app.exit(e) == 0 ? 0 : 2;
    }
    try {
        for (const CLI::App* sub : app.get_subcommands()) {
            const CLI::Option* as_json = sub->get_option_no_throw("--json");
            const CLI::Option* as_csv = sub->get_option_no_throw("--csv");
            if (as_json && as_csv && as_json->count() && as_csv->count())
                roofplan::detail::fail(sub->get_name(), ": give --json or --csv, not both");
        }
        if (*models) return run_models(models_json, models_csv);
        if (*inspect) return run_inspect(inspect_options);
        if (*devices) return roofplan::cli::run_devices(devices_options, devices_json, devices_csv);
        if (*predict && !system_predict_options.system.empty())
            return roofplan::cli::run_predict_system(predict_options, system_predict_options);
        if (*predict) return roofplan::cli::run_predict(predict_options);
        if (*systems) return roofplan::cli::run_systems(systems_json, systems_file, systems_csv);
        if (*collective) return roofplan::cli::run_collective(collective_options);
        if (*compare) return roofplan::cli::run_compare(compare_options);
        if (*scaling) return roofplan::cli::run_scaling(scaling_options);
        if (*calibrate) return roofplan::cli::run_calibrate(calibrate_options);
        if (*validate) return roofplan::cli::run_validate(validate_options);
        if (*explain) return roofplan::cli::run_explain(explain_options);
        if (*plan) return roofplan::cli::run_plan(plan_options);
        if (*roofline) return roofplan::cli::run_roofline(roofline_options);
    } catch (const roofplan::Error& e) {
        std::cerr << "roofplan: error: " << roofplan::cli::message_of(e) << '\n';
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "roofplan: internal error: " << e.what() << '\n';
        return 3;
    }
    return 0;
}

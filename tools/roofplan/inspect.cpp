// tools/roofplan/inspect.cpp — `roofplan inspect`: per-layer parameters, MACs, FLOPs, bytes, intensity and gamma.
#include "commands.hpp"
#include "options.hpp"

#include <iostream>
#include <optional>

namespace roofplan::cli {
namespace {

struct InspectOptions {
    io::ModelSource source;
    std::int64_t batch = 1;
    std::string precision = "fp32";
    bool json = false;
    bool csv = false;
};

Table layer_table(const Model& m, std::int64_t batch, Precision precision) {
    Table table({{"layer", "layer", "name"},
                 {"type", "type", "type"},
                 {"output", "output_shape", "output_shape"},
                 {"", "", "repeat"},
                 {"params", "params", "params", true},
                 {"MACs", "macs_per_sample", "macs", true},
                 {"FLOPs", "flops_per_sample", "flops", true},
                 {"", "", "paper_ops"},
                 {"bytes", "bytes", "bytes", true},
                 {"FLOP/B", "arithmetic_intensity", "arithmetic_intensity", true},
                 {"gamma", "gamma", "gamma", true}});
    for (const Node& node : m.nodes()) {
        const Work fwd = work(node.layer, Pass::forward, batch * node.repeat, precision);
        const std::int64_t macs = forward_macs(node.layer).value() * node.repeat;
        const std::int64_t flops = forward_flops(node.layer).value() * node.repeat;
        const std::int64_t bytes = fwd.bytes().value();
        const std::optional<double> gamma = roofplan::gamma(node.layer, batch);
        const double intensity = fwd.arithmetic_intensity().value();
        const Shape shape = output_shape(node.layer);
        const std::string repeat = node.repeat != 1 ? " x" + std::to_string(node.repeat) : "";
        table.add({std::string(node.name.view()), std::string(type_label(node.layer)),
                   Cell::structured(shape.to_string() + repeat, shape_json(shape)),
                   node.repeat != 1 ? Cell("", node.repeat) : Cell::absent(),
                   {grouped(params(node.layer)), params(node.layer)}, {si(static_cast<double>(macs)), macs},
                   {si(static_cast<double>(flops)), flops}, {"", paper_ops(node.layer) * node.repeat},
                   {si(static_cast<double>(bytes)), bytes}, {fixed(intensity, 1), intensity},
                   gamma ? Cell(si(*gamma), *gamma) : Cell::missing()});
    }
    return table;
}

json inspect_json(const InspectOptions& o, const io::LoadedModel& loaded, Precision precision, const Table& layers) {
    const Model& m = loaded.model;
    const StepWork step = m.training_work(o.batch, precision);
    const Work fwd = step.forward;
    const Work total = step.total();
    json out = {{"model", loaded.id},
                {"description", m.description()},
                {"batch", o.batch},
                {"precision", to_string(precision)},
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
                {"layers", layers.json()}};
    out[loaded.uses_seq ? "seq" : "image_size"] = loaded.size;
    if (loaded.source != "zoo") out["model_file"] = o.source.model_file;
    if (const json import = import_json(loaded); !import.is_null()) out["import"] = import;
    return out;
}

void print_inspect(const InspectOptions& o, const io::LoadedModel& loaded, Precision precision, const Table& table) {
    const Model& m = loaded.model;
    const StepWork step = m.training_work(o.batch, precision);
    const double fwd = static_cast<double>(step.forward.flops().value());
    const Work total = step.total();
    std::cout << m.id() << ": " << m.description() << "\n"
              << (loaded.uses_seq ? "sequence length " : "image size ") << loaded.size << ", batch " << o.batch
              << ", precision " << to_string(precision)
              << " (MACs and FLOPs per sample, forward; bytes for the whole batch, forward; gamma = paper ops x "
                 "batch / params)\n\n"
              << table.render() << "\ntraining step (batch " << o.batch << "): forward " << si(fwd)
              << "FLOP, backward-data " << si(static_cast<double>(step.backward_data.flops().value()))
              << "FLOP, backward-weight " << si(static_cast<double>(step.backward_weight.flops().value()))
              << "FLOP; total " << si(static_cast<double>(total.flops().value())) << "FLOP, "
              << si(static_cast<double>(total.bytes().value())) << "B moved\n";
}

int run_inspect(const InspectOptions& o) {
    const Precision precision = parse_precision(o.precision);
    require_batch(o.batch);
    const io::LoadedModel& loaded = cached_model(o.source);
    const Model& m = loaded.model;
    Table table = layer_table(m, o.batch, precision);
    if (o.json) {
        std::cout << inspect_json(o, loaded, precision, table).dump(2) << '\n';
        return 0;
    }
    const std::int64_t bytes = m.training_work(o.batch, precision).forward.bytes().value();
    const std::int64_t macs = m.forward_macs().value(), flops = m.forward_flops().value();
    table.rule();
    table.add({"total", "", "", Cell::absent(), {grouped(m.params()), m.params()},
               {si(static_cast<double>(macs)), macs}, {si(static_cast<double>(flops)), flops}, Cell::absent(),
               {si(static_cast<double>(bytes)), bytes}, "", ""});
    if (o.csv) std::cout << table.csv();
    else print_inspect(o, loaded, precision, table);
    return 0;
}

void add_inspect_options(CLI::App* app, InspectOptions& o) {
    add_model_source(app, o.source);
    app->add_option("--batch,-b", o.batch, "Batch size (bytes and gamma depend on it)");  // (checked by the library)
    add_size_options(app, o.source);
    app->add_option("--precision,-p", o.precision, "fp32, tf32, amp-fp16, amp-bf16 or int8")->check(one_of<Precision>());
    add_output_flags(app, o.json, o.csv, "Print JSON", "Print the per-layer table as CSV (RFC 4180, raw numbers)");
}

}  // namespace

const Command inspect_command = command<InspectOptions>(
    "inspect", "Per-layer parameters, MACs, FLOPs, bytes, intensity and gamma",
    add_inspect_options, run_inspect);

}  // namespace roofplan::cli

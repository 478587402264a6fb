// tools/roofplan/models.cpp — `roofplan models`: the zoo with parameter and operation counts.
#include "commands.hpp"
#include "options.hpp"

#include <iostream>

namespace roofplan::cli {
namespace {

struct ModelsOptions {
    bool json = false;
    bool csv = false;
};

Table zoo_table() {
    Table table({{"id", "id", "id"}, {"family", "family", "family"}, {"", "", "description"}, {"input", "input", ""},
                 {"", "", "default_size"}, {"params", "params", "params", true},
                 {"fwd MACs/sample", "macs_per_sample", "macs_per_sample", true},
                 {"fwd FLOPs/sample", "flops_per_sample", "flops_per_sample", true},
                 {"layers", "layers", "layers", true}, {"source", "source", "source"}});
    for (const auto& entry : models::zoo()) {
        const Model m = entry.build();
        const std::string input = entry.uses_seq() ? "seq " + std::to_string(entry.default_size)
                                                   : std::to_string(entry.default_size) + "px";
        const std::int64_t macs = m.forward_macs().value(), flops = m.forward_flops().value();
        table.add({std::string(entry.id), std::string(to_string(entry.family)), std::string(m.description()), input,
                   {"", entry.default_size}, {grouped(m.params()), m.params()}, {si(static_cast<double>(macs)), macs},
                   {si(static_cast<double>(flops)), flops}, {std::to_string(m.size()), m.size()},
                   std::string(entry.source)});
    }
    return table;
}

int run_models(const ModelsOptions& o) {
    const Table table = zoo_table();
    const auto document = [&] {
        json out = table.json();
        for (std::size_t i = 0; i < out.size(); ++i) {  // the default size's key says what it is
            out[i][models::zoo()[i].uses_seq() ? "default_seq" : "default_image_size"] = out[i]["default_size"];
            out[i].erase("default_size");
        }
        return out;
    };
    if (!print_machine(o.json, o.csv, table, document)) std::cout << table.render();
    return 0;
}

void add_models_options(CLI::App* app, ModelsOptions& o) { add_output_flags(app, o.json, o.csv); }

}  // namespace

const Command models_command = command<ModelsOptions>(
    "models", "List the model zoo with parameter and operation counts",
    add_models_options, run_models);

}  // namespace roofplan::cli

// tools/roofplan/systems.cpp — `roofplan systems`: the multi-GPU systems and their interconnects.
#include "commands.hpp"
#include "options.hpp"

#include <iostream>

namespace roofplan::cli {
namespace {

struct SystemsOptions {
    std::string system_file;
    bool json = false;
    bool csv = false;
};

json link_matrix(const System& s) {
    json links = json::array();
    for (int i = 0; i < s.gpus_per_node; ++i) {
        json row = json::array();
        for (int j = 0; j < s.gpus_per_node; ++j) row.push_back(s.nvlinks(i, j));
        links.push_back(row);
    }
    return links;
}

Table system_table(const std::vector<System>& systems) {
    Table t({{"id", "id", "id"},
             {"GPUs", "gpus_per_node", "gpus_per_node", true},
             {"device", "device", "device"},
             {"fabric", "fabric", ""},
             {"ring GB/s", "allreduce_ring_gb_s", "allreduce_ring_gb_s", true},
             {"nodes", "max_nodes", "max_nodes", true},
             {"network", "network", "network"},
             {"CPU cores", "cpu_cores", "cpu_cores", true},
             {"name", "name", "name"},
             {"", "", "nvlinks"},
             {"", "", "nvlink_gb_s_per_link"},
             {"", "", "switch_gb_s"},
             {"", "", "socket_bus_gb_s"},
             {"", "", "source"}});
    for (const System& s : systems) {
        const RingBandwidth r = ring_bandwidth(s, first_gpus(s, s.gpus_per_node));
        const std::string fabric = s.switch_gb_s > 0 ? "NVSwitch" : s.nvlinks.any() ? "NVLink" : "PCIe";
        const json network = {{"name", s.network.name.view()},
                              {"gb_s_multi_flow", s.network.gb_s_multi_flow},
                              {"gb_s_single_flow", s.network.gb_s_single_flow}};
        t.add({std::string(s.id.view()), {std::to_string(s.gpus_per_node), s.gpus_per_node},
               std::string(s.device.view()), fabric,
               {fixed(r.gb_s, 1) + " (" + std::string(to_string(r.kind)) + ")", r.gb_s},
               {std::to_string(s.max_nodes), s.max_nodes},
               Cell::structured(s.max_nodes > 1 ? std::string(s.network.name.view()) : "-", network),
               s.cpu.cores() > 0 ? Cell{std::to_string(s.cpu.cores()), s.cpu.cores()} : Cell::structured("-", nullptr),
               std::string(s.name.view()), Cell::structured("", link_matrix(s)), {"", s.nvlink_gb_s},
               {"", s.switch_gb_s}, {"", s.socket_bus_gb_s}, std::string(s.source.view())});
    }
    return t;
}

int run_systems(const SystemsOptions& o) {
    const Table t = system_table(system_catalog(o.system_file));
    if (!print_machine(o.json, o.csv, t, [&] { return t.json(); }))
        std::cout << "ring GB/s: the all-reduce ring bandwidth per direction over all GPUs of one node (link rate, "
                     "before protocol efficiency)\n\n"
                  << t.render();
    return 0;
}

void add_systems_options(CLI::App* app, SystemsOptions& o) {
    add_output_flags(app, o.json, o.csv);
    app->add_option("--system-file", o.system_file, "JSON file with extra systems (schema of data/systems.json)");
}

}  // namespace

const Command systems_command = command<SystemsOptions>(
    "systems", "List the multi-GPU systems and their interconnects", add_systems_options, run_systems);

}  // namespace roofplan::cli

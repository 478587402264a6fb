// tools/roofplan/devices.cpp — `roofplan devices`: the device catalog (dense datasheet peaks, memory, links).
#include "commands.hpp"
#include "options.hpp"

#include <iostream>

namespace roofplan::cli {
namespace {

struct DevicesOptions {
    DeviceOptions devices;
    bool json = false;
    bool csv = false;
};

/// A peak for tables: "67.0" (raw 67) or "-" (an empty CSV field) where the device has none.
Cell peak_cell(double tflops) { return tflops > 0 ? Cell(peak_text(tflops), tflops) : Cell::missing(); }

Table device_table(const DeviceCatalog& catalog) {
    Table table({"id", "arch", "SMs", "boost MHz", "FP32", "TF32", "FP16 (fp32 acc)", "BF16", "INT8 TC", "DP4A",
                 "memory", "GB/s", "L2 MiB", "TDP W", "NVLink"},
                {false, false, true, true, true, true, true, true, true, true, true, true, true, true, false});
    table.csv_names({"id", "architecture", "sms", "boost_mhz", "fp32_tflops", "tf32_tensor_tflops",
                     "fp16_tensor_fp32_acc_tflops", "bf16_tensor_tflops", "int8_tensor_tops", "int8_dp4a_tops",
                     "memory_gib", "bandwidth_gb_s", "l2_mib", "tdp_w", "nvlink"});
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
    return table;
}

int run_devices(const DevicesOptions& o) {
    const DeviceCatalog catalog = o.devices.catalog();
    const Table table = device_table(catalog);
    const auto document = [&] {  // the catalog's own schema (data/devices.json), every figure with its source
        json out = json::array();
        for (const Device& d : catalog.devices()) out.push_back(io::to_json(d));
        return out;
    };
    if (print_machine(o.json, o.csv, table, document)) return 0;
    std::cout << "Dense peaks in TFLOPS/TOPS (FP16 column: FP32 accumulate, FP16-accumulate rate in brackets where "
                 "faster); NVLink: links x GB/s per direction.\nSources for every figure: data/devices.json.\n\n"
              << table.render();
    return 0;
}

void add_devices_options(CLI::App* app, DevicesOptions& o) {
    add_device_options(app, o.devices);
    add_output_flags(app, o.json, o.csv);
}

}  // namespace

const Command devices_command = command<DevicesOptions>(
    "devices", "List the device catalog (dense datasheet peaks, memory, links)", add_devices_options, run_devices);

}  // namespace roofplan::cli

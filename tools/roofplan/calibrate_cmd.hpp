// tools/roofplan/calibrate_cmd.hpp — `roofplan calibrate results.json... -o profile.json`.
#pragma once

#include "predict_cmd.hpp"
#include "report.hpp"

#include <roofplan/io/calibrate.hpp>

#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace roofplan::cli {

struct CalibrateOptions {
    DeviceOptions devices;
    std::vector<std::string> files;
    std::string output;
    std::string device;
    bool json = false;
};

inline void add_calibrate_options(CLI::App* app, CalibrateOptions& o) {
    add_device_options(app, o.devices);
    app->add_option("results", o.files, "roofplan-gemm / roofplan-bandwidth JSON reports")->required();
    app->add_option("-o,--output", o.output, "Write the profile (schema roofplan-profile/1) here");
    app->add_option("--device,-d", o.device, "Catalog device (default: from the reports' GPU name)");
    app->add_flag("--json", o.json, "Print the profile as JSON");
}

inline int run_calibrate(const CalibrateOptions& o) {
    std::vector<std::pair<std::string, json>> reports;
    std::string device_id = o.device;
    for (const std::string& f : o.files) {
        json j = io::parse(io::read_text(f), f);
        if (device_id.empty() && j.contains("provenance") && j.at("provenance").contains("device"))
            device_id = io::device_from_report_name(j.at("provenance").at("device").value("name", std::string()));
        reports.emplace_back(f, std::move(j));
    }
    if (device_id.empty()) roofplan::detail::fail("the reports name no GPU; pass --device");
    const DeviceCatalog catalog = o.devices.catalog();
    const Device& device = catalog.find(device_id);
    const io::Calibration c = io::calibrate(reports, device);
    const json out = io::calibration_json(c);
    if (!o.output.empty()) {
        std::ofstream file(o.output);
        file << out.dump(2) << '\n';
        if (!file) roofplan::detail::fail("cannot write '", o.output, "'");
    }
    if (o.json) {
        std::cout << out.dump(2) << '\n';
        return 0;
    }
    const EfficiencyProfile defaults = default_profile(device);
    Table t({"fitted", "samples", "efficiency", "default", "fixed/kernel", "median error", "worst error"},
            {false, true, true, true, true, true, true});
    for (const io::FitQuality& q : c.quality) {
        double before = defaults.memory;
        for (MathClass m : all_math_classes)
            if (to_string(m) == q.what) before = defaults.gemm_efficiency(m);
        t.add({q.what, std::to_string(q.samples), fixed(q.value, 3), fixed(before, 3),
               q.what == "memory" ? std::string("-") : seconds_text(q.fixed_s),
               fixed(100 * q.median_rel_error, 1) + "%", fixed(100 * q.worst_rel_error, 1) + "%"});
    }
    std::cout << "profile for " << device.id.view() << " fitted to " << c.sources.size()
              << " micro-benchmark report(s):\n";
    for (const std::string& s : c.sources) std::cout << "  " << s << "\n";
    std::cout << "\n" << t.render();
    if (!o.output.empty()) std::cout << "\nwrote " << o.output << " (use with predict --profile)\n";
    return 0;
}

}  // namespace roofplan::cli

// tools/roofplan/calibrate_cmd.hpp — `roofplan calibrate results.json... -o profile.json`.
#pragma once

#include "options.hpp"

#include <roofplan/io/calibrate.hpp>
#include <roofplan/io/suite.hpp>

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
    std::string system;
    std::string min_bytes = "1MiB";
    bool json = false;
    bool csv = false;
};

inline void add_calibrate_options(CLI::App* app, CalibrateOptions& o) {
    add_device_options(app, o.devices);
    app->add_option("results", o.files, "roofplan-gemm / roofplan-bandwidth JSON reports")->required();
    app->add_option("-o,--output", o.output, "Write the profile (schema roofplan-profile/1) here");
    app->add_option("--device,-d", o.device, "Catalog device (default: from the reports' GPU name)");
    app->add_option("--system", o.system, "System the roofplan-nccl reports were measured on (fits its links)");
    app->add_option("--min-bytes", o.min_bytes, "Smallest NCCL message used in the link fit (default 1MiB)");
    app->add_flag("--json", o.json, "Print the profile as JSON");
    app->add_flag("--csv", o.csv, "Print the fit summary as CSV (RFC 4180, raw numbers)");
}

inline int run_calibrate(const CalibrateOptions& o) {
    std::vector<std::pair<std::string, json>> reports, nccl;
    std::string device_id = o.device;
    std::vector<Device> suite_devices;  // runner suites (roofplan-bench) may describe their own device (the host)
    for (const std::string& file : o.files) {
        const json whole = io::parse(io::read_text(file), file);
        if (const auto d = io::suite_device(file, whole)) {
            suite_devices.push_back(*d);
            if (device_id.empty()) device_id = std::string(d->id.view());
        }
        for (auto [f, j] : io::expand_reports(file, whole)) {
            if (j.is_object() && j.value("tool", std::string()) == "roofplan-nccl") {
                nccl.emplace_back(f, std::move(j));
                continue;
            }
            if (device_id.empty() && j.is_object() && j.contains("provenance") && j.at("provenance").contains("device"))
                device_id = io::device_from_report_name(j.at("provenance").at("device").value("name", std::string()));
            reports.emplace_back(f, std::move(j));
        }
    }
    json out = {{"schema", "roofplan-profile/1"}};
    Table t({"fitted", "samples", "efficiency", "default", "fixed", "median error", "worst error"},
            {false, true, true, true, true, true, true});
    std::vector<std::string> sources;
    std::string device_text;
    if (!reports.empty()) {
        if (device_id.empty()) fail("the reports name no GPU; pass --device");
        DeviceCatalog catalog = o.devices.catalog();
        for (const Device& d : suite_devices) catalog.add(d, "suite report");
        const Device& device = catalog.find(device_id);
        const io::Calibration c = io::calibrate(reports, device);
        out = io::calibration_json(c);
        sources = c.sources;
        device_text = std::string(device.id.view());
        const EfficiencyProfile defaults = default_profile(device);
        for (const io::FitQuality& q : c.quality) {
            double before = defaults.memory;
            for (MathClass m : all_math_classes)
                if (to_string(m) == q.what) before = defaults.gemm_efficiency(m);
            const bool conv = q.what.rfind("conv.", 0) == 0;  // "conv.bf16_tensor (nhwc)": a factor, no fixed cost
            if (conv) before = defaults.conv;
            t.add({q.what, {std::to_string(q.samples), q.samples}, {fixed(q.value, 3), q.value},
                   {fixed(before, 3), before},
                   q.what == "memory" || conv ? Cell::missing() : Cell(seconds_text(q.fixed_s), q.fixed_s),
                   {fixed(100 * q.median_rel_error, 1) + "%", q.median_rel_error},
                   {fixed(100 * q.worst_rel_error, 1) + "%", q.worst_rel_error}});
        }
    }
    if (!nccl.empty()) {
        if (o.system.empty()) fail("roofplan-nccl reports need --system (the machine they ran on)");
        const System& s = find_system(o.system);
        const io::LinkCalibration lc = io::calibrate_links(nccl, s, parse_bytes(o.min_bytes));
        out["links"] = io::to_json(lc.links);
        out["links_system"] = s.id.view();
        if (!out.contains("fit")) out["fit"] = json::array();
        out["fit"].push_back({{"what", lc.quality.what}, {"samples", lc.quality.samples},
                              {"efficiency", lc.links.eff(lc.kind)}, {"latency_s", lc.links.latency(lc.kind)},
                              {"base_s", lc.links.base_s}, {"median_rel_error", lc.quality.median_rel_error},
                              {"worst_rel_error", lc.quality.worst_rel_error}});
        for (const std::string& f : lc.sources) sources.push_back(f + " (roofplan-nccl)");
        const LinkParameters defaults;
        t.add({lc.quality.what + " (base " + seconds_text(lc.links.base_s) + ", step " +
                   seconds_text(lc.links.latency(lc.kind)) + ")",
               {std::to_string(lc.quality.samples), lc.quality.samples},
               {fixed(lc.links.eff(lc.kind), 3), lc.links.eff(lc.kind)},
               {fixed(defaults.eff(lc.kind), 3), defaults.eff(lc.kind)}, {seconds_text(lc.links.base_s), lc.links.base_s},
               {fixed(100 * lc.quality.median_rel_error, 1) + "%", lc.quality.median_rel_error},
               {fixed(100 * lc.quality.worst_rel_error, 1) + "%", lc.quality.worst_rel_error}});
        if (device_text.empty()) device_text = std::string(s.id.view());
        out["sources"] = sources;
        out["note"] = "fitted to micro-benchmarks only; never to end-to-end results";
    }
    if (!o.output.empty()) {
        std::ofstream file(o.output);
        file << out.dump(2) << '\n';
        if (!file) fail("cannot write '", o.output, "'");
    }
    if (o.json) {
        std::cout << out.dump(2) << '\n';
        return 0;
    }
    if (o.csv) {
        t.csv_names({"fitted", "samples", "efficiency", "default_efficiency", "fixed_s", "median_rel_error",
                     "worst_rel_error"});
        std::cout << t.csv();
        return 0;
    }
    std::cout << "profile for " << device_text << " fitted to " << sources.size() << " micro-benchmark report(s):\n";
    for (const std::string& s : sources) std::cout << "  " << s << "\n";
    std::cout << "\n" << t.render();
    if (!o.output.empty()) std::cout << "\nwrote " << o.output << " (use with predict/collective --profile)\n";
    return 0;
}

}  // namespace roofplan::cli

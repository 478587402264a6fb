// tools/roofplan/calibrate_cmd.hpp — `roofplan calibrate results.json... -o profile.json`.
#pragma once

#include "options.hpp"

#include <roofplan/calibration/fit.hpp>
#include <roofplan/io/conv_shapes.hpp>
#include <roofplan/io/json.hpp>
#include <roofplan/io/operators.hpp>
#include <roofplan/io/reports.hpp>

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
    app->add_option("results", o.files, "roofplan-gemm / -bandwidth / -conv / -nccl / -ops / -conv-shapes JSON reports")->required();
    app->add_option("-o,--output", o.output, "Write the profile (schema roofplan-profile/1) here");
    app->add_option("--device,-d", o.device, "Catalog device (default: from the reports' GPU name)");
    app->add_option("--system", o.system, "System the roofplan-nccl reports were measured on (fits its links)");
    app->add_option("--min-bytes", o.min_bytes, "Smallest NCCL message used in the link fit (default 1MiB)");
    app->add_flag("--json", o.json, "Print the profile as JSON");
    app->add_flag("--csv", o.csv, "Print the fit summary as CSV (RFC 4180, raw numbers)");
}

/// What the command fits: the micro-benchmarks of one GPU (with other GPUs' operator reports for the kernel
/// classes' SM-side terms) and the NCCL runs of one system, read into samples.
struct CalibrateInputs {
    Measurements micro;  ///< GEMM, bandwidth and convolution samples, with their reports as sources
    bool has_micro = false;  ///< a GEMM, bandwidth, convolution or DP4A report was given (DP4A is read, not fitted)
    std::vector<CollectiveSample> nccl;
    std::vector<std::string> nccl_files;
    std::string device_id;
    std::vector<Device> suite_devices;  ///< runner suites (roofplan-bench) may describe their own device (the host)
    /// Operator reports (the GPU their provenance names, or "", and the report): the profile's GPU's join the fit
    /// whole; another GPU's give their kernel-class cases only, which with the profile's own separate the classes'
    /// memory and SM-side terms (calibration/operators.hpp).
    std::vector<std::pair<std::string, Measurements>> operator_reports;
    /// Every other report that names its GPU (file, GPU name): it must be the profile's.
    std::vector<std::pair<std::string, std::string>> named_gpus;
};

inline std::string catalog_id_of(const std::string& gpu_name) {
    const auto id = io::device_id_of_gpu_name(gpu_name);
    if (!id) fail("cannot tell which catalog device '", gpu_name, "' is; pass --device");
    return *id;
}

inline CalibrateInputs read_calibrate_inputs(const CalibrateOptions& o) {
    namespace tool = io::report_names::tool;
    CalibrateInputs in;
    in.device_id = o.device;
    for (const std::string& file : o.files) {
        const json whole = io::parse(io::read_text(file), file);
        if (const auto d = io::suite_device(file, whole)) {
            in.suite_devices.push_back(*d);
            if (in.device_id.empty()) in.device_id = std::string(d->id.view());
        }
        // The framework scripts' reports (operators; convolutions and GEMMs shape by shape) have readers of their own.
        const std::string framework_tool = whole.is_object() ? io::detail::string_or(whole, "tool", file + ":", "") : "";
        if (framework_tool == "roofplan-ops" || framework_tool == "roofplan-conv-shapes" ||
            framework_tool == "roofplan-gemm-shapes") {
            const json* prov = whole.contains("provenance") ? &whole.at("provenance") : nullptr;
            const std::string gpu = prov && prov->is_object() && prov->contains("device") && prov->at("device").is_string()
                                        ? prov->at("device").get<std::string>() : std::string();
            if (in.device_id.empty() && !gpu.empty()) in.device_id = catalog_id_of(gpu);
            if (framework_tool == "roofplan-ops") {
                in.operator_reports.emplace_back(gpu, io::operator_report(whole, file));
            } else {
                append(in.micro, framework_tool == "roofplan-conv-shapes" ? io::conv_shapes_report(whole, file)
                                                                          : io::gemm_shapes_report(whole, file));
                if (!gpu.empty()) in.named_gpus.emplace_back(file, gpu);
            }
            in.has_micro = true;
            continue;
        }
        const std::vector<io::Report> reports = io::read_reports(file, whole);
        io::require_tools(reports, {tool::gemm, tool::conv, tool::bandwidth, tool::nccl, tool::dp4a});
        for (const io::Report& r : reports) {
            if (r.tool == tool::nccl) {
                in.nccl.insert(in.nccl.end(), r.samples.collectives.begin(), r.samples.collectives.end());
                in.nccl_files.push_back(r.file);
                continue;
            }
            in.has_micro = true;
            if (in.device_id.empty() && !r.device_name.empty()) in.device_id = catalog_id_of(r.device_name);
            if (!r.device_name.empty()) in.named_gpus.emplace_back(r.file, r.device_name);
            if (r.tool != tool::dp4a) append(in.micro, r.samples);
        }
    }
    return in;
}

/// The rows of the fit summary and the profile document being written.
struct CalibrateResult {
    json out = {{"schema", "roofplan-profile/1"}};
    Table table{{"fitted", "samples", "efficiency", "default", "fixed", "median error", "worst error"},
                {false, true, true, true, true, true, true}};
    std::vector<std::string> sources;
    std::string device_text;
};

/// The samples the profile of `device` is fitted to: its GPU's reports whole, and the kernel-class cases of other
/// GPUs' operator reports, each marked with its GPU (their host, attention and GEMM cases describe another machine
/// and are left out; their sources say so).  A GPU name the catalog does not know counts as the profile's (as
/// before: `--device` says which it is); any other report from another GPU is an error.
inline Measurements with_other_gpus(const CalibrateInputs& in, const DeviceCatalog& catalog, const Device& device) {
    const auto other_gpu = [&](const std::string& name) -> const Device* {
        if (name.empty()) return nullptr;
        const auto id = io::device_id_of_gpu_name(name);
        const Device* d = id ? catalog.try_find(*id) : nullptr;
        return d == nullptr || d->id == device.id ? nullptr : d;
    };
    for (const auto& [file, name] : in.named_gpus)
        if (const Device* d = other_gpu(name))
            fail(file, ": measured on ", name, " (", d->id.view(), "), but the profile is for ", device.id.view(),
                 "; only operator reports (roofplan-ops) of another GPU can join a calibration (their kernel-class "
                 "cases); leave the file out or pass --device ", d->id.view());
    Measurements all = in.micro;
    for (const auto& [name, m] : in.operator_reports) {
        const Device* d = other_gpu(name);
        if (!d) {
            append(all, m);
            continue;
        }
        for (OperatorSample s : m.operators) {  // the fitters use a marked case for the kernel classes only
            s.bandwidth_b_s = d->bandwidth_gb_s * 1e9;
            s.sm_cycles_s = d->sm_cycles_per_s();
            all.operators.push_back(std::move(s));
        }
        for (const std::string& source : m.sources)
            all.sources.push_back(source + " [" + std::string(d->id.view()) + std::string(calibration::other_gpu_source_tag));
    }
    return all;
}

inline void fit_micro(const CalibrateOptions& o, const CalibrateInputs& in, CalibrateResult& r) {
    if (in.device_id.empty()) fail("the reports name no GPU; pass --device");
    DeviceCatalog catalog = o.devices.catalog();
    for (const Device& d : in.suite_devices) catalog.add(d, "suite report");
    const Device& device = catalog.find(in.device_id);
    const calibration::Calibration c = calibration::fit(with_other_gpus(in, catalog, device), device);
    r.out = io::calibration_json(c);
    r.sources = c.sources;
    r.device_text = std::string(device.id.view());
    const EfficiencyProfile defaults = default_profile(device);
    for (const calibration::FitQuality& q : c.quality) {
        double before = defaults.memory;
        for (MathClass m : all_math_classes)
            if (to_string(m) == q.what) before = defaults.gemm_efficiency(m);
        const bool conv = q.what.rfind("conv.", 0) == 0;  // "conv.bf16_tensor (nhwc)": a factor, no fixed cost
        if (conv) before = defaults.conv;
        // "conv shapes.bf16_tensor": the median efficiency of the measured shapes (no default: the factor stands
        // for them otherwise), the errors of its interpolation between batches (leave-one-out)
        const bool shapes = q.what.rfind("conv shapes.", 0) == 0;
        // "class reduction": a kernel class's fraction of this GPU's bandwidth at large sizes on 2-byte elements
        // (memory and SM-side terms together), against that class's own default.
        if (q.what.rfind("class ", 0) == 0)
            for (KernelClass k : all_kernel_classes)
                if (const std::string name = "class " + std::string(to_string(k)); q.what == name || q.what.rfind(name + " (", 0) == 0)
                    before = defaults.kernel_class[k].streamed_fraction(device, defaults.memory, calibration::class_rate_element_bytes);
        // "host speed sensitivity python (...)": a sensitivity, against the default's; no fixed cost, no residual.
        const bool speed = q.what.rfind("host speed", 0) == 0;
        if (speed)
            for (HostSpeedClass h : enum_values<HostSpeedClass>())
                if (q.what.rfind("host speed sensitivity " + std::string(to_string(h)) + " ", 0) == 0)
                    before = defaults.host.speed_sensitivity[static_cast<std::size_t>(h)];
        // "nn.DataParallel replicate/thread ...": costs in seconds only (the fixed column); "... lock share": a share.
        const bool costs_only = q.what.rfind("nn.DataParallel replicate", 0) == 0 || q.what.rfind("nn.DataParallel thread", 0) == 0;
        if (q.what.rfind("nn.DataParallel lock share", 0) == 0) before = defaults.host.dp_lock_share;
        // "AdamW per-tensor Python": shares of slopes (the first op's in the value column), no fixed cost or residual.
        const bool share = q.what.rfind("AdamW per-tensor Python", 0) == 0;
        if (share) before = defaults.host.adam_op_shares[0];
        r.table.add({q.what, {std::to_string(q.samples), q.samples},
                     costs_only ? Cell::missing() : Cell(fixed(q.value, 3), q.value),
                     shapes || costs_only ? Cell::missing() : Cell(fixed(before, 3), before),
                     q.what == "memory" || conv || shapes || speed || share ? Cell::missing() : Cell(seconds_text(q.fixed_s), q.fixed_s),
                     speed || share ? Cell::missing() : Cell(fixed(100 * q.median_rel_error, 1) + "%", q.median_rel_error),
                     speed || share ? Cell::missing() : Cell(fixed(100 * q.worst_rel_error, 1) + "%", q.worst_rel_error)});
    }
}

inline void fit_nccl(const CalibrateOptions& o, const CalibrateInputs& in, CalibrateResult& r) {
    if (o.system.empty()) fail("roofplan-nccl reports need --system (the machine they ran on)");
    const System& s = find_system(o.system);
    const calibration::LinkCalibration lc = calibration::fit_links(in.nccl, s, parse_bytes(o.min_bytes));
    const calibration::FitQuality& q = lc.quality;
    r.out["links"] = io::to_json(lc.links);
    r.out["links_system"] = s.id.view();
    if (!r.out.contains("fit")) r.out["fit"] = json::array();
    r.out["fit"].push_back({{"what", q.what}, {"samples", q.samples}, {"efficiency", lc.links.eff(lc.kind)},
                            {"latency_s", lc.links.latency(lc.kind)}, {"base_s", lc.links.base_s},
                            {"median_rel_error", q.median_rel_error}, {"worst_rel_error", q.worst_rel_error}});
    for (const std::string& f : in.nccl_files) r.sources.push_back(f + " (roofplan-nccl)");
    const LinkParameters defaults;
    r.table.add({q.what + " (base " + seconds_text(lc.links.base_s) + ", step " + seconds_text(lc.links.latency(lc.kind)) + ")",
                 {std::to_string(q.samples), q.samples}, {fixed(lc.links.eff(lc.kind), 3), lc.links.eff(lc.kind)},
                 {fixed(defaults.eff(lc.kind), 3), defaults.eff(lc.kind)}, {seconds_text(lc.links.base_s), lc.links.base_s},
                 {fixed(100 * q.median_rel_error, 1) + "%", q.median_rel_error},
                 {fixed(100 * q.worst_rel_error, 1) + "%", q.worst_rel_error}});
    if (r.device_text.empty()) r.device_text = std::string(s.id.view());
    r.out["sources"] = r.sources;
    r.out["note"] = "fitted to micro-benchmarks only; never to end-to-end results";
}

inline int run_calibrate(const CalibrateOptions& o) {
    const CalibrateInputs in = read_calibrate_inputs(o);
    CalibrateResult r;
    if (in.has_micro) fit_micro(o, in, r);
    if (!in.nccl_files.empty()) fit_nccl(o, in, r);
    if (!o.output.empty()) {
        std::ofstream file(o.output);
        file << r.out.dump(2) << '\n';
        if (!file) fail("cannot write '", o.output, "'");
    }
    if (o.json) {
        std::cout << r.out.dump(2) << '\n';
        return 0;
    }
    if (o.csv) {
        r.table.csv_names({"fitted", "samples", "efficiency", "default_efficiency", "fixed_s", "median_rel_error",
                           "worst_rel_error"});
        std::cout << r.table.csv();
        return 0;
    }
    std::cout << "profile for " << r.device_text << " fitted to " << r.sources.size() << " micro-benchmark report(s):\n";
    for (const std::string& s : r.sources) std::cout << "  " << s << "\n";
    std::cout << "\n" << r.table.render();
    if (!o.output.empty()) std::cout << "\nwrote " << o.output << " (use with predict/collective --profile)\n";
    return 0;
}

}  // namespace roofplan::cli

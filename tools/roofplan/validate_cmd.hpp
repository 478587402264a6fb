// tools/roofplan/validate_cmd.hpp — `roofplan validate`: predicted vs measured, case by case.
//
//   roofplan validate REPORT... [--profile P] [--device D] [--device-file F] [--max-median-error X] [--json]
//       every case of the reports (runner suites or single-program reports) predicted with the default profile and,
//       with --profile, the calibrated one;
//   roofplan validate --recorded validation/results [--markdown] [--check] [--update-doc F | --check-doc F]
//       the recorded GPU runs: refits every profile from the micro-benchmarks (as `roofplan calibrate` does),
//       predicts every case with the datasheet-only default and the calibrated profile, and summarises the errors
//       as figures ("h200.gemm.bf16_tensor.median", "nccl.allreduce.worst", "e2e.resnet50").  The bounds those
//       figures are held to are the recorded set's data, DIR/bounds.json (validation/results/bounds.json: the
//       project's bars, and where the recorded data misses a bar, the achieved figure held as a regression
//       bound); --check fails when one is broken.  The binary itself holds no project figure.
#pragma once

#include "options.hpp"

#include <roofplan/calibration/fit.hpp>
#include <roofplan/io/bounds.hpp>
#include <roofplan/io/json.hpp>
#include <roofplan/io/reports.hpp>
#include <roofplan/validation/bounds.hpp>
#include <roofplan/validation/compare.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace roofplan::cli {

struct ValidateOptions {
    DeviceOptions devices;
    std::vector<std::string> files;
    std::string device;
    std::string profile;
    double max_median_error = 0;
    bool json = false;
    std::string recorded;
    std::string nccl_system = "hgx-h200-4";
    std::string nccl_min_bytes = "16MiB";
    std::vector<std::string> nccl_dirs = {"2026-11-21-h200x2", "2026-11-21-h200x4"};
    bool markdown = false;
    bool check = false;
    std::string update_doc;
    std::string check_doc;
};

inline void add_validate_options(CLI::App* app, ValidateOptions& o) {
    add_device_options(app, o.devices);
    app->add_option("reports", o.files, "Reports to validate against (roofplan-bench suites, roofplan-gemm, "
                                        "roofplan-bandwidth, roofplan-e2e)");
    app->add_option("--device,-d", o.device, "Catalog device (default: the suite's own device or the reports' GPU)");
    app->add_option("--profile", o.profile, "Calibrated profile (from `roofplan calibrate`) to compare beside the default");
    app->add_option("--max-median-error", o.max_median_error,
                    "Fail (exit 1) when the median |error| of the calibrated (else default) predictions exceeds this "
                    "fraction (in (0, 100]), or any prediction is not finite")
        ->check(number_in(0, 100, true));
    app->add_flag("--json", o.json, "Print JSON");
    app->add_option("--recorded", o.recorded, "Directory of recorded runs (validation/results): the validation tables");
    app->add_option("--nccl-system", o.nccl_system, "System the recorded NCCL runs ran on (default hgx-h200-4)");
    app->add_option("--nccl-min-bytes", o.nccl_min_bytes, "Smallest NCCL size in the link fit and the bar (16MiB)");
    app->add_option("--nccl-dirs", o.nccl_dirs, "Recorded directories whose NCCL runs the link fit and bar use "
                                               "(default: the single-process runs on 2 and 4 H200)")
        ->delimiter(',');
    app->add_flag("--markdown", o.markdown, "Print the tables as markdown (the block in docs/validation.md)");
    app->add_flag("--check", o.check, "Exit 1 when a bar or regression bound is broken");
    app->add_option("--update-doc", o.update_doc, "Replace the generated block of this markdown file");
    app->add_option("--check-doc", o.check_doc, "Exit 1 when this markdown file's generated block is out of date");
}

namespace detail {

/// The reports of the files (suites expanded) and the devices that suites describe.
struct LoadedReports {
    std::vector<io::Report> reports;
    std::vector<Device> suite_devices;
};
inline LoadedReports load_reports(const std::vector<std::string>& files) {
    LoadedReports out;
    for (const std::string& f : files) {
        const json j = io::parse(io::read_text(f), f);
        if (const auto d = io::suite_device(f, j)) out.suite_devices.push_back(*d);
        for (io::Report& r : io::read_reports(f, j)) out.reports.push_back(std::move(r));
    }
    return out;
}

/// The catalog id of the GPU a report names.
inline std::string catalog_id_of_report(const io::Report& r) {
    const auto id = io::device_id_of_gpu_name(r.device_name);
    if (!id) fail(r.file, ": cannot tell which catalog device '", r.device_name, "' is; pass --device");
    return *id;
}

/// Every single-GPU case of the reports, report by report.
inline std::vector<validation::CaseComparison> compare_reports(const std::vector<io::Report>& reports,
                                                               const Device& device, const EfficiencyProfile& profile) {
    std::vector<validation::CaseComparison> out;
    for (const io::Report& r : reports) {
        const auto part = validation::compare_single_gpu(r.samples, device, profile);
        out.insert(out.end(), part.begin(), part.end());
    }
    return out;
}

/// The device the reports are validated on: --device, else a suite's own device, else the reports' GPU.
inline Device validation_device(const ValidateOptions& o, const LoadedReports& loaded) {
    DeviceCatalog catalog = o.devices.catalog();
    std::string device_id = o.device;
    for (const Device& d : loaded.suite_devices) {
        catalog.add(d, "suite report");
        if (device_id.empty()) device_id = std::string(d.id.view());
    }
    for (const io::Report& r : loaded.reports)
        if (device_id.empty() && !r.device_name.empty()) device_id = catalog_id_of_report(r);
    if (device_id.empty()) fail("the reports name no device; pass --device");
    return catalog.find(device_id);
}

/// Predicted vs measured with the default profile and, with --profile, the calibrated one.
struct ReportComparison {
    Device device;
    std::vector<validation::CaseComparison> base, calibrated;
    validation::ErrorSummary s0, s1;
    bool finite = true;
    bool pass = true;
};

inline json summary_json(const validation::ErrorSummary& s) {
    return json{{"samples", s.samples}, {"median_abs_error", s.median}, {"p90_abs_error", s.p90},
                {"worst_abs_error", s.worst}};
}

inline void print_comparison_json(const ReportComparison& c) {
    const bool have_cal = !c.calibrated.empty();
    json cases = json::array();
    for (std::size_t i = 0; i < c.base.size(); ++i) {
        const validation::CaseComparison& b = c.base[i];
        json row = {{"group", b.group}, {"case", b.label}, {"unit", b.unit}, {"measured", b.measured},
                    {"default_predicted", b.predicted}, {"default_error", b.error()}};
        if (have_cal) {
            row["calibrated_predicted"] = c.calibrated[i].predicted;
            row["calibrated_error"] = c.calibrated[i].error();
        }
        cases.push_back(row);
    }
    json out = {{"device", c.device.id.view()}, {"cases", cases}, {"default", summary_json(c.s0)},
                {"finite", c.finite}, {"pass", c.pass}};
    if (have_cal) out["calibrated"] = summary_json(c.s1);
    std::cout << out.dump(2) << '\n';
}

inline void print_comparison_table(const ValidateOptions& o, const ReportComparison& c) {
    const bool have_cal = !c.calibrated.empty();
    std::vector<std::string> header = {"group", "case", "measured", "default", "error"};
    if (have_cal) header.insert(header.end(), {"calibrated", "error"});
    Table t(header, {false, false, true, true, true, true, true});
    for (std::size_t i = 0; i < c.base.size(); ++i) {
        const validation::CaseComparison& b = c.base[i];
        std::vector<std::string> row = {b.group, b.label, rate_text(b.measured) + " " + b.unit, rate_text(b.predicted),
                                        percent(b.error())};
        if (have_cal) row.insert(row.end(), {rate_text(c.calibrated[i].predicted), percent(c.calibrated[i].error())});
        t.add(row);
    }
    std::cout << "predicted vs measured on " << c.device.id.view() << " (" << c.device.name.view()
              << "); error = predicted rate / measured rate - 1\n\n"
              << t.render() << "\ndefault profile:    median |error| " << abs_percent(c.s0.median) << ", 90th percentile "
              << abs_percent(c.s0.p90) << ", worst " << abs_percent(c.s0.worst) << " over " << c.s0.samples << " cases\n";
    if (have_cal)
        std::cout << "calibrated profile: median |error| " << abs_percent(c.s1.median) << ", 90th percentile "
                  << abs_percent(c.s1.p90) << ", worst " << abs_percent(c.s1.worst) << " (" << o.profile << ")\n";
    if (!c.finite) std::cout << "FAIL: a prediction or measurement is not a finite positive number\n";
    else if (!c.pass) std::cout << "FAIL: median |error| above " << abs_percent(o.max_median_error) << "\n";
}

}  // namespace detail

inline int run_validate_reports(const ValidateOptions& o) {
    if (o.files.empty()) fail("give reports to validate against, or --recorded DIR");
    const detail::LoadedReports loaded = detail::load_reports(o.files);
    detail::ReportComparison c{detail::validation_device(o, loaded), {}, {}, {}, {}, true, true};
    c.base = detail::compare_reports(loaded.reports, c.device, default_profile(c.device));
    if (c.base.empty()) fail("no verified GEMM, streaming or end-to-end cases in the reports");
    if (!o.profile.empty())
        c.calibrated = detail::compare_reports(loaded.reports, c.device, io::load_profile(o.profile, c.device));
    for (const auto& list : {std::cref(c.base), std::cref(c.calibrated)})
        for (const validation::CaseComparison& x : list.get())
            c.finite = c.finite && std::isfinite(x.predicted) && std::isfinite(x.measured) && x.predicted > 0 &&
                       x.measured > 0;
    c.s0 = validation::summarize(c.base);
    c.s1 = validation::summarize(c.calibrated.empty() ? c.base : c.calibrated);
    c.pass = c.finite && (o.max_median_error <= 0 || c.s1.median <= o.max_median_error);
    if (o.json) detail::print_comparison_json(c);
    else detail::print_comparison_table(o, c);
    return c.pass ? 0 : 1;
}

// ---- the recorded runs -------------------------------------------------------------------------------------

/// The micro-benchmarks of one GPU model (from every recorded directory), refitted and compared.
struct GpuRun {
    std::string dir;
    Device device;
    std::vector<io::Report> reports;
    EfficiencyProfile calibrated;
    std::vector<calibration::FitQuality> fit;  ///< calibrate's own residuals (with its fitted fixed cost per GEMM)
    std::vector<validation::CaseComparison> before, after;
};

struct RecordedTables {
    std::vector<GpuRun> gpus;
    std::vector<validation::CaseComparison> nccl_before, nccl_after;
    LinkParameters links;
    std::string links_text;
    std::vector<validation::CaseComparison> e2e_before, e2e_after;
    std::string e2e_dir;
    std::map<std::string, double> figures;  ///< figure id -> achieved fraction (absent: not measured)
};

/// The recorded reports by role: micro-benchmarks by GPU (in order of appearance), the NCCL runs of the link
/// fit's directories, the end-to-end runs.
struct RecordedReports {
    std::vector<GpuRun> gpus;
    std::vector<io::Report> nccl, e2e;
};

namespace detail {

/// The JSON files of each directory of `root`, directories and files sorted, named "dir/file.json".
inline std::vector<std::pair<std::string, std::string>> recorded_files(const std::string& root) {
    namespace fs = std::filesystem;
    if (!fs::is_directory(root)) fail("--recorded: '", root, "' is not a directory");
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(root))
        if (e.is_directory()) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    std::vector<std::pair<std::string, std::string>> out;  // (name, path)
    for (const fs::path& dir : dirs) {
        std::vector<fs::path> files;
        for (const auto& e : fs::directory_iterator(dir))
            if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
        std::sort(files.begin(), files.end());
        for (const fs::path& f : files) out.emplace_back(dir.filename().string() + "/" + f.filename().string(), f.string());
    }
    return out;
}

inline RecordedReports read_recorded(const ValidateOptions& o) {
    namespace tool = io::report_names::tool;
    RecordedReports out;
    std::map<std::string, std::size_t> run_of;  // catalog id -> index in out.gpus
    const DeviceCatalog catalog = o.devices.catalog();
    for (const auto& [name, path] : recorded_files(o.recorded)) {
        const std::string dir_name = name.substr(0, name.find('/'));
        const bool nccl_dir = std::find(o.nccl_dirs.begin(), o.nccl_dirs.end(), dir_name) != o.nccl_dirs.end();
        for (io::Report& r : io::read_reports(name, io::parse(io::read_text(path), name))) {
            if (r.tool == tool::gemm || r.tool == tool::bandwidth || r.tool == tool::conv) {
                const std::string id = catalog_id_of_report(r);
                if (!run_of.count(id)) {
                    run_of[id] = out.gpus.size();
                    out.gpus.push_back({});
                    out.gpus.back().device = catalog.find(id);
                }
                GpuRun& run = out.gpus[run_of[id]];
                if (run.dir.find(dir_name) == std::string::npos) run.dir += (run.dir.empty() ? "" : ", ") + dir_name;
                run.reports.push_back(std::move(r));
            } else if (r.tool == tool::nccl && nccl_dir) {
                out.nccl.push_back(std::move(r));
            } else if (r.tool == tool::e2e) {
                out.e2e.push_back(std::move(r));
            }
        }
    }
    return out;
}

/// The summary figures of one GPU's calibrated predictions: per class and over all GEMM classes, convolutions.
inline void gpu_figures(const GpuRun& g, std::map<std::string, double>& figures) {
    const std::string id(g.device.id.view());
    std::vector<validation::CaseComparison> gemm, conv;
    for (const validation::CaseComparison& c : g.after)
        if (c.group.rfind("conv.", 0) == 0) conv.push_back(c);
        else if (c.group != "memory") gemm.push_back(c);
    if (!conv.empty()) {
        figures[id + ".conv.median"] = validation::summarize(conv).median;
        figures[id + ".conv.p90"] = validation::summarize(conv).p90;
    }
    if (!gemm.empty()) {
        const validation::ErrorSummary all = validation::summarize(gemm);
        figures[id + ".gemm.all.median"] = all.median;
        figures[id + ".gemm.all.p90"] = all.p90;
    }
    for (MathClass m : all_math_classes) {
        const auto cases = validation::select(g.after, std::string(to_string(m)));
        if (cases.empty()) continue;
        const validation::ErrorSummary s = validation::summarize(cases);
        figures[id + ".gemm." + std::string(to_string(m)) + ".median"] = s.median;
        figures[id + ".gemm." + std::string(to_string(m)) + ".p90"] = s.p90;
    }
}

/// The link fit on the NCCL runs, their predictions before and after, and the worst |error| per collective.
inline void nccl_tables(const ValidateOptions& o, const std::vector<io::Report>& nccl, RecordedTables& out) {
    const System& system = find_system(o.nccl_system);
    const std::int64_t min_bytes = parse_bytes(o.nccl_min_bytes);
    const calibration::LinkCalibration lc = calibration::fit_links(io::merged(nccl).collectives, system, min_bytes);
    out.links = lc.links;
    out.links_text = "base " + seconds_text(lc.links.base_s) + " per collective, " +
                     seconds_text(lc.links.latency(lc.kind)) + " per step, link efficiency " +
                     fixed(lc.links.eff(lc.kind), 3) + " (" + std::string(to_string(lc.kind)) + ")";
    for (const io::Report& r : nccl) {
        const auto b = validation::compare_nccl(r.samples.collectives, system, LinkParameters{});
        const auto a = validation::compare_nccl(r.samples.collectives, system, lc.links);
        out.nccl_before.insert(out.nccl_before.end(), b.begin(), b.end());
        out.nccl_after.insert(out.nccl_after.end(), a.begin(), a.end());
    }
    for (Collective c : all_collectives) {
        const auto cases = validation::select(out.nccl_after, std::string(to_string(c)), static_cast<double>(min_bytes));
        if (!cases.empty()) out.figures["nccl." + std::string(to_string(c)) + ".worst"] = validation::summarize(cases).worst;
    }
}

/// The end-to-end runs predicted with their GPU's default and calibrated profiles; the figure of a case is the
/// worst |error| of its runs.
inline void e2e_tables(const std::vector<io::Report>& e2e, RecordedTables& out) {
    for (const io::Report& r : e2e) {
        const std::string id = catalog_id_of_report(r);
        const GpuRun* run = nullptr;
        for (const GpuRun& g : out.gpus)
            if (g.device.id.view() == id) run = &g;
        if (!run) fail(r.file, ": no micro-benchmark run of ", id, " to calibrate its predictions");
        auto b = validation::compare_e2e(r.samples.e2e, run->device, default_profile(run->device));
        auto a = validation::compare_e2e(r.samples.e2e, run->device, run->calibrated);
        for (auto* list : {&b, &a})
            for (validation::CaseComparison& c : *list) c.group = r.file;  // shown beside the case
        out.e2e_before.insert(out.e2e_before.end(), b.begin(), b.end());
        out.e2e_after.insert(out.e2e_after.end(), a.begin(), a.end());
        for (const validation::CaseComparison& c : a) {
            double& m = out.figures["e2e." + c.label.substr(0, c.label.find(' '))];
            m = std::max(m, std::abs(c.error()));
        }
        const std::string dir = r.file.substr(0, r.file.find('/'));
        if (out.e2e_dir.find(dir) == std::string::npos) out.e2e_dir += (out.e2e_dir.empty() ? "" : ", ") + dir;
    }
}

}  // namespace detail

/// Refits every GPU's profile and its NCCL links from the recorded micro-benchmarks and predicts every case.
inline RecordedTables recorded_tables(const ValidateOptions& o) {
    RecordedReports recorded = detail::read_recorded(o);
    RecordedTables out;
    for (GpuRun& run : recorded.gpus) {
        const calibration::Calibration c = calibration::fit(io::merged(run.reports), run.device);
        run.calibrated = c.profile;
        run.fit = c.quality;
        run.before = detail::compare_reports(run.reports, run.device, default_profile(run.device));
        run.after = detail::compare_reports(run.reports, run.device, run.calibrated);
        detail::gpu_figures(run, out.figures);
        out.gpus.push_back(std::move(run));
    }
    if (!recorded.nccl.empty()) detail::nccl_tables(o, recorded.nccl, out);
    detail::e2e_tables(recorded.e2e, out);
    return out;
}

/// The bounds the recorded set is held to: DIR/bounds.json, when there is one.
inline std::optional<validation::Bounds> recorded_bounds(const std::string& dir) {
    const std::string file = (std::filesystem::path(dir) / "bounds.json").string();
    if (!std::filesystem::exists(file)) return std::nullopt;
    return io::load_bounds(file);
}

namespace detail {

inline void markdown_bounds(std::ostringstream& md, const std::string& title,
                            const std::vector<validation::BoundResult>& bounds) {
    md << "### " << title << "\n\n| check | bar | achieved | status |\n|---|---|---|---|\n";
    for (const validation::BoundResult& r : bounds) {
        md << "| " << r.bound.what << " | ≤ " << abs_percent(r.bound.bar, 0) << " | "
           << (r.measured ? abs_percent(r.value) : std::string("–")) << " | ";
        if (!r.measured) md << "not measured yet |\n";
        else if (r.met) md << "met |\n";
        else md << "**missed** (held at ≤ " << abs_percent(r.bound.held) << " as a regression bound) |\n";
    }
    md << "\n";
}

/// Per GPU and class: the error summaries before and after calibration, the fitted value, calibrate's own fit.
inline void markdown_classes(std::ostringstream& md, const RecordedTables& t) {
    md << "### Single GPU: per class, every case (median / 90th percentile / worst |error|)\n\n"
          "| GPU | class | cases | default | calibrated | fitted efficiency or conv factor (default) | calibrate's own fit (GEMM: with its fixed cost b per kernel): median / worst |\n"
          "|---|---|---|---|---|---|---|\n";
    for (const GpuRun& g : t.gpus) {
        std::vector<std::string> groups;
        for (const validation::CaseComparison& c : g.before)
            if (std::find(groups.begin(), groups.end(), c.group) == groups.end()) groups.push_back(c.group);
        const EfficiencyProfile d = default_profile(g.device);
        for (const std::string& group : groups) {
            const validation::ErrorSummary b = validation::summarize(validation::select(g.before, group)),
                                           a = validation::summarize(validation::select(g.after, group));
            double fitted = g.calibrated.memory, before = d.memory;
            for (MathClass m : all_math_classes) {
                if (to_string(m) == group) fitted = g.calibrated.gemm_efficiency(m), before = d.gemm_efficiency(m);
                if ("conv." + std::string(to_string(m)) == group) fitted = g.calibrated.conv_factor(m), before = d.conv_factor(m);
            }
            md << "| " << g.device.id.view() << " | " << group << " | " << b.samples << " | " << abs_percent(b.median)
               << " / " << abs_percent(b.p90) << " / " << abs_percent(b.worst) << " | " << abs_percent(a.median) << " / "
               << abs_percent(a.p90) << " / " << abs_percent(a.worst) << " | " << fixed(fitted, 3) << " ("
               << fixed(before, 2) << ") | ";
            for (const calibration::FitQuality& q : g.fit)
                if (q.what == group || q.what.rfind(group + " (", 0) == 0)  // conv: "conv.bf16_tensor (nhwc)"
                    md << abs_percent(q.median_rel_error) << " / " << abs_percent(q.worst_rel_error)
                       << (group == "memory" || group.rfind("conv.", 0) == 0 ? std::string() : ", b = " + seconds_text(q.fixed_s));
            md << " |\n";
        }
    }
}

/// Every GEMM and streaming case of each GPU (convolutions: hundreds of cases, summarised above).
inline void markdown_cases(std::ostringstream& md, const RecordedTables& t) {
    for (const GpuRun& g : t.gpus) {
        md << "\n<details><summary>" << g.device.id.view() << ": every GEMM and streaming case (" << g.dir << ")</summary>\n\n"
           << "| class | case | measured | default | error | calibrated | error |\n|---|---|---|---|---|---|---|\n";
        for (std::size_t i = 0; i < g.before.size(); ++i)
            if (g.before[i].group.rfind("conv.", 0) != 0)
            md << "| " << g.before[i].group << " | " << g.before[i].label << " | " << rate_text(g.before[i].measured) << " "
               << g.before[i].unit << " | " << rate_text(g.before[i].predicted) << " | " << percent(g.before[i].error(), 0)
               << " | " << rate_text(g.after[i].predicted) << " | " << percent(g.after[i].error(), 0) << " |\n";
        md << "\n</details>\n";
    }
}

inline void markdown_nccl_e2e(std::ostringstream& md, const RecordedTables& t) {
    if (!t.nccl_before.empty()) {
        md << "\n### Collectives: NCCL busbw (GB/s) on " << "H200 NVLink\n\n"
           << "Calibrated: " << t.links_text << "; fitted to the runs' measurements ≥ 16 MiB.\n\n"
           << "| GPUs, size | op | measured | default | error | calibrated | error |\n|---|---|---|---|---|---|---|\n";
        for (std::size_t i = 0; i < t.nccl_before.size(); ++i) {
            const validation::CaseComparison& b = t.nccl_before[i];
            md << "| " << b.label << " | " << b.group << " | " << fixed(b.measured, 1) << " | " << fixed(b.predicted, 1)
               << " | " << percent(b.error(), 0) << " | " << fixed(t.nccl_after[i].predicted, 1) << " | "
               << percent(t.nccl_after[i].error(), 0) << " |\n";
        }
    }
    if (!t.e2e_before.empty()) {
        md << "\n### End to end (" << t.e2e_dir << "; predictions only, never fitted)\n\n"
           << "| case | measured | default | error | calibrated | error |\n|---|---|---|---|---|---|\n";
        for (std::size_t i = 0; i < t.e2e_before.size(); ++i) {
            const validation::CaseComparison& b = t.e2e_before[i];
            md << "| " << b.label << " (" << b.group << ") | " << fixed(b.measured, 0) << " " << b.unit << " | " << fixed(b.predicted, 0)
               << " | " << percent(b.error(), 0) << " | " << fixed(t.e2e_after[i].predicted, 0) << " | "
               << percent(t.e2e_after[i].error(), 0) << " |\n";
        }
    }
}

}  // namespace detail

inline std::string recorded_markdown(const RecordedTables& t, const std::optional<validation::Bounds>& bounds,
                                     const std::vector<validation::BoundResult>& results) {
    std::ostringstream md;
    md << "Errors are predicted rate / measured rate − 1 (positive: the model is optimistic). \"Default\" is the\n"
          "datasheet peak with the generation's default efficiencies; \"calibrated\" is the profile that\n"
          "`roofplan calibrate` fits to the GPU's recorded GEMM, bandwidth and convolution reports (refitted here;\n"
          "end-to-end runs are never fitted).\n\n";
    if (bounds) detail::markdown_bounds(md, bounds->title, results);
    detail::markdown_classes(md, t);
    detail::markdown_cases(md, t);
    detail::markdown_nccl_e2e(md, t);
    return md.str();
}

inline constexpr std::string_view generated_begin =
    "<!-- BEGIN GENERATED by `roofplan validate --recorded validation/results --update-doc docs/validation.md`; do not edit -->";
inline constexpr std::string_view generated_end = "<!-- END GENERATED -->";

/// The document with its generated block replaced by `block`.
inline std::string with_generated_block(const std::string& doc, const std::string& file, const std::string& block) {
    const auto begin = doc.find(generated_begin);
    const auto end = doc.find(generated_end);
    if (begin == std::string::npos || end == std::string::npos || end < begin)
        fail(file, ": no generated block (a line '", generated_begin, "' followed by '", generated_end, "')");
    return doc.substr(0, begin) + std::string(generated_begin) + "\n\n" + block + "\n" + doc.substr(end);
}

namespace detail {

/// --update-doc and --check-doc; false when the checked document is out of date.
inline bool update_or_check_doc(const ValidateOptions& o, const std::string& md) {
    if (!o.update_doc.empty()) {
        const std::string doc = io::read_text(o.update_doc);
        std::ofstream out(o.update_doc, std::ios::binary);
        out << with_generated_block(doc, o.update_doc, md);
        if (!out) fail("cannot write '", o.update_doc, "'");
        std::cerr << "updated " << o.update_doc << "\n";
    }
    if (o.check_doc.empty()) return true;
    const std::string doc = io::read_text(o.check_doc);
    if (with_generated_block(doc, o.check_doc, md) != doc) {
        std::cout << o.check_doc << ": the generated block is out of date; run roofplan validate --recorded "
                  << o.recorded << " --update-doc " << o.check_doc << "\n";
        return false;
    }
    std::cout << o.check_doc << ": generated block up to date\n";
    return true;
}

inline void print_bounds_json(const std::vector<validation::BoundResult>& results) {
    json j = json::array();
    for (const validation::BoundResult& r : results)
        j.push_back({{"id", r.bound.id}, {"bar", r.bound.bar}, {"measured", r.measured},
                     {"achieved", r.measured ? json(r.value) : json(nullptr)}, {"met", r.met},
                     {"held", r.bound.held}, {"ok", r.ok}});
    std::cout << json{{"bars", j}, {"ok", validation::all_ok(results)}}.dump(2) << '\n';
}

/// The bounds beside their figures; without bounds, every figure.
inline void print_bounds_table(const RecordedTables& t, const std::optional<validation::Bounds>& bounds,
                               const std::vector<validation::BoundResult>& results) {
    if (!bounds) {
        Table table({"figure", "achieved"}, {false, true});
        for (const auto& [id, value] : t.figures) table.add({id, abs_percent(value)});
        std::cout << table.render();
        return;
    }
    Table table({"check", "bar", "achieved", "status"}, {false, true, true, false});
    for (const validation::BoundResult& r : results) {
        const std::string held = abs_percent(r.bound.held);
        table.add({r.bound.id, abs_percent(r.bound.bar, 0), r.measured ? abs_percent(r.value) : "-",
                   !r.measured ? "not measured" : r.met ? "met" : r.ok ? "missed, held at " + held
                                                                       : "BROKEN (held at " + held + ")"});
    }
    std::cout << table.render();
    if (!validation::all_ok(results))
        std::cout << "\nsome bars are broken: the model or the fit got worse on the recorded data\n";
}

}  // namespace detail

inline int run_validate_recorded(const ValidateOptions& o) {
    const RecordedTables t = recorded_tables(o);
    const std::optional<validation::Bounds> bounds = recorded_bounds(o.recorded);
    if (o.check && !bounds)
        fail("--check: '", o.recorded, "' has no bounds.json (the bounds its figures are held to)");
    const std::vector<validation::BoundResult> results =
        bounds ? validation::judge(t.figures, *bounds) : std::vector<validation::BoundResult>{};
    const std::string md = recorded_markdown(t, bounds, results);
    int rc = o.check && !validation::all_ok(results) ? 1 : 0;
    if (!detail::update_or_check_doc(o, md)) rc = 1;
    if (o.json) detail::print_bounds_json(results);
    else if (o.markdown) std::cout << md;
    else if (o.update_doc.empty() && o.check_doc.empty()) detail::print_bounds_table(t, bounds, results);
    return rc;
}

inline int run_validate(const ValidateOptions& o) {
    if (!o.recorded.empty()) {
        if (!o.files.empty()) fail("give either reports or --recorded DIR, not both");
        return run_validate_recorded(o);
    }
    if (o.markdown || o.check || !o.update_doc.empty() || !o.check_doc.empty())
        fail("--markdown, --check, --update-doc and --check-doc need --recorded DIR");
    return run_validate_reports(o);
}

}  // namespace roofplan::cli

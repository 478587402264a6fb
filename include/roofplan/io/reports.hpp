// roofplan/io/reports.hpp — THE reader of measurement reports: report JSON in, typed records
// (measurement/samples.hpp) out.  Calibration and validation never see JSON.
//
// A report is one program's output, {"tool": ..., "provenance": {...}, "results": [...]}:
//   roofplan-gemm, roofplan-bandwidth, roofplan-conv, roofplan-dp4a, roofplan-nccl  (kernels/, the CUDA programs)
//   roofplan-e2e                                                          (validation/e2e/train_throughput.py)
// or a suite of the runner, roofplan-bench, holding several of them:
//   {"tool": "roofplan-bench", "provenance": {...}, "device": {... optional: the host CPU as a device ...},
//    "reports": [{"tool": "roofplan-gemm", ...}, {"tool": "roofplan-bandwidth", ...}]}
// which reads as its parts ("suite.json#roofplan-gemm"), each inheriting the suite's provenance when it has none.
// Only verified records (checked against a reference before they were timed) become samples; every error names
// the file and the JSON path of the field.
#pragma once

#include <roofplan/device/device.hpp>
#include <roofplan/io/json.hpp>
#include <roofplan/measurement/samples.hpp>
#include <roofplan/system/collective.hpp>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace roofplan::io {

/// The names the reports use, in one place (the names the CUDA programs write; a contract with the recorded files
/// in validation/results: never rename one).
namespace report_names {
using name = std::string_view;
namespace tool {
inline constexpr name gemm = "roofplan-gemm", bandwidth = "roofplan-bandwidth", dp4a = "roofplan-dp4a",
                      nccl = "roofplan-nccl", conv = "roofplan-conv", e2e = "roofplan-e2e", suite = "roofplan-bench";
/// roofplan-bench's host-decode part: the input pipeline's images per second per core (validation/host/
/// decode_bench.py), a host figure that `--decode-rate` takes, not a GPU efficiency: readers skip it in a suite.
inline constexpr name host_decode = "roofplan-host-decode";
}
namespace key {
inline constexpr name tool = "tool", provenance = "provenance", results = "results", reports = "reports",
                      device = "device";
}
namespace field {
// provenance
inline constexpr name date_utc = "date_utc", device = "device", device_name = "name";
// every record
inline constexpr name verified = "verified", time_s_median = "time_s_median", label = "label", precision = "precision";
// gemm (and dp4a's gemm: m, n, k)
inline constexpr name m = "m", n = "n", k = "k", count = "count", bytes_a = "bytes_a", bytes_b = "bytes_b",
                      bytes_d = "bytes_d";
// bandwidth
inline constexpr name kernel = "kernel", bytes_per_iteration = "bytes_per_iteration", median_s = "median_s",
                      gb_per_s = "gb_per_s";
// dp4a
inline constexpr name test = "test", tops = "tops";
// nccl
inline constexpr name op = "op", bytes = "bytes", ranks = "ranks", busbw_gbps = "busbw_GBps";
// conv (and n, k, label, precision)
inline constexpr name pass = "pass", layout = "layout", c = "c", h = "h", w = "w", r = "r", s = "s",
                      stride = "stride", pad = "pad", dilation = "dilation", tflops = "tflops";
// e2e
inline constexpr name case_name = "case", gpus = "gpus", batch = "batch", optimizer = "optimizer", seq = "seq",
                      image_size = "image_size", throughput = "throughput_samples_per_s";
}  // namespace field
}  // namespace report_names

/// One program's report, read into records.
struct Report {
    std::string file;         ///< "dir/gemm_h200.json", or "suite.json#roofplan-gemm" for a part of a suite
    std::string tool;         ///< "roofplan-gemm", ...; "" for a document that is not a report
    std::string date;         ///< provenance.date_utc ("?" when absent)
    std::string device_name;  ///< the GPU as the report names it ("NVIDIA H200"), "" when absent
    bool known = false;       ///< a tool this reader turns into records (others come back without samples)
    Measurements samples;
};

namespace detail {

namespace names = report_names;

inline double positive(const json& r, std::string_view key, const std::string& where) {
    const double v = number(r, key, where);
    if (!(v > 0)) roofplan::detail::fail(path_of(where, key), ": expected a positive number");
    return v;
}
/// A count (ranks, batch, sequence length): a whole number in [0, 2^31).
inline std::int64_t whole(const json& r, std::string_view key, const std::string& where) {
    const double v = number(r, key, where);
    if (!(v >= 0 && v < 2147483648.0 && v == std::floor(v)))
        roofplan::detail::fail(path_of(where, key), ": expected a whole number in [0, 2^31)");
    return static_cast<std::int64_t>(v);
}
/// A count of a convolution's shape: an integer in [0, 10^7].
inline std::int64_t extent(const json& r, std::string_view key, const std::string& where) {
    const double v = number(r, key, where);
    if (!(v >= 0 && v <= 1e7 && v == std::floor(v)))
        roofplan::detail::fail(path_of(where, key), ": expected an integer in [0, 10^7]");
    return static_cast<std::int64_t>(v);
}
/// A kernel precision ("fp32", "tf32", "fp16", "bf16", "int8"; `int8` only where the program has it).
inline KernelPrecision kernel_precision(const json& r, const std::string& where, bool int8) {
    const std::string name = string_field(r, names::field::precision, where);
    for (KernelPrecision p : all_kernel_precisions)
        if (to_string(p) == name && (int8 || p != KernelPrecision::int8)) return p;
    roofplan::detail::fail(where, ": unknown precision '", name, "' (expected fp32, tf32, fp16, bf16",
                           int8 ? ", int8)" : ")");
}

inline GemmSample read_gemm(const json& r, const std::string& where) {
    namespace f = names::field;
    GemmSample g;
    g.where = where;
    g.precision = kernel_precision(r, where, true);
    g.m = number(r, f::m, where), g.n = number(r, f::n, where), g.k = number(r, f::k, where);
    g.count = number(r, f::count, where);
    g.seconds = number(r, f::time_s_median, where);
    if (!(g.seconds > 0) || !(g.m > 0) || !(g.n > 0) || !(g.k > 0) || !(g.count > 0))
        roofplan::detail::fail(where, ": sizes and time must be positive");
    if (r.contains(std::string(f::bytes_a)) && r.contains(std::string(f::bytes_b)) && r.contains(std::string(f::bytes_d))) {
        g.bytes = number(r, f::bytes_a, where) + number(r, f::bytes_b, where) + number(r, f::bytes_d, where);
    } else {  // what the kernel moves: A and B in its precision, D in it too (INT8: int8 in, int32 out)
        const double in = g.precision == KernelPrecision::fp32 || g.precision == KernelPrecision::tf32 ? 4
                          : g.precision == KernelPrecision::int8                                    ? 1
                                                                                                    : 2;
        const double out = g.precision == KernelPrecision::int8 ? 4 : in;
        g.bytes = g.count * ((g.m * g.k + g.k * g.n) * in + g.m * g.n * out);
    }
    const auto label = r.find(std::string(f::label));
    if (label != r.end() && label->is_string()) g.label = label->get<std::string>();
    return g;
}

inline StreamSample read_stream(const json& r, const std::string& where) {
    namespace f = names::field;
    return {where, string_field(r, f::kernel, where), positive(r, f::bytes_per_iteration, where),
            positive(r, f::median_s, where), positive(r, f::gb_per_s, where)};
}

inline Pass conv_pass(const json& r, const std::string& where) {
    const std::string name = string_field(r, names::field::pass, where);
    for (Pass p : {Pass::forward, Pass::backward_data, Pass::backward_weight})
        if (conv_pass_name(p) == name) return p;
    roofplan::detail::fail(path_of(where, names::field::pass), ": unknown pass '", name,
                           "' (expected forward, bwd-data, bwd-filter)");
}

inline ConvSample read_conv(const json& r, const std::string& where) {
    namespace f = names::field;
    ConvSample c;
    c.where = where;
    c.label = string_or(r, f::label, where, "");
    c.pass = conv_pass(r, where);
    c.precision = kernel_precision(r, where, false);
    c.layout = string_field(r, f::layout, where);
    c.n = extent(r, f::n, where), c.c = extent(r, f::c, where), c.h = extent(r, f::h, where);
    c.w = extent(r, f::w, where), c.k = extent(r, f::k, where), c.r = extent(r, f::r, where);
    c.s = extent(r, f::s, where), c.stride = extent(r, f::stride, where), c.pad = extent(r, f::pad, where);
    c.dilation = extent(r, f::dilation, where);
    c.seconds = positive(r, f::time_s_median, where);
    c.tflops = positive(r, f::tflops, where);
    return c;
}

inline Collective collective_of(const json& r, const std::string& where) {
    const std::string op = string_field(r, names::field::op, where);
    try {
        return parse_collective(op);
    } catch (const invalid_argument& e) {
        roofplan::detail::fail(path_of(where, names::field::op), ": ", e.what());
    }
}

inline CollectiveSample read_nccl(const json& r, const std::string& where) {
    namespace f = names::field;
    return {where, collective_of(r, where), static_cast<int>(whole(r, f::ranks, where)),
            static_cast<std::int64_t>(number(r, f::bytes, where)), positive(r, f::time_s_median, where),
            number(r, f::busbw_gbps, where)};
}

/// The issue rate, or the program's own INT8 GEMM (with its shape).
inline Dp4aSample read_dp4a(const json& r, const std::string& where) {
    namespace f = names::field;
    const std::string test = string_field(r, f::test, where);
    const auto extent_of = [&](std::string_view key) { return test == "gemm" ? number(r, key, where) : 0.0; };
    return {where, test, extent_of(f::m), extent_of(f::n), extent_of(f::k), positive(r, f::time_s_median, where),
            positive(r, f::tops, where)};
}

inline E2eSample read_e2e(const json& r, const std::string& where) {
    namespace f = names::field;
    E2eSample e;
    e.where = where;
    e.case_name = string_field(r, f::case_name, where);
    if (r.contains(std::string(f::gpus))) e.gpus = static_cast<int>(whole(r, f::gpus, where));
    e.batch = whole(r, f::batch, where);
    e.precision = parse_precision(string_or(r, f::precision, where, "fp32"));
    e.optimizer = parse_optimizer(string_or(r, f::optimizer, where, "sgd"));
    if (r.contains(std::string(f::seq))) e.seq = whole(r, f::seq, where);
    if (r.contains(std::string(f::image_size))) e.image_size = whole(r, f::image_size, where);
    e.samples_per_s = positive(r, f::throughput, where);
    return e;
}

/// Whether the reader turns reports of `tool` into records.
inline bool known_tool(std::string_view tool) {
    namespace t = names::tool;
    for (std::string_view known : {t::gemm, t::bandwidth, t::conv, t::dp4a, t::nccl, t::e2e})
        if (tool == known) return true;
    return false;
}

/// The verified records of `results` (a report of `tool`) into `out`.  Bandwidth and end-to-end records carry no
/// verification flag: the bandwidth program checks before it times, and an end-to-end run is what it is.
inline void read_results(std::string_view tool, const json& results, const std::string& file, Measurements& out) {
    namespace t = names::tool;
    const bool always = tool == t::bandwidth || tool == t::e2e;
    for (std::size_t i = 0; i < results.size(); ++i) {
        const json& r = results[i];
        const std::string where = file + ": .results[" + std::to_string(i) + "]";
        if (!r.is_object()) roofplan::detail::fail(where, ": expected an object");
        if (!always && !flag(r, names::field::verified, where)) continue;  // only checked results count
        if (tool == t::gemm) out.gemm.push_back(read_gemm(r, where));
        else if (tool == t::bandwidth) out.streams.push_back(read_stream(r, where));
        else if (tool == t::conv) out.conv.push_back(read_conv(r, where));
        else if (tool == t::dp4a) out.dp4a.push_back(read_dp4a(r, where));
        else if (tool == t::nccl) out.collectives.push_back(read_nccl(r, where));
        else if (tool == t::e2e) out.e2e.push_back(read_e2e(r, where));
    }
}

/// The GPU a report's provenance names: provenance.device.name, or provenance.device when it is a string.
inline std::string device_name_of(const json& report) {
    namespace f = names::field;
    if (!report.contains(std::string(names::key::provenance))) return {};
    const json& p = report.at(std::string(names::key::provenance));
    if (!p.is_object() || !p.contains(std::string(f::device))) return {};
    const json& d = p.at(std::string(f::device));
    if (d.is_string()) return d.get<std::string>();
    if (d.is_object() && d.contains(std::string(f::device_name)) && d.at(std::string(f::device_name)).is_string())
        return d.at(std::string(f::device_name)).get<std::string>();
    return {};
}

/// One program's report (not a suite).
inline Report read_report(const std::string& file, const json& report) {
    Report out;
    out.file = file;
    if (!report.is_object() || !report.contains(std::string(names::key::tool)) ||
        !report.at(std::string(names::key::tool)).is_string())
        return out;
    out.tool = report.at(std::string(names::key::tool)).get<std::string>();
    out.known = known_tool(out.tool);
    if (!out.known) return out;
    const auto results = report.find(std::string(names::key::results));
    if (results == report.end() || !results->is_array())
        roofplan::detail::fail(file, ": a ", out.tool, " report needs a .results array");
    out.date = "?";
    const auto provenance = report.find(std::string(names::key::provenance));
    if (provenance != report.end() && provenance->is_object()) {
        const auto date = provenance->find(std::string(names::field::date_utc));
        if (date != provenance->end() && date->is_string()) out.date = date->get<std::string>();
    }
    out.device_name = device_name_of(report);
    read_results(out.tool, *results, file, out.samples);
    out.samples.sources.push_back(file + " (" + out.tool + ", " + out.date + ")");
    return out;
}

}  // namespace detail

/// Whether `document` is a runner suite report (roofplan-bench).
inline bool is_suite_report(const json& document) {
    if (!document.is_object()) return false;
    const auto tool = document.find(std::string(report_names::key::tool));  // any type: a report's .tool may be wrong
    return tool != document.end() && tool->is_string() && tool->get_ref<const std::string&>() == report_names::tool::suite;
}

/// The program reports in `document` (a suite's parts, or the document itself), read into records.  Documents
/// that are not reports, and reports of tools the reader does not know, come back with `known` false and no
/// samples (the caller decides whether that is an error: require_known).
inline std::vector<Report> read_reports(const std::string& file, const json& document) {
    namespace k = report_names::key;
    if (!is_suite_report(document)) return {detail::read_report(file, document)};
    if (!document.contains(std::string(k::reports)) || !document.at(std::string(k::reports)).is_array())
        roofplan::detail::fail(file, ": a roofplan-bench report needs a .reports array");
    std::vector<Report> out;
    const json& list = document.at(std::string(k::reports));
    for (std::size_t i = 0; i < list.size(); ++i) {
        json part = list[i];
        if (!part.is_object() || !part.contains(std::string(k::tool)) || !part.at(std::string(k::tool)).is_string())
            roofplan::detail::fail(file, ": .reports[", static_cast<std::int64_t>(i), "] needs a .tool string");
        if (part.at(std::string(k::tool)).get<std::string>() == report_names::tool::host_decode) continue;  // host figures
        if (!part.contains(std::string(k::provenance)) && document.contains(std::string(k::provenance)))
            part[std::string(k::provenance)] = document.at(std::string(k::provenance));
        out.push_back(detail::read_report(file + "#" + part.at(std::string(k::tool)).get<std::string>(), part));
    }
    return out;
}

/// Reads and parses a report file.
inline std::vector<Report> read_report_file(const std::string& file) { return read_reports(file, parse(read_text(file), file)); }

/// Fails unless every report is of a tool in `accepted` (the message names the file and the tools accepted).
inline void require_tools(const std::vector<Report>& reports, const std::vector<std::string_view>& accepted) {
    std::string list;
    for (std::size_t i = 0; i < accepted.size(); ++i)
        list += std::string(i == 0 ? "" : i + 1 == accepted.size() ? " or " : ", ") + std::string(accepted[i]);
    for (const Report& r : reports) {
        if (r.tool.empty()) roofplan::detail::fail(r.file, ": not a ", list, " report (needs .tool and .results)");
        bool ok = false;
        for (std::string_view a : accepted) ok = ok || r.tool == a;
        if (!ok) roofplan::detail::fail(r.file, ": unknown tool '", r.tool, "' (expected ", list, ")");
    }
}

/// The records of several reports, in their order.
inline Measurements merged(const std::vector<Report>& reports) {
    Measurements out;
    for (const Report& r : reports) append(out, r.samples);
    return out;
}

/// The device a suite report describes itself as (the host suite's CPU), if any.
inline std::optional<Device> suite_device(const std::string& file, const json& document) {
    if (!is_suite_report(document) || !document.contains(std::string(report_names::key::device))) return std::nullopt;
    return device_from_json(document.at(std::string(report_names::key::device)), file + ": .device");
}

/// The catalog device a report's GPU name denotes ("NVIDIA H200" → h200, "NVIDIA H100 80GB HBM3" → h100-sxm);
/// nothing when the name is not one of the catalog's GPUs.
inline std::optional<std::string> device_id_of_gpu_name(const std::string& name) {
    std::string low;
    for (char c : name) low += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    struct Rule {
        const char* contains;
        const char* id;
    };
    for (const Rule r : {Rule{"h200", "h200"}, {"h100 pcie", "h100-pcie"}, {"h100", "h100-sxm"},
                         {"a100-pcie-80", "a100-pcie-80gb"}, {"a100-sxm4-40", "a100-sxm4-40gb"}, {"a100", "a100-sxm4-80gb"},
                         {"v100-pcie", "v100-pcie-16gb"}, {"v100", "v100-sxm2-32gb"}, {"t4", "t4"}})
        if (low.find(r.contains) != std::string::npos) return r.id;
    return std::nullopt;
}

}  // namespace roofplan::io

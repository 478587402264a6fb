// roofplan/io/json.hpp — reading and writing devices, efficiency profiles, link parameters, calibrations and
// systems as JSON (nlohmann_json).
//
// Device files follow data/devices.json (schema "roofplan-devices/1"): {"devices": [ {...}, ... ]} or a single
// device object.  Profiles follow schema "roofplan-profile/1" (their "links" section: the collective parameters).
// Every error names the file, the JSON path of the bad field and what was expected.
#pragma once

#include <roofplan/calibration/calibration.hpp>
#include <roofplan/calibration/profile.hpp>
#include <roofplan/device/catalog.hpp>
#include <roofplan/device/device.hpp>
#include <roofplan/io/read.hpp>
#include <roofplan/layers/conv.hpp>
#include <roofplan/system/collective.hpp>
#include <roofplan/system/systems.hpp>

#include <nlohmann/json.hpp>

#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace roofplan::io {

using json = nlohmann::json;

namespace detail {

inline std::string path_of(const std::string& parent, std::string_view key) { return parent + "." + std::string(key); }

inline const json& field(const json& object, std::string_view key, const std::string& path) {
    if (!object.is_object()) roofplan::detail::fail(path, ": expected an object");
    const auto it = object.find(std::string(key));
    if (it == object.end()) roofplan::detail::fail(path_of(path, key), ": missing (required)");
    return *it;
}

inline double number(const json& object, std::string_view key, const std::string& path, bool nullable = false) {
    const json& v = field(object, key, path);
    if (nullable && v.is_null()) return 0.0;
    if (!v.is_number())
        roofplan::detail::fail(path_of(path, key), ": expected a number", nullable ? " or null" : "", ", got ",
                               shorten(v));
    const double d = v.get<double>();
    if (!std::isfinite(d)) roofplan::detail::fail(path_of(path, key), ": expected a finite number");
    return d;
}

inline int integer(const json& object, std::string_view key, const std::string& path) {
    const json& v = field(object, key, path);
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 1'000'000'000)
        roofplan::detail::fail(path_of(path, key), ": expected an integer in [0, 1e9], got ", shorten(v));
    return static_cast<int>(v.get<std::int64_t>());
}

/// A string field (required), a string field with a fallback when absent, a boolean field (absent: false); any
/// other type is an error naming the field.
inline std::string string_field(const json& r, std::string_view key, const std::string& where) {
    const json& v = field(r, key, where);
    if (!v.is_string()) roofplan::detail::fail(path_of(where, key), ": expected a string, got ", v.dump());
    return v.get<std::string>();
}
inline std::string string_or(const json& r, std::string_view key, const std::string& where, std::string fallback) {
    return r.contains(std::string(key)) ? string_field(r, key, where) : fallback;
}
inline bool flag(const json& r, std::string_view key, const std::string& where) {
    if (!r.contains(std::string(key))) return false;
    const json& v = r.at(std::string(key));
    if (!v.is_boolean()) roofplan::detail::fail(path_of(where, key), ": expected true or false, got ", v.dump());
    return v.get<bool>();
}

/// A report's provenance.date_utc, or "?" when it has none.
inline std::string report_date(const json& report) {
    if (!report.is_object() || !report.contains("provenance")) return "?";
    const json& p = report.at("provenance");
    if (!p.is_object() || !p.contains("date_utc") || !p.at("date_utc").is_string()) return "?";
    return p.at("date_utc").get<std::string>();
}

template <std::size_t N>
FixedString<N> text(const json& object, std::string_view key, const std::string& path) {
    const json& v = field(object, key, path);
    if (!v.is_string()) roofplan::detail::fail(path_of(path, key), ": expected a string, got ", shorten(v));
    const std::string& s = v.get_ref<const std::string&>();
    if (s.size() > N) roofplan::detail::fail(path_of(path, key), ": longer than ", static_cast<std::int64_t>(N), " characters");
    require_printable(s, path_of(path, key));
    return FixedString<N>(std::string_view(s));
}

/// A device's id: lowercase letters, digits, '-', '_' or '.'.
inline DeviceId device_id(const json& j, const std::string& path) {
    const DeviceId id = text<31>(j, "id", path);
    for (char c : id.view())
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
            roofplan::detail::fail(path_of(path, "id"), ": '", id.view(),
                                   "' must use lowercase letters, digits, '-', '_' or '.'");
    return id;
}

/// A device's aliases (optional): as many as a Device holds, 1 to 31 printable characters each.
inline decltype(Device::aliases) device_aliases(const json& j, const std::string& path) {
    decltype(Device::aliases) aliases{};
    if (!j.contains("aliases")) return aliases;
    const json& a = j.at("aliases");
    if (!a.is_array() || a.size() > aliases.size())
        roofplan::detail::fail(path_of(path, "aliases"), ": expected an array of at most ",
                               static_cast<std::int64_t>(aliases.size()), " strings");
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (!a[i].is_string()) roofplan::detail::fail(path_of(path, "aliases"), "[", static_cast<std::int64_t>(i), "]: expected a string");
        const std::string s = a[i].get<std::string>();
        if (s.empty() || s.size() > 31) roofplan::detail::fail(path_of(path, "aliases"), "[", static_cast<std::int64_t>(i), "]: 1 to 31 characters");
        require_printable(s, path_of(path, "aliases") + "[" + std::to_string(i) + "]");
        aliases[i] = DeviceId(std::string_view(s));
    }
    return aliases;
}

/// A device's architecture, by name (an unknown name's error lists the accepted ones).
inline Architecture device_architecture(const json& j, const std::string& path) {
    try {
        return parse_architecture(field(j, "architecture", path).get<std::string>());
    } catch (const nlohmann::json::exception&) {
        roofplan::detail::fail(path_of(path, "architecture"), ": expected a string");
    } catch (const invalid_argument& e) {
        roofplan::detail::fail(path_of(path, "architecture"), ": ", e.what());
    }
}

/// A device's compute capability, "major.minor" (two numbers 0 to 99), into d.cc_major and d.cc_minor.
inline void read_compute_capability(const json& j, const std::string& path, Device& d) {
    const auto cc = text<7>(j, "compute_capability", path);
    const auto digits = [&](std::string_view part, int& out) {
        const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
        return !part.empty() && ec == std::errc() && end == part.data() + part.size() && out >= 0 && out <= 99;
    };
    const auto dot = cc.view().find('.');
    if (dot == std::string_view::npos || !digits(cc.view().substr(0, dot), d.cc_major) ||
        !digits(cc.view().substr(dot + 1), d.cc_minor))
        roofplan::detail::fail(path_of(path, "compute_capability"), ": expected \"major.minor\" (two numbers 0 to 99, "
                               "e.g. \"9.0\"), got '", cc.view(), "'");
}

/// A device's "peak" object: fp32 is required; the other rates may be null (the device has no such unit).
inline PeakRates peak_rates(const json& j, const std::string& path) {
    const json& peak = field(j, "peak", path);
    const std::string peak_path = path_of(path, "peak");
    reject_unknown_fields(peak, peak_path,
                          {"fp64", "fp32", "tf32_tensor", "fp16_tensor_fp16_acc", "fp16_tensor_fp32_acc", "bf16_tensor",
                           "int8_tensor", "int8_dp4a"});
    PeakRates rates{};
    rates.fp64 = number(peak, "fp64", peak_path, true);
    rates.fp32 = number(peak, "fp32", peak_path);
    rates.tf32_tensor = number(peak, "tf32_tensor", peak_path, true);
    rates.fp16_tensor_fp16_acc = number(peak, "fp16_tensor_fp16_acc", peak_path, true);
    rates.fp16_tensor_fp32_acc = number(peak, "fp16_tensor_fp32_acc", peak_path, true);
    rates.bf16_tensor = number(peak, "bf16_tensor", peak_path, true);
    rates.int8_tensor = number(peak, "int8_tensor", peak_path, true);
    rates.int8_dp4a = number(peak, "int8_dp4a", peak_path, true);
    return rates;
}

}  // namespace detail

/// Parses one device object; `path` is its JSON path for messages.
inline Device device_from_json(const json& j, const std::string& path = "device") {
    using namespace detail;
    if (!j.is_object()) roofplan::detail::fail(path, ": expected a device object, got ", shorten(j));
    reject_unknown_fields(j, path,
                          {"id", "name", "aliases", "architecture", "compute_capability", "form_factor", "market", "sms",
                           "fp32_cores", "tensor_cores", "base_clock_mhz", "boost_clock_mhz", "peak", "memory_gib",
                           "memory_type", "memory_bus_bits", "bandwidth_gb_s", "l2_mib", "tdp_w", "nvlink", "pcie",
                           "sources", "notes"});
    Device d;
    d.id = device_id(j, path);
    d.name = text<63>(j, "name", path);
    d.aliases = device_aliases(j, path);
    d.architecture = device_architecture(j, path);
    read_compute_capability(j, path, d);
    d.form_factor = text<15>(j, "form_factor", path);
    d.market = text<15>(j, "market", path);
    d.sms = integer(j, "sms", path);
    d.fp32_cores = integer(j, "fp32_cores", path);
    d.tensor_cores = integer(j, "tensor_cores", path);
    d.base_clock_mhz = number(j, "base_clock_mhz", path);
    d.boost_clock_mhz = number(j, "boost_clock_mhz", path);
    d.peak = peak_rates(j, path);
    d.memory_gib = number(j, "memory_gib", path);
    d.memory_type = text<15>(j, "memory_type", path);
    d.memory_bus_bits = integer(j, "memory_bus_bits", path);
    d.bandwidth_gb_s = number(j, "bandwidth_gb_s", path);
    d.l2_mib = number(j, "l2_mib", path);
    d.tdp_w = number(j, "tdp_w", path);
    const json& nv = field(j, "nvlink", path);
    reject_unknown_fields(nv, path_of(path, "nvlink"), {"generation", "links", "gb_s_per_link_per_direction"});
    d.nvlink = {integer(nv, "generation", path_of(path, "nvlink")), integer(nv, "links", path_of(path, "nvlink")),
                number(nv, "gb_s_per_link_per_direction", path_of(path, "nvlink"))};
    const json& pcie = field(j, "pcie", path);
    reject_unknown_fields(pcie, path_of(path, "pcie"), {"generation", "lanes"});
    d.pcie = {integer(pcie, "generation", path_of(path, "pcie")), integer(pcie, "lanes", path_of(path, "pcie"))};
    validate(d, path);
    return d;
}

/// A device as JSON (the catalog's figures; sources live in data/devices.json).
inline json to_json(const Device& d) {
    const auto peak_or_null = [](double v) { return v > 0 ? json(v) : json(nullptr); };
    json aliases = json::array();
    for (const DeviceId& a : d.aliases)
        if (!a.empty()) aliases.push_back(std::string(a.view()));
    json peak;
    for (MathClass m : all_math_classes) peak[std::string(to_string(m))] = m == MathClass::fp32 ? json(d.peak.fp32) : peak_or_null(d.peak[m]);
    return {{"id", d.id.view()},
            {"name", d.name.view()},
            {"aliases", aliases},
            {"architecture", to_string(d.architecture)},
            {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
            {"form_factor", d.form_factor.view()},
            {"market", d.market.view()},
            {"sms", d.sms},
            {"fp32_cores", d.fp32_cores},
            {"tensor_cores", d.tensor_cores},
            {"base_clock_mhz", d.base_clock_mhz},
            {"boost_clock_mhz", d.boost_clock_mhz},
            {"peak", peak},
            {"memory_gib", d.memory_gib},
            {"memory_type", d.memory_type.view()},
            {"memory_bus_bits", d.memory_bus_bits},
            {"bandwidth_gb_s", d.bandwidth_gb_s},
            {"l2_mib", d.l2_mib},
            {"tdp_w", d.tdp_w},
            {"nvlink",
             {{"generation", d.nvlink.generation},
              {"links", d.nvlink.links},
              {"gb_s_per_link_per_direction", d.nvlink.gb_s_per_link_per_direction}}},
            {"pcie", {{"generation", d.pcie.generation}, {"lanes", d.pcie.lanes}}}};
}

/// The most devices one file may hold.
inline constexpr std::size_t max_devices_per_file = 100'000;

/// Devices from a JSON document: {"schema": "roofplan-devices/1", "devices": [...]} or one device object.
inline std::vector<Device> devices_from_json(const json& j, const std::string& file) {
    std::vector<Device> out;
    if (j.is_object() && j.contains("devices")) {
        // (besides the devices: what data/devices.json documents, and the derivation roofplan-bench writes)
        reject_unknown_fields(j, file + ": ", {"schema", "description", "units", "references", "derivation", "devices"});
        if (j.contains("schema") && j.at("schema") != "roofplan-devices/1")
            roofplan::detail::fail(file, ": .schema: expected \"roofplan-devices/1\", got ", shorten(j.at("schema")));
        const json& list = j.at("devices");
        if (!list.is_array() || list.empty()) roofplan::detail::fail(file, ": .devices must be a non-empty array");
        if (list.size() > max_devices_per_file)
            roofplan::detail::fail(file, ": .devices: more than ", static_cast<std::int64_t>(max_devices_per_file),
                                   " devices (the limit of a device file)");
        out.reserve(list.size());
        for (std::size_t i = 0; i < list.size(); ++i)
            out.push_back(device_from_json(list[i], file + ": .devices[" + std::to_string(i) + "]"));
    } else if (j.is_object()) {
        out.push_back(device_from_json(j, file + ": device"));
    } else {
        roofplan::detail::fail(file, ": expected {\"devices\": [...]} or a device object");
    }
    return out;
}

/// Adds the devices of a file to a catalog (an id of the built-in catalog: replaces it; an id given twice by the
/// user, in one file or two, is an error).
inline void load_devices(DeviceCatalog& catalog, const std::string& file) {
    const std::vector<Device> devices = devices_from_json(parse(read_text(file), file), file);
    for (std::size_t i = 0; i < devices.size(); ++i)
        catalog.add(devices[i], devices.size() == 1 ? file : file + ": .devices[" + std::to_string(i) + "]");
}

namespace detail {
/// The top-level fields of a profile file (roofplan-profile/1).
inline constexpr std::array<std::string_view, 30> profile_fields{
    "schema",       "device",       "source",       "gemm",          "conv",          "conv_by_class", "measured_conv",
    "measured_gemm", "vector",
    "memory",       "launch_s",     "kernel_gap_s", "graph_kernel_gap_s", "small_tile_efficiency", "unaligned_even", "unaligned_odd", "power_w",
    "kernel_class", "attention",    "host",         "large_tile_m", "large_tile_n",  "small_tile_m",  "small_tile_n",  "split_k_min",
    "links",        "links_system", "fit",          "sources",       "note"};
}  // namespace detail

namespace detail {
/// A measured table's "columns" must be exactly `expected` (in order).
template <std::size_t N>
void require_columns(const json& m, const std::string& at, const std::array<std::string_view, N>& expected) {
    const json& columns = field(m, "columns", at);
    bool same = columns.is_array() && columns.size() == N;
    for (std::size_t i = 0; same && i < N; ++i)
        same = columns[i].is_string() && columns[i].get_ref<const std::string&>() == expected[i];
    if (!same) {
        std::string list;
        for (std::string_view c : expected) list += (list.empty() ? "" : ", ") + std::string(c);
        roofplan::detail::fail(at, ".columns: expected [", list, "]");
    }
}
}  // namespace detail

/// The columns of a profile's measured convolutions (calibration/measured_conv.hpp), one row per pass and batch.
inline constexpr std::array<std::string_view, 20> measured_conv_columns{
    "math",     "pass",     "part",     "layout",   "in_channels", "out_channels", "in_h",       "in_w",
    "kernel_h", "kernel_w", "stride_h", "stride_w", "pad_h",       "pad_w",        "dilation_h", "dilation_w",
    "groups",   "batch",    "efficiency", "kernels"};
inline constexpr std::size_t max_measured_conv_rows = 1'000'000;

/// A profile's measured convolutions (optional; absent: the generation's defaults).
///   "measured_conv": {"source": "conv.json (...)", "columns": [...measured_conv_columns...],
///                     "rows": [["bf16_tensor", "forward", "kernels", "nhwc", 64, 64, 56, 56, 3, 3, 1, 1, 1, 1, 1, 1, 1,
///                               32, 0.71, 1]]}
/// (part: "kernels", the pass's own kernels, or "conversions", its layout conversions)
inline void measured_conv_from_json(const json& j, const std::string& root, EfficiencyProfile& p) {
    if (!j.contains("measured_conv")) return;
    const std::string at = root + ".measured_conv";
    const json& m = j.at("measured_conv");
    if (!m.is_object()) roofplan::detail::fail(at, ": expected an object {\"source\", \"columns\", \"rows\"}");
    reject_unknown_fields(m, at, std::array<std::string_view, 3>{"source", "columns", "rows"});
    detail::require_columns(m, at, measured_conv_columns);
    const json& rows = detail::field(m, "rows", at);
    if (!rows.is_array()) roofplan::detail::fail(at, ".rows: expected an array of rows");
    if (rows.size() > max_measured_conv_rows)
        roofplan::detail::fail(at, ".rows: ", static_cast<std::int64_t>(rows.size()), " rows; at most ",
                               static_cast<std::int64_t>(max_measured_conv_rows), " are accepted");
    std::vector<MeasuredConv> entries;
    entries.reserve(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const json& r = rows[i];
        const std::string where = at + ".rows[" + std::to_string(i) + "]";
        if (!r.is_array() || r.size() != measured_conv_columns.size() || !r[0].is_string() || !r[1].is_string() ||
            !r[2].is_string() || !r[3].is_string())
            roofplan::detail::fail(where, ": expected a row of ", static_cast<std::int64_t>(measured_conv_columns.size()),
                                   " values (math class, pass, part, layout, then numbers)");
        MeasuredConv e;
        try {
            e.math = parse_enum<MathClass>(r[0].get_ref<const std::string&>());
            e.pass = parse_enum<Pass>(r[1].get_ref<const std::string&>());
            e.geometry.layout = parse_enum<ConvLayout>(r[3].get_ref<const std::string&>());
        } catch (const Error& error) {
            roofplan::detail::fail(where, ": ", error.what());
        }
        const std::string& part = r[2].get_ref<const std::string&>();
        if (part != "kernels" && part != "conversions")
            roofplan::detail::fail(where, "[2] (part): '", part, "' is not one of kernels, conversions");
        e.conversions = part == "conversions";
        ConvGeometry& g = e.geometry;
        std::int64_t* extents[] = {&g.in_channels, &g.out_channels, &g.in_h, &g.in_w, &g.kernel_h, &g.kernel_w,
                                   &g.stride_h, &g.stride_w, &g.pad_h, &g.pad_w, &g.dilation_h, &g.dilation_w, &g.groups};
        for (std::size_t c = 0; c < std::size(extents); ++c) {
            const json& v = r[4 + c];
            if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() >= (1 << 20))
                roofplan::detail::fail(where, "[", static_cast<std::int64_t>(4 + c), "] (", measured_conv_columns[4 + c],
                                       "): expected an integer in [0, 2^20), got ", shorten(v));
            *extents[c] = v.get<std::int64_t>();
        }
        try {
            (void)layers::Conv2D(g.config());  // a geometry that is a convolution
        } catch (const Error& error) {
            roofplan::detail::fail(where, ": ", error.what());
        }
        for (std::size_t c : {std::size_t{17}, std::size_t{18}, std::size_t{19}})
            if (!r[c].is_number() || !std::isfinite(r[c].get<double>()))
                roofplan::detail::fail(where, "[", static_cast<std::int64_t>(c), "] (", measured_conv_columns[c],
                                       "): expected a finite number");
        e.batch = r[17].get<double>();
        e.efficiency = r[18].get<double>();
        e.kernels = r[19].get<double>();
        e.key = g.key();
        entries.push_back(e);
    }
    p.measured_conv = keep(std::move(entries), at);
    p.measured_conv_source = FixedString<127>(std::string_view(detail::string_or(m, "source", at, "")).substr(0, 127));
}

inline json measured_conv_json(const EfficiencyProfile& p) {
    json rows = json::array();
    for (const MeasuredConv& e : p.measured_conv.entries) {
        const ConvGeometry& g = e.geometry;
        rows.push_back({to_string(e.math), to_string(e.pass), e.conversions ? "conversions" : "kernels",
                        to_string(g.layout), g.in_channels, g.out_channels,
                        g.in_h, g.in_w, g.kernel_h, g.kernel_w, g.stride_h, g.stride_w, g.pad_h, g.pad_w,
                        g.dilation_h, g.dilation_w, g.groups, e.batch, e.efficiency, e.kernels});
    }
    return {{"source", p.measured_conv_source.view()}, {"columns", measured_conv_columns}, {"rows", rows}};
}

/// The columns of a profile's measured linear-layer GEMMs (calibration/measured_gemm.hpp), one row per pass and rows.
inline constexpr std::array<std::string_view, 8> measured_gemm_columns{
    "math", "pass", "in_features", "out_features", "bias", "rows", "efficiency", "kernels"};


/// A profile's measured linear-layer GEMMs (optional; absent: the generation's defaults).
///   "measured_gemm": {"source": "gemm.json (...)", "columns": [...measured_gemm_columns...],
///                     "rows": [["bf16_tensor", "forward", 768, 3072, true, 8192, 0.71, 1]]}
inline void measured_gemm_from_json(const json& j, const std::string& root, EfficiencyProfile& p) {
    if (!j.contains("measured_gemm")) return;
    const std::string at = root + ".measured_gemm";
    const json& m = j.at("measured_gemm");
    if (!m.is_object()) roofplan::detail::fail(at, ": expected an object {\"source\", \"columns\", \"rows\"}");
    reject_unknown_fields(m, at, std::array<std::string_view, 3>{"source", "columns", "rows"});
    detail::require_columns(m, at, measured_gemm_columns);
    const json& rows = detail::field(m, "rows", at);
    if (!rows.is_array()) roofplan::detail::fail(at, ".rows: expected an array of rows");
    if (rows.size() > max_measured_conv_rows)
        roofplan::detail::fail(at, ".rows: ", static_cast<std::int64_t>(rows.size()), " rows; at most ",
                               static_cast<std::int64_t>(max_measured_conv_rows), " are accepted");
    std::vector<MeasuredGemm> entries;
    entries.reserve(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const json& r = rows[i];
        const std::string where = at + ".rows[" + std::to_string(i) + "]";
        if (!r.is_array() || r.size() != measured_gemm_columns.size() || !r[0].is_string() || !r[1].is_string() ||
            !r[4].is_boolean())
            roofplan::detail::fail(where, ": expected a row of ", static_cast<std::int64_t>(measured_gemm_columns.size()),
                                   " values (math class, pass, in_features, out_features, bias as true/false, rows, "
                                   "efficiency, kernels)");
        MeasuredGemm e;
        try {
            e.math = parse_enum<MathClass>(r[0].get_ref<const std::string&>());
            e.pass = parse_enum<Pass>(r[1].get_ref<const std::string&>());
        } catch (const Error& error) {
            roofplan::detail::fail(where, ": ", error.what());
        }
        for (std::size_t c : {std::size_t{2}, std::size_t{3}}) {
            const json& v = r[c];
            if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() >= (1 << 24))
                roofplan::detail::fail(where, "[", static_cast<std::int64_t>(c), "] (", measured_gemm_columns[c],
                                       "): expected an integer in [1, 2^24), got ", shorten(v));
        }
        e.geometry = {r[2].get<std::int64_t>(), r[3].get<std::int64_t>(), r[4].get<bool>()};
        for (std::size_t c : {std::size_t{5}, std::size_t{6}, std::size_t{7}})
            if (!r[c].is_number() || !std::isfinite(r[c].get<double>()))
                roofplan::detail::fail(where, "[", static_cast<std::int64_t>(c), "] (", measured_gemm_columns[c],
                                       "): expected a finite number");
        e.rows = r[5].get<double>();
        e.efficiency = r[6].get<double>();
        e.kernels = r[7].get<double>();
        e.key = e.geometry.key();
        entries.push_back(e);
    }
    p.measured_gemm = keep(std::move(entries), at);
    p.measured_gemm_source = FixedString<127>(std::string_view(detail::string_or(m, "source", at, "")).substr(0, 127));
}

inline json measured_gemm_json(const EfficiencyProfile& p) {
    json rows = json::array();
    for (const MeasuredGemm& e : p.measured_gemm.entries)
        rows.push_back({to_string(e.math), to_string(e.pass), e.geometry.in_features, e.geometry.out_features,
                        e.geometry.bias, e.rows, e.efficiency, e.kernels});
    return {{"source", p.measured_gemm_source.view()}, {"columns", measured_gemm_columns}, {"rows", rows}};
}

/// The GPU that measured a profile's measured tables: the profile's `device` (a built-in GPU, or the one predicted),
/// or, when the file names none, the GPU predicted.
inline void measured_on_from_json(const json& j, const Device& device, const std::string& root, EfficiencyProfile& p) {
    if (!j.contains("measured_conv") && !j.contains("measured_gemm")) return;
    MeasuredOn on = MeasuredOn::of(device);
    if (j.contains("device")) {
        const std::string name = j.at("device").get<std::string>();
        if (const Device* d = find_builtin_device(name)) on = MeasuredOn::of(*d);
        else if (!device.answers_to(name))
            roofplan::detail::fail(root, ".device: '", name, "' is not a built-in GPU; a profile's measured tables are "
                                   "fractions of the roofline of the GPU that measured them, so it must be one (see "
                                   "`roofplan devices`) or the GPU predicted");
    }
    if (j.contains("measured_conv")) p.measured_conv.on = on;
    if (j.contains("measured_gemm")) p.measured_gemm.on = on;
}

/// The kernel-class curves and host costs of a profile (optional; absent: the generation's defaults).
///   "kernel_class": {"elementwise": {"memory": 0.9, "fixed_s": 1.9e-6}, "layer_norm": {..., "sm_elements_per_cycle": 6}},
///   "host": {"module_s": 1.8e-5, "backward_s": 2.2e-5, ..., "source": "..."}
inline void kernel_classes_from_json(const json& j, const std::string& root, EfficiencyProfile& p) {
    if (j.contains("kernel_class")) {
        const json& k = j.at("kernel_class");
        if (!k.is_object()) roofplan::detail::fail(root, ".kernel_class: expected an object of kernel class -> curve");
        // Before 2026-12-08 `normalization` held layer norm beside cuDNN's channels-last batch norm and
        // `batch_norm` the native kernels both ways beside cuDNN's NCHW ones; `roofplan calibrate` writes every
        // class, so a file that gives either without any of the classes split from them is an older fit.
        const bool split = k.contains("layer_norm") || k.contains("layer_norm_backward") ||
                           k.contains("batch_norm_backward") || k.contains("batch_norm_nchw");
        for (const char* old : {"normalization", "batch_norm"})
            if (k.contains(old) && !split)
                roofplan::detail::fail(root, ".kernel_class.", old, ": a fit from before layer norm, the native batch norm's "
                                       "backward and cuDNN's NCHW batch norm got classes of their own (layer_norm, "
                                       "layer_norm_backward, batch_norm_backward, batch_norm_nchw); refit this profile "
                                       "with `roofplan calibrate`, or give those classes too");
        for (const auto& [key, value] : k.items()) {
            const std::string where = root + ".kernel_class." + key;
            KernelClassCost& cost = p.kernel_class[parse_kernel_class(key)];
            if (!value.is_object())
                roofplan::detail::fail(where, ": expected {\"memory\": fraction, \"fixed_s\": seconds, \"sm_elements_per_cycle\": elements}");
            if (value.contains("sm_bytes_per_cycle"))  // the SM side went by the byte in profiles before 2026-12-08
                roofplan::detail::fail(where, ".sm_bytes_per_cycle: the SM-side term now goes by the element "
                                              "(sm_elements_per_cycle); refit this profile with `roofplan calibrate`");
            reject_unknown_fields(value, where, {"memory", "fixed_s", "sm_elements_per_cycle"});
            // A class's memory fraction and SM-side rate are fitted together: a memory fraction given without an
            // SM-side rate is a fit of the bandwidth alone (one GPU's cases, or a file older than the field).
            if (value.contains("memory")) {
                cost.memory = detail::number(value, "memory", where);
                cost.sm_elements_per_cycle = 0;
            }
            if (value.contains("fixed_s")) cost.fixed_s = detail::number(value, "fixed_s", where);
            if (value.contains("sm_elements_per_cycle"))
                cost.sm_elements_per_cycle = detail::number(value, "sm_elements_per_cycle", where);
        }
        p.kernel_class_source = FixedString<127>(std::string_view(root).substr(0, 120));
    }
    if (j.contains("attention")) {
        const json& a = j.at("attention");
        const std::string where = root + ".attention";
        if (!a.is_object()) roofplan::detail::fail(where, ": expected {\"forward\": fraction, \"backward\": ..., \"simt_forward\": ..., \"simt_backward\": ..., \"dropout_forward\": ..., ...}");
        AttentionEfficiency& e = p.attention;
        const std::pair<std::string_view, double*> fields[] = {{"forward", &e.forward}, {"backward", &e.backward},
                                                               {"simt_forward", &e.simt_forward}, {"simt_backward", &e.simt_backward},
                                                               {"dropout_forward", &e.dropout_forward},
                                                               {"dropout_backward", &e.dropout_backward},
                                                               {"dropout_simt_forward", &e.dropout_simt_forward},
                                                               {"dropout_simt_backward", &e.dropout_simt_backward}};
        reject_unknown_fields(a, where, {"forward", "backward", "simt_forward", "simt_backward", "dropout_forward",
                                         "dropout_backward", "dropout_simt_forward", "dropout_simt_backward"});
        for (auto [key, target] : fields)
            if (a.contains(std::string(key))) *target = detail::number(a, key, where);
    }
    if (!j.contains("host")) return;
    const json& h = j.at("host");
    if (!h.is_object()) roofplan::detail::fail(root, ".host: expected an object of host costs in seconds");
    HostCosts& c = p.host;
    // One table names every host cost (host_cost_fields): the accepted fields of the error message come from it.
    std::vector<std::string_view> accepted;
    for (const HostCostField& f : host_cost_fields) accepted.push_back(f.name);
    accepted.push_back("speed_sensitivity");
    accepted.push_back("dp_lock_share");
    accepted.push_back("adam_op_shares");
    accepted.push_back("source");
    reject_unknown_fields(h, root + ".host", accepted);
    for (const HostCostField& f : host_cost_fields)
        if (h.contains(std::string(f.name))) c.*f.member = detail::number(h, f.name, root + ".host");
    if (h.contains("speed_sensitivity")) {
        const json& k = h.at("speed_sensitivity");
        const std::string where = root + ".host.speed_sensitivity";
        if (!k.is_object()) roofplan::detail::fail(where, ": expected an object of sensitivities (python, cpp, optimizer, view)");
        const auto names = EnumNames<HostSpeedClass>::names;
        reject_unknown_fields(k, where, std::vector<std::string_view>(names.begin(), names.end()));
        for (HostSpeedClass cls : enum_values<HostSpeedClass>())
            if (k.contains(std::string(to_string(cls))))
                c.speed_sensitivity[static_cast<std::size_t>(cls)] = detail::number(k, to_string(cls), where);
    }
    if (h.contains("dp_lock_share")) c.dp_lock_share = detail::number(h, "dp_lock_share", root + ".host");
    if (h.contains("adam_op_shares")) {
        const json& a = h.at("adam_op_shares");
        const std::string where = root + ".host.adam_op_shares";
        if (!a.is_array() || a.size() != c.adam_op_shares.size())
            roofplan::detail::fail(where, ": expected an array of 8 shares (AdamW's per-tensor Python before weight decay, "
                                   "first moment, second moment scale, second moment add, square root, bias correction, "
                                   "epsilon, update)");
        for (std::size_t i = 0; i < c.adam_op_shares.size(); ++i)
            if (!a[i].is_number()) roofplan::detail::fail(where, "[", static_cast<std::int64_t>(i), "]: expected a number, got ", shorten(a[i]));
            else c.adam_op_shares[i] = a[i].get<double>();
    }
    if (h.contains("source") && h.at("source").is_string())
        c.source = FixedString<63>(std::string_view(h.at("source").get_ref<const std::string&>()).substr(0, 63));
}

/// An efficiency profile from JSON (schema "roofplan-profile/1"); missing fields keep the device's defaults.
///   {"schema": "roofplan-profile/1", "device": "h200", "source": "...",
///    "gemm": {"fp32": 0.9, "bf16_tensor": 0.72, ...}, "conv": 0.9, "conv_by_class": {"bf16_tensor": 1.02, ...},
///    "vector": 0.5, "memory": 0.87,
///    "launch_s": 4e-6, "power_w": 650, ...}
inline EfficiencyProfile profile_from_json(const json& j, const Device& device, const std::string& file) {
    if (!j.is_object()) roofplan::detail::fail(file, ": expected a profile object {\"schema\": \"roofplan-profile/1\", ...}, got ", shorten(j));
    reject_unknown_fields(j, file + ": ", detail::profile_fields);
    if (j.contains("schema") && j.at("schema") != "roofplan-profile/1")
        roofplan::detail::fail(file, ": .schema must be \"roofplan-profile/1\"");
    std::string transferred;  // a profile fitted on another GPU applies as fractions of this GPU's own peaks
    if (j.contains("device")) {
        if (!j.at("device").is_string()) roofplan::detail::fail(file, ": .device: expected a string");
        const std::string for_device = j.at("device").get<std::string>();
        if (!device.answers_to(for_device)) transferred = " (fitted on " + for_device + ", applied to " + std::string(device.id.view()) + ")";
    }
    EfficiencyProfile p = default_profile(device);
    p.source = FixedString<127>(std::string_view(file + transferred).substr(0, 127));
    const std::string root = file + ": ";
    const auto opt = [&](std::string_view key, double& target) {
        if (j.contains(std::string(key))) target = detail::number(j, key, root);
    };
    if (j.contains("gemm")) {
        const json& g = j.at("gemm");
        if (!g.is_object()) roofplan::detail::fail(root, ".gemm: expected an object of math class -> fraction");
        for (const auto& [key, value] : g.items()) {
            bool known = false;
            for (MathClass m : all_math_classes)
                if (to_string(m) == key) {
                    p.gemm[static_cast<std::size_t>(m)] = detail::number(g, key, root + ".gemm");
                    known = true;
                }
            if (!known)
                roofplan::detail::fail(root, ".gemm.", key, ": unknown math class; accepted: fp64, fp32, tf32_tensor, "
                                       "fp16_tensor_fp16_acc, fp16_tensor_fp32_acc, bf16_tensor, int8_tensor, int8_dp4a");
        }
    }
    opt("conv", p.conv);
    if (j.contains("conv_by_class")) {
        const json& c = j.at("conv_by_class");
        if (!c.is_object()) roofplan::detail::fail(root, ".conv_by_class: expected an object of math class -> factor");
        for (const auto& [key, value] : c.items()) {
            bool known = false;
            for (MathClass m : all_math_classes)
                if (to_string(m) == key) {
                    p.conv_by_class[static_cast<std::size_t>(m)] = detail::number(c, key, root + ".conv_by_class");
                    known = true;
                }
            if (!known)
                roofplan::detail::fail(root, ".conv_by_class.", key, ": unknown math class; accepted: fp64, fp32, "
                                       "tf32_tensor, fp16_tensor_fp16_acc, fp16_tensor_fp32_acc, bf16_tensor, "
                                       "int8_tensor, int8_dp4a");
        }
    }
    opt("vector", p.vector);
    opt("memory", p.memory);
    opt("launch_s", p.launch_s);
    opt("kernel_gap_s", p.kernel_gap_s);
    opt("graph_kernel_gap_s", p.graph_kernel_gap_s);
    opt("small_tile_efficiency", p.small_tile_efficiency);
    opt("unaligned_even", p.unaligned_even);
    opt("unaligned_odd", p.unaligned_odd);
    opt("power_w", p.power_w);
    kernel_classes_from_json(j, root, p);
    measured_conv_from_json(j, root, p);
    measured_gemm_from_json(j, root, p);
    measured_on_from_json(j, device, root, p);
    for (auto [key, target] : {std::pair<std::string_view, int*>{"large_tile_m", &p.large_tile_m},
                               {"large_tile_n", &p.large_tile_n},
                               {"small_tile_m", &p.small_tile_m},
                               {"small_tile_n", &p.small_tile_n},
                               {"split_k_min", &p.split_k_min}})
        if (j.contains(std::string(key))) *target = detail::integer(j, key, root);
    validate(p, file);
    return p;
}

inline EfficiencyProfile load_profile(const std::string& file, const Device& device) {
    return profile_from_json(parse(read_text(file), file), device, file);
}

inline json to_json(const EfficiencyProfile& p) {
    json gemm;
    for (MathClass m : all_math_classes) gemm[std::string(to_string(m))] = p.gemm_efficiency(m);
    json conv_by_class = json::object();
    for (MathClass m : all_math_classes)
        if (p.conv_by_class[static_cast<std::size_t>(m)] > 0)
            conv_by_class[std::string(to_string(m))] = p.conv_by_class[static_cast<std::size_t>(m)];
    json out = {{"schema", "roofplan-profile/1"}, {"source", p.source.view()}, {"gemm", gemm},
            {"conv", p.conv}, {"conv_by_class", conv_by_class}, {"vector", p.vector}, {"memory", p.memory}, {"launch_s", p.launch_s},
            {"kernel_gap_s", p.kernel_gap_s}, {"graph_kernel_gap_s", p.graph_kernel_gap_s},
            {"large_tile_m", p.large_tile_m}, {"large_tile_n", p.large_tile_n}, {"small_tile_m", p.small_tile_m},
            {"small_tile_n", p.small_tile_n}, {"small_tile_efficiency", p.small_tile_efficiency},
            {"split_k_min", p.split_k_min}, {"power_w", p.power_w}};
    // Written only when fitted (a generation's default table is the default profile's: a file needs not repeat it).
    if (!p.measured_conv.empty() && !p.measured_conv_source.view().starts_with("default"))
        out["measured_conv"] = measured_conv_json(p);
    if (!p.measured_gemm.empty() && !p.measured_gemm_source.view().starts_with("default"))
        out["measured_gemm"] = measured_gemm_json(p);
    if (p.kernel_classes_calibrated()) {  // written only when fitted, so GEMM-only profiles keep their schema
        json classes = json::object();
        for (KernelClass c : all_kernel_classes) {
            const KernelClassCost& k = p.kernel_class[c];
            if (k.memory > 0 || k.fixed_s >= 0) {
                json& entry = classes[std::string(to_string(c))] = {{"memory", k.memory}, {"fixed_s", k.fixed_s}};
                if (k.sm_elements_per_cycle > 0) entry["sm_elements_per_cycle"] = k.sm_elements_per_cycle;
            }
        }
        out["kernel_class"] = classes;
        out["attention"] = {{"forward", p.attention.forward}, {"backward", p.attention.backward},
                            {"simt_forward", p.attention.simt_forward}, {"simt_backward", p.attention.simt_backward},
                            {"dropout_forward", p.attention.dropout_forward},
                            {"dropout_backward", p.attention.dropout_backward},
                            {"dropout_simt_forward", p.attention.dropout_simt_forward},
                            {"dropout_simt_backward", p.attention.dropout_simt_backward}};
        out["unaligned_even"] = p.unaligned_even;
        out["unaligned_odd"] = p.unaligned_odd;
    }
    // The host costs: with the classes, or alone when only they were fitted (a host_speed report).
    if (p.kernel_classes_calibrated() || !p.host.source.view().starts_with("default")) {
        const HostCosts& h = p.host;
        json host = json::object();
        for (const HostCostField& f : host_cost_fields) host[std::string(f.name)] = h.*f.member;
        json speed = json::object();
        for (HostSpeedClass cls : enum_values<HostSpeedClass>())
            speed[std::string(to_string(cls))] = h.speed_sensitivity[static_cast<std::size_t>(cls)];
        host["speed_sensitivity"] = std::move(speed);
        host["dp_lock_share"] = h.dp_lock_share;
        host["adam_op_shares"] = h.adam_op_shares;
        host["source"] = h.source.view();
        out["host"] = std::move(host);
    }
    return out;
}

}  // namespace roofplan::io

// ---- systems -----------------------------------------------------------------------------------------------
namespace roofplan::io {

inline LinkKind parse_link_kind(const std::string& name, const std::string& path) {
    for (LinkKind k : all_link_kinds)
        if (to_string(k) == name) return k;
    roofplan::detail::fail(path, ": unknown link kind '", name, "'; accepted: nvlink, nvswitch, pcie, socket-bus, network");
}

/// A system as JSON (schema "roofplan-systems/1").
inline json to_json(const System& s) {
    json links = json::array();
    for (int i = 0; i < s.gpus_per_node; ++i) {
        json row = json::array();
        for (int j = 0; j < s.gpus_per_node; ++j) row.push_back(s.nvlinks(i, j));
        links.push_back(row);
    }
    json host = json::array();
    for (const HostLink& h : s.host) host.push_back({{"kind", to_string(h.kind)}, {"gb_s", h.gb_s}});
    return {{"id", s.id.view()},
            {"name", s.name.view()},
            {"device", s.device.view()},
            {"gpus_per_node", s.gpus_per_node},
            {"max_nodes", s.max_nodes},
            {"sockets", s.socket},
            {"nvlinks", links},
            {"nvlink_gb_s_per_link", s.nvlink_gb_s},
            {"direct_kind", to_string(s.direct_kind)},
            {"switch_gb_s", s.switch_gb_s},
            {"host", host},
            {"socket_bus_gb_s", s.socket_bus_gb_s},
            {"network",
             {{"name", s.network.name.view()},
              {"gb_s_multi_flow", s.network.gb_s_multi_flow},
              {"gb_s_single_flow", s.network.gb_s_single_flow},
              {"latency_s", s.network.latency_s}}},
            {"host_cpu",
             {{"name", s.cpu.name.view()},
              {"sockets", s.cpu.sockets},
              {"cores_per_socket", s.cpu.cores_per_socket},
              {"base_ghz", s.cpu.base_ghz},
              {"source", s.cpu_source.view()}}},
            {"source", s.source.view()}};
}

/// Parses one system; errors name the JSON path.
inline System system_from_json(const json& j, const std::string& path = "system") {
    using namespace detail;
    if (!j.is_object()) roofplan::detail::fail(path, ": expected a system object, got ", shorten(j));
    reject_unknown_fields(j, path,
                          {"id", "name", "device", "gpus_per_node", "max_nodes", "sockets", "nvlinks",
                           "nvlink_gb_s_per_link", "direct_kind", "switch_gb_s", "host", "socket_bus_gb_s", "network",
                           "host_cpu", "source"});
    System s;
    s.id = text<31>(j, "id", path);
    s.name = text<127>(j, "name", path);
    s.device = text<31>(j, "device", path);
    s.gpus_per_node = integer(j, "gpus_per_node", path);
    s.max_nodes = integer(j, "max_nodes", path);
    if (s.gpus_per_node < 1 || s.gpus_per_node > 64) roofplan::detail::fail(path_of(path, "gpus_per_node"), ": must be in [1, 64]");
    if (s.max_nodes < 1 || s.max_nodes > 100'000) roofplan::detail::fail(path_of(path, "max_nodes"), ": must be in [1, 100000]");
    const auto n = static_cast<std::size_t>(s.gpus_per_node);
    const json& sockets = field(j, "sockets", path);
    if (!sockets.is_array() || sockets.size() != n)
        roofplan::detail::fail(path_of(path, "sockets"), ": expected an array of ", static_cast<std::int64_t>(n), " socket numbers");
    for (const json& v : sockets) {
        if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 7)
            roofplan::detail::fail(path_of(path, "sockets"), ": socket numbers are integers in [0, 7]");
        s.socket.push_back(v.get<int>());
    }
    const json& links = field(j, "nvlinks", path);
    if (!links.is_array() || links.size() != n)
        roofplan::detail::fail(path_of(path, "nvlinks"), ": expected a ", static_cast<std::int64_t>(n), "x",
                               static_cast<std::int64_t>(n), " matrix of link counts");
    s.nvlinks = LinkMatrix(s.gpus_per_node);
    for (std::size_t i = 0; i < n; ++i) {
        if (!links[i].is_array() || links[i].size() != n)
            roofplan::detail::fail(path_of(path, "nvlinks"), "[", static_cast<std::int64_t>(i), "]: expected ",
                                   static_cast<std::int64_t>(n), " link counts");
        for (std::size_t k = 0; k < n; ++k) {
            if (!links[i][k].is_number_integer() || links[i][k].get<std::int64_t>() < 0 ||
                links[i][k].get<std::int64_t>() > 64)
                roofplan::detail::fail(path_of(path, "nvlinks"), "[", static_cast<std::int64_t>(i), "][",
                                       static_cast<std::int64_t>(k), "]: expected a link count in [0, 64]");
            s.nvlinks(static_cast<int>(i), static_cast<int>(k)) = links[i][k].get<int>();
        }
    }
    s.nvlink_gb_s = number(j, "nvlink_gb_s_per_link", path);
    s.direct_kind = parse_link_kind(std::string(text<15>(j, "direct_kind", path).view()), path_of(path, "direct_kind"));
    s.switch_gb_s = number(j, "switch_gb_s", path);
    const json& host = field(j, "host", path);
    if (!host.is_array() || host.size() != n)
        roofplan::detail::fail(path_of(path, "host"), ": expected one {\"kind\", \"gb_s\"} per GPU");
    for (std::size_t i = 0; i < n; ++i) {
        const std::string hp = path_of(path, "host") + "[" + std::to_string(i) + "]";
        if (!host[i].is_object()) roofplan::detail::fail(hp, ": expected {\"kind\", \"gb_s\"}, got ", shorten(host[i]));
        reject_unknown_fields(host[i], hp, {"kind", "gb_s"});
        s.host.push_back({parse_link_kind(std::string(text<15>(host[i], "kind", hp).view()), hp + ".kind"),
                          number(host[i], "gb_s", hp)});
    }
    s.socket_bus_gb_s = number(j, "socket_bus_gb_s", path);
    const json& net = field(j, "network", path);
    const std::string np = path_of(path, "network");
    reject_unknown_fields(net, np, {"name", "gb_s_multi_flow", "gb_s_single_flow", "latency_s"});
    s.network = {text<63>(net, "name", np), number(net, "gb_s_multi_flow", np), number(net, "gb_s_single_flow", np),
                 number(net, "latency_s", np)};
    if (j.contains("host_cpu")) {  // optional: a system without it does not describe its CPUs
        const json& cpu = j.at("host_cpu");
        const std::string cp = path_of(path, "host_cpu");
        if (!cpu.is_object()) roofplan::detail::fail(cp, ": expected {\"name\", \"sockets\", \"cores_per_socket\", \"base_ghz\", \"source\"}");
        reject_unknown_fields(cpu, cp, {"name", "sockets", "cores_per_socket", "base_ghz", "source"});
        s.cpu.name = text<63>(cpu, "name", cp);
        s.cpu.sockets = integer(cpu, "sockets", cp);
        s.cpu.cores_per_socket = integer(cpu, "cores_per_socket", cp);
        s.cpu.base_ghz = number(cpu, "base_ghz", cp);
        s.cpu_source = text<127>(cpu, "source", cp);
    }
    s.source = text<255>(j, "source", path);
    for (double v : {s.nvlink_gb_s, s.switch_gb_s, s.socket_bus_gb_s, s.network.gb_s_multi_flow,
                     s.network.gb_s_single_flow, s.network.latency_s})
        if (!(v >= 0) || v > 1e6) roofplan::detail::fail(path, ": bandwidths and latencies must be >= 0 and finite");
    s.validate();
    return s;
}

/// Systems from a document: {"schema": "roofplan-systems/1", "systems": [...]} or one system object.  Ids are
/// unique within a document.
inline std::vector<System> systems_from_json(const json& j, const std::string& file) {
    std::vector<System> out;
    if (j.is_object() && j.contains("systems")) {
        reject_unknown_fields(j, file + ": ", {"schema", "description", "systems"});
        if (j.contains("schema") && j.at("schema") != "roofplan-systems/1")
            roofplan::detail::fail(file, ": .schema: expected \"roofplan-systems/1\", got ", shorten(j.at("schema")));
        const json& list = j.at("systems");
        if (!list.is_array() || list.empty()) roofplan::detail::fail(file, ": .systems must be a non-empty array");
        if (list.size() > 10'000) roofplan::detail::fail(file, ": .systems: more than 10000 systems (the limit of a system file)");
        std::unordered_map<std::string, std::size_t> seen;
        for (std::size_t i = 0; i < list.size(); ++i) {
            out.push_back(system_from_json(list[i], file + ": .systems[" + std::to_string(i) + "]"));
            const auto [it, fresh] = seen.emplace(std::string(out.back().id.view()), i);
            if (!fresh)
                roofplan::detail::fail(file, ": .systems[", static_cast<std::int64_t>(i), "]: system id '",
                                       out.back().id.view(), "' is given twice (first at .systems[",
                                       static_cast<std::int64_t>(it->second), "]); ids must be unique");
        }
    } else if (j.is_object()) {
        out.push_back(system_from_json(j, file + ": system"));
    } else {
        roofplan::detail::fail(file, ": expected {\"systems\": [...]} or a system object");
    }
    return out;
}

/// The built-in systems plus those of a file (an id of a built-in system: replaces it).
inline std::vector<System> load_systems(const std::string& file) {
    std::vector<System> all = builtin_systems();
    std::unordered_map<std::string, std::size_t> by_id;
    for (std::size_t i = 0; i < all.size(); ++i) by_id.emplace(std::string(all[i].id.view()), i);
    for (const System& s : systems_from_json(parse(read_text(file), file), file)) {
        const auto it = by_id.find(std::string(s.id.view()));
        if (it != by_id.end()) all[it->second] = s;
        else {
            by_id.emplace(std::string(s.id.view()), all.size());
            all.push_back(s);
        }
    }
    return all;
}

}  // namespace roofplan::io

// ---- link parameters and calibrations (the "links", "fit" and "sources" of a profile file) ----------------------
namespace roofplan::io {

inline json to_json(const LinkParameters& lp) {
    json kinds;
    for (LinkKind k : all_link_kinds)
        kinds[std::string(to_string(k))] = {{"latency_s", lp.latency(k)}, {"efficiency", lp.eff(k)}};
    json factors;
    for (Collective c : all_collectives) factors[std::string(to_string(c))] = lp.collective_factor[c];
    json by_ranks = json::object();
    for (Collective c : all_collectives)
        for (int n = 2; n <= LinkParameters::kMaxRankFactor; ++n)
            if (lp.rank_factor[c][static_cast<std::size_t>(n)] > 0)
                by_ranks[std::string(to_string(c))][std::to_string(n)] = lp.rank_factor[c][static_cast<std::size_t>(n)];
    return {{"base_s", lp.base_s}, {"kinds", kinds}, {"collective_factor", factors},
            {"collective_factor_by_ranks", by_ranks}};
}

namespace detail {

/// "links.kinds": per link kind {"latency_s", "efficiency"}.
inline void read_link_kinds(const json& kinds, const std::string& where, LinkParameters& lp) {
    if (!kinds.is_object()) roofplan::detail::fail(where, ".kinds: expected an object of link kind -> parameters");
    for (const auto& [name, v] : kinds.items()) {
        const LinkKind k = parse_link_kind(name, where + ".kinds");
        const std::string p = where + ".kinds." + name;
        reject_unknown_fields(v, p, {"latency_s", "efficiency"});
        lp.latency_s[k] = number(v, "latency_s", p);
        lp.efficiency[k] = number(v, "efficiency", p);
        if (!(lp.efficiency[k] > 0 && lp.efficiency[k] <= 1)) roofplan::detail::fail(p, ".efficiency must be in (0, 1]");
        if (!(lp.latency_s[k] >= 0 && lp.latency_s[k] < 1)) roofplan::detail::fail(p, ".latency_s must be in [0, 1) seconds");
    }
}

/// "links.collective_factor_by_ranks": collective -> {rank count: factor}.
inline void read_rank_factors(const json& by, const std::string& at, LinkParameters& lp) {
    if (!by.is_object()) roofplan::detail::fail(at, ": expected an object of collective -> {ranks: factor}");
    for (const auto& [name, per] : by.items()) {
        const Collective c = parse_collective(name);
        if (!per.is_object()) roofplan::detail::fail(at, ".", name, ": expected an object of rank count -> factor");
        for (const auto& [key, value] : per.items()) {
            int n = 0;
            const auto [ptr, ec] = std::from_chars(key.data(), key.data() + key.size(), n);
            if (ec != std::errc{} || ptr != key.data() + key.size() || n < 2 || n > LinkParameters::kMaxRankFactor)
                roofplan::detail::fail(at, ".", name, ".", key, ": a rank count must be an integer in [2, ",
                                       LinkParameters::kMaxRankFactor, "]");
            const double f = number(per, key, at + "." + name);
            if (!(f > 0 && f <= 1)) roofplan::detail::fail(at, ".", name, ".", key, " must be in (0, 1]");
            lp.rank_factor[c][static_cast<std::size_t>(n)] = f;
        }
    }
}

}  // namespace detail

/// Collective parameters from a profile's "links" section (defaults for whatever it omits).
inline LinkParameters links_from_json(const json& profile, const std::string& file) {
    LinkParameters lp;
    if (!profile.is_object())
        roofplan::detail::fail(file, ": expected a profile object {\"schema\": \"roofplan-profile/1\", ...}, got ",
                               shorten(profile));
    reject_unknown_fields(profile, file + ": ", detail::profile_fields);
    if (!profile.contains("links")) return lp;
    const json& l = profile.at("links");
    const std::string where = file + ": .links";
    if (!l.is_object()) roofplan::detail::fail(where, ": expected an object, got ", shorten(l));
    reject_unknown_fields(l, where, {"base_s", "kinds", "collective_factor", "collective_factor_by_ranks"});
    if (l.contains("base_s")) lp.base_s = detail::number(l, "base_s", where);
    if (l.contains("kinds")) detail::read_link_kinds(l.at("kinds"), where, lp);
    if (l.contains("collective_factor") && !l.at("collective_factor").is_object())
        roofplan::detail::fail(where, ".collective_factor: expected an object of collective -> factor");
    if (l.contains("collective_factor"))
        for (const auto& [name, v] : l.at("collective_factor").items()) {
            const Collective c = parse_collective(name);
            const double f = detail::number(l.at("collective_factor"), name, where + ".collective_factor");
            if (!(f > 0 && f <= 1)) roofplan::detail::fail(where, ".collective_factor.", name, " must be in (0, 1]");
            lp.collective_factor[c] = f;
        }
    if (l.contains("collective_factor_by_ranks"))
        detail::read_rank_factors(l.at("collective_factor_by_ranks"), where + ".collective_factor_by_ranks", lp);
    if (!(lp.base_s >= 0 && lp.base_s < 1)) roofplan::detail::fail(where, ".base_s must be in [0, 1) seconds");
    return lp;
}

/// A calibrated profile as a roofplan-profile/1 document, with the device, the sources and the fit quality.
inline json calibration_json(const calibration::Calibration& c) {
    json j = to_json(c.profile);
    j["device"] = c.device_id;
    j["sources"] = c.sources;
    json q = json::array();
    for (const calibration::FitQuality& f : c.quality)
        q.push_back({{"what", f.what}, {"samples", f.samples}, {"value", f.value},
                     {"median_rel_error", f.median_rel_error}, {"worst_rel_error", f.worst_rel_error},
                     {"fixed_s", f.fixed_s}});
    j["fit"] = q;
    j["note"] = "fitted to micro-benchmarks (roofplan-gemm, roofplan-conv, roofplan-bandwidth) only; never to "
                "end-to-end results";
    return j;
}

}  // namespace roofplan::io

// roofplan/io/suite.hpp — suite reports of the runner (`roofplan-bench`): one file holding the reports of several
// micro-benchmark programs, each in its own program's schema, so every consumer reads them through one code path.
//
//   {"tool": "roofplan-bench", "schema_version": 1, "suite": "host", "provenance": {...},
//    "device": {... a catalog device, optional: the host CPU as a device ...},
//    "reports": [{"tool": "roofplan-gemm", "provenance": {...}, "results": [...]}, {"tool": "roofplan-bandwidth", ...}]}
//
// `expand_reports` turns any report (a suite or a single program's) into the list of single-program reports.
#pragma once

#include <roofplan/device/device.hpp>
#include <roofplan/io/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace roofplan::io {

/// Whether `report` is a runner suite report.
inline bool is_suite_report(const json& report) {
    return report.is_object() && report.value("tool", std::string()) == "roofplan-bench";
}

/// The single-program reports inside `report` (itself when it is not a suite), each named "file#tool".
/// Suite sub-reports without a provenance of their own inherit the suite's.
inline std::vector<std::pair<std::string, json>> expand_reports(const std::string& file, const json& report) {
    std::vector<std::pair<std::string, json>> out;
    if (!is_suite_report(report)) {
        out.emplace_back(file, report);
        return out;
    }
    if (!report.contains("reports") || !report.at("reports").is_array())
        roofplan::detail::fail(file, ": a roofplan-bench report needs a .reports array");
    const json& list = report.at("reports");
    for (std::size_t i = 0; i < list.size(); ++i) {
        json sub = list[i];
        if (!sub.is_object() || !sub.contains("tool") || !sub.at("tool").is_string())
            roofplan::detail::fail(file, ": .reports[", static_cast<std::int64_t>(i), "] needs a .tool string");
        if (!sub.contains("provenance") && report.contains("provenance")) sub["provenance"] = report.at("provenance");
        out.emplace_back(file + "#" + sub.at("tool").get<std::string>(), std::move(sub));
    }
    return out;
}

/// The device a suite report describes itself as (the host suite's CPU), if any.
inline std::optional<Device> suite_device(const std::string& file, const json& report) {
    if (!is_suite_report(report) || !report.contains("device")) return std::nullopt;
    return device_from_json(report.at("device"), file + ": .device");
}

}  // namespace roofplan::io

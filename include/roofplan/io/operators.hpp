// roofplan/io/operators.hpp — reads a roofplan-ops report (validation/ops/op_bench.py; schema in
// docs/report-schemas.md) into the calibration's typed records.
#pragma once

#include <roofplan/io/json.hpp>
#include <roofplan/measurement/samples.hpp>

#include <string>
#include <vector>

namespace roofplan::io {

/// The operator and host cases of a roofplan-ops report (only verified operator cases count) as measurements.
inline Measurements operator_report(const json& report, const std::string& file) {
    if (!report.is_object() || detail::string_or(report, "tool", file + ": ", "") != "roofplan-ops" || !report.contains("cases") ||
        !report.at("cases").is_array())
        roofplan::detail::fail(file, ": not a roofplan-ops report (needs .tool = roofplan-ops and a .cases array)");
    Measurements out;
    // Back-to-back timing (method.inner "auto") measures what a kernel costs inside a stream of kernels; one
    // call between two events adds the events' own cost (about 3.5 us): only the former informs fixed costs.
    const bool back_to_back = report.contains("method") && report.at("method").is_object() &&
                              report.at("method").contains("inner") && report.at("method").at("inner") == "auto";
    const json& cases = report.at("cases");
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const json& c = cases[i];
        const std::string where = file + ": .cases[" + std::to_string(i) + "]";
        if (!c.is_object() || !detail::flag(c, "verified", where)) continue;
        OperatorSample s;
        for (auto [key, target] : {std::pair<const char*, std::string*>{"op", &s.op}, {"pass", &s.pass}, {"dtype", &s.dtype},
                                   {"layout", &s.layout}, {"bn_backend", &s.backend}})
            if (c.contains(key) && c.at(key).is_string()) *target = c.at(key).get<std::string>();
        s.bytes = detail::number(c, "bytes", where);
        s.seconds = detail::number(c, "median_s", where);
        s.kernels = c.contains("kernel_count") ? detail::number(c, "kernel_count", where) : 1.0;
        if (c.contains("numel") && c.at("numel").is_number()) s.numel = c.at("numel").get<double>();
        if (c.contains("flops") && c.at("flops").is_number()) s.flops = c.at("flops").get<double>();
        if (c.contains("class") && c.at("class").is_string() && c.contains("class_time_us") && c.at("class_time_us").is_object()) {
            const json& by_class = c.at("class_time_us");
            const std::string& kind = c.at("class").get_ref<const std::string&>();
            if (by_class.contains(kind) && by_class.at(kind).is_number())
                s.class_seconds = detail::number(by_class, kind, where + ".class_time_us") * 1e-6;
        }
        if ((s.op == "gemm" || s.op == "sdpa") && c.contains("shape") && c.at("shape").is_array())
            for (const json& d : c.at("shape"))
                if (d.is_number()) s.shape.push_back(d.get<double>());
        if (s.op.ends_with("_step") && c.contains("shape") && c.at("shape").is_array() && !c.at("shape").empty() &&
            c.at("shape")[0].is_number())
            s.numel = c.at("shape")[0].get<double>();  // optimizers: [parameters, tensors]
        s.back_to_back = back_to_back;
        out.operators.push_back(s);
    }
    if (report.contains("host") && report.at("host").is_array())
        for (const json& h : report.at("host")) {
            if (!h.is_object() || !h.contains("case") || !h.contains("host_us_per_op")) continue;
            out.host.push_back({detail::string_field(h, "case", file + ": .host[]"),
                                detail::number(h, "host_us_per_op", file + ": .host") * 1e-6,
                                h.contains("kernels_per_op") && h.at("kernels_per_op").is_number()
                                    ? h.at("kernels_per_op").get<double>() : 0.0});
        }
    // The autocast pairs, the compiled chains and the scaler pairs (op_bench.py autocast_host, compiled_host,
    // scaler_host): the same records, the compiled ones per call of the chain, the scaler's what it adds to a step.
    for (const auto& [section, time_key, kernels_key] :
         {std::array<const char*, 3>{"autocast_host", "host_us_per_op", "kernels_per_op"},
          std::array<const char*, 3>{"compiled_host", "host_us_per_call", "kernels_per_call"},
          std::array<const char*, 3>{"scaler_host", "host_us_per_op", "kernels_per_op"}}) {
        if (!report.contains(section) || !report.at(section).is_array()) continue;
        for (const json& h : report.at(section)) {
            if (!h.is_object() || !h.contains("case") || !h.at("case").is_string() || !h.contains(time_key)) continue;
            if (h.contains("verified") && !detail::flag(h, "verified", file + ": ." + section + "[]")) continue;
            out.host.push_back({h.at("case").get<std::string>(),
                                detail::number(h, time_key, file + ": ." + section) * 1e-6,
                                h.contains(kernels_key) ? detail::number(h, kernels_key, file + ": ." + section) : 0.0});
        }
    }
    out.sources.push_back(file + " (roofplan-ops, " + detail::report_date(report) + ")");
    return out;
}

}  // namespace roofplan::io

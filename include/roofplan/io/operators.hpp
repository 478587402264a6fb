// roofplan/io/operators.hpp — reads a roofplan-ops report (validation/ops/op_bench.py; schema in
// docs/report-schemas.md) into the calibration's typed records.
#pragma once

#include <roofplan/io/json.hpp>
#include <roofplan/measurement/samples.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace roofplan::io {

/// block_host's fast-state rounds (fast_probe_factor, measurement/samples.hpp): at least this many.
inline constexpr std::size_t min_fast_rounds = 10;

/// Element `i` of a JSON array of times: a non-negative finite number, else an error naming it.
inline double element(const json& a, std::size_t i, const std::string& where) {
    if (!a.is_array() || i >= a.size() || !a[i].is_number() || !std::isfinite(a[i].get<double>()) || a[i].get<double>() < 0)
        roofplan::detail::fail(where, "[", static_cast<std::int64_t>(i), "]: expected a non-negative finite number");
    return a[i].get<double>();
}

/// op_bench.py `host_speed`: its rounds as they are (the fit picks the host's states, calibration/operators.hpp).
inline void host_speed_rounds(const json& section, const std::string& file, const std::string& where,
                              std::vector<HostSpeedRound>& out) {
    if (!section.is_object() || !section.contains("rounds") || !section.at("rounds").is_array())
        roofplan::detail::fail(where, ": expected an object with a .rounds array");
    const json& rounds = section.at("rounds");
    for (std::size_t i = 0; i < rounds.size(); ++i) {
        const std::string at = where + ".rounds[" + std::to_string(i) + "]";
        const json& r = rounds[i];
        if (!r.is_object() || !r.contains("probe_us") || !r.at("probe_us").is_array() || r.at("probe_us").size() != 2)
            roofplan::detail::fail(at, ": expected .probe_us, two probe times in microseconds");
        if (!r.contains("host_us_per_op") || !r.at("host_us_per_op").is_object())
            roofplan::detail::fail(at, ": expected .host_us_per_op, an object of case -> microseconds per operation");
        const auto positive = [&](const json& v, const std::string& field) {
            if (!v.is_number() || !std::isfinite(v.get<double>()) || !(v.get<double>() > 0))
                roofplan::detail::fail(field, ": expected a positive finite time in microseconds");
            return v.get<double>() * 1e-6;
        };
        HostSpeedRound round;
        round.source = file;
        for (std::size_t p = 0; p < 2; ++p)
            round.probe_s[p] = positive(r.at("probe_us")[p], at + ".probe_us[" + std::to_string(p) + "]");
        for (const auto& [name, value] : r.at("host_us_per_op").items())
            round.per_op_s.emplace_back(name, positive(value, at + ".host_us_per_op." + name));
        out.push_back(std::move(round));
    }
}

/// op_bench.py `block_host`: per case, the median host time of the rounds in the host's fast state, as host
/// samples named "block: <case>" (kernels per call from the section's profile).
inline void block_host_samples(const json& section, const std::string& where, std::vector<HostSample>& out) {
    if (!section.is_object() || !section.contains("cases") || !section.at("cases").is_array() ||
        !section.contains("rounds") || !section.at("rounds").is_array())
        roofplan::detail::fail(where, ": expected an object with .cases and .rounds arrays");
    const json& rounds = section.at("rounds");
    std::vector<double> probes;
    for (std::size_t i = 0; i < rounds.size(); ++i) {
        const std::string at = where + ".rounds[" + std::to_string(i) + "]";
        const json& r = rounds[i];
        if (!r.is_object() || !r.contains("probe_us") || !r.at("probe_us").is_array() || r.at("probe_us").size() != 2)
            roofplan::detail::fail(at, ": expected .probe_us, two probe times in microseconds");
        probes.push_back(std::max(element(r.at("probe_us"), 0, at + ".probe_us"),
                                  element(r.at("probe_us"), 1, at + ".probe_us")));
    }
    if (probes.empty()) roofplan::detail::fail(where, ": no rounds");
    const double limit = fast_probe_factor * probe_floor(probes);
    std::vector<std::size_t> fast;
    for (std::size_t i = 0; i < probes.size(); ++i)
        if (probes[i] <= limit) fast.push_back(i);
    if (fast.size() < min_fast_rounds)
        roofplan::detail::fail(where, ": ", static_cast<std::int64_t>(fast.size()), " rounds in the host's fast state (both probes under ", std::to_string(limit).substr(0, 5),
                               " us), at least ", static_cast<std::int64_t>(min_fast_rounds), " needed: run the group longer");
    const json* kernels = section.contains("kernels") && section.at("kernels").is_object() ? &section.at("kernels") : nullptr;
    for (const json& c : section.at("cases")) {
        if (!c.is_string()) roofplan::detail::fail(where, ".cases: expected case names");
        const std::string& name = c.get_ref<const std::string&>();
        std::vector<double> times;
        for (std::size_t i : fast) {
            const std::string at = where + ".rounds[" + std::to_string(i) + "].host_wall_us";
            const json& r = rounds[i];
            if (!r.contains("host_wall_us") || !r.at("host_wall_us").is_object() || !r.at("host_wall_us").contains(name))
                roofplan::detail::fail(at, ": no time for case '", name, "'");
            times.push_back(element(r.at("host_wall_us").at(name), 0, at + "." + name) * 1e-6);
        }
        std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
        double per_call = 0;
        if (kernels && kernels->contains(name) && kernels->at(name).is_object() &&
            kernels->at(name).contains("kernels_per_call") && kernels->at(name).at("kernels_per_call").is_number())
            per_call = kernels->at(name).at("kernels_per_call").get<double>();
        out.push_back({"block: " + name, times[times.size() / 2], per_call});
    }
}

/// op_bench.py `adam_split_host`: per tensor count, the host samples "adamw split: N tensors (step)" (the whole
/// instrumented step) and "adamw split: N tensors (op K)" for K = 1-8, AdamW's foreach operations on the GPU in
/// order (HostCosts::adam_op_shares): the host time from the end of the previous one's call (the step's start for
/// the first) to the end of its own call — the Python before it, calls that launch nothing (the CPU step counts)
/// and its own call; the last also takes the time after it.  A record whose GPU calls are not AdamW's eight
/// (the fifth `_foreach_sqrt`) is an error.
inline void adam_split_samples(const json& section, const std::string& where, std::vector<HostSample>& out) {
    if (!section.is_array()) roofplan::detail::fail(where, ": expected an array of cases");
    for (std::size_t r = 0; r < section.size(); ++r) {
        const std::string at = where + "[" + std::to_string(r) + "]";
        const json& c = section[r];
        if (!c.is_object()) roofplan::detail::fail(at, ": expected an object");
        if (c.contains("skipped") || c.contains("error")) continue;
        for (const char* key : {"foreach_calls", "gap_us", "call_us"})
            if (!c.contains(key) || !c.at(key).is_array()) roofplan::detail::fail(at, ": expected the array .", key);
        const json& calls = c.at("foreach_calls");
        const json& gaps = c.at("gap_us");
        const json& inside = c.at("call_us");
        if (inside.size() != calls.size() || gaps.size() != calls.size() + 1)
            roofplan::detail::fail(at, ": .call_us needs one time per foreach call and .gap_us one more (", static_cast<std::int64_t>(calls.size()),
                                   " calls, ", static_cast<std::int64_t>(inside.size()), " and ", static_cast<std::int64_t>(gaps.size()), " times)");
        std::vector<std::size_t> gpu;  // the calls that launch: those not on the CPU's tensors
        for (std::size_t i = 0; i < calls.size(); ++i) {
            if (!calls[i].is_string()) roofplan::detail::fail(at, ".foreach_calls[", static_cast<std::int64_t>(i), "]: expected a string");
            if (!calls[i].get_ref<const std::string&>().ends_with("(cpu)")) gpu.push_back(i);
        }
        if (gpu.size() != 8 || !calls[gpu[4]].get_ref<const std::string&>().starts_with("_foreach_sqrt"))
            roofplan::detail::fail(at, ".foreach_calls: expected AdamW's 8 foreach operations on the GPU, the fifth _foreach_sqrt (found ",
                                   static_cast<std::int64_t>(gpu.size()), " on the GPU)");
        const double tensors = detail::number(c, "tensors", at);
        if (!(tensors >= 1 && tensors <= 1e6)) roofplan::detail::fail(at, ".tensors: expected a count in [1, 1e6]");
        const double step = detail::number(c, "host_us_step_instrumented", at) * 1e-6;
        const std::string name = "adamw split: " + std::to_string(static_cast<std::int64_t>(tensors)) + " tensors";
        double sum = 0;
        std::size_t from = 0;
        for (std::size_t k = 0; k < gpu.size(); ++k) {
            const bool last = k + 1 == gpu.size();  // the last takes the calls after it and the time after them
            double t = last ? element(gaps, calls.size(), at + ".gap_us") : 0.0;
            for (std::size_t i = from; i <= (last ? calls.size() - 1 : gpu[k]); ++i)
                t += element(gaps, i, at + ".gap_us") + element(inside, i, at + ".call_us");
            from = gpu[k] + 1;
            sum += t * 1e-6;
            out.push_back({name + " (op " + std::to_string(k + 1) + ")", t * 1e-6, 0.0});
        }
        // Medians of the parts need not add up to the median step exactly; 10% more is not a record of one step.
        if (!(step > 0) || sum > step * 1.1)
            roofplan::detail::fail(at, ".host_us_step_instrumented: the step's host time must be positive and at least the sum of its "
                                   "gaps and calls (within 10%: each is a median)");
        out.push_back({name + " (step)", step, 0.0});
    }
}

/// op_bench.py `dp_host`: replicate's Python and the replicas' threaded forwards, one sample per replica count (the
/// median over the rounds, as recorded).  The meta-device threads are a diagnostic, not read.
inline void data_parallel_host_samples(const json& section, const std::string& where,
                                       std::vector<DataParallelHostSample>& out) {
    if (!section.is_object()) roofplan::detail::fail(where, ": expected an object with .replicate and .parallel_apply arrays");
    using Part = DataParallelHostSample::Part;
    for (const auto& [key, part, times] : {std::tuple<const char*, Part, const char*>{"replicate", Part::replicate, "host_us"},
                                           {"parallel_apply", Part::forward, "wall_us"}}) {
        if (!section.contains(key)) continue;
        const json& list = section.at(key);
        if (!list.is_array()) roofplan::detail::fail(where, ".", key, ": expected an array of cases");
        for (std::size_t i = 0; i < list.size(); ++i) {
            const std::string at = where + "." + key + "[" + std::to_string(i) + "]";
            const json& c = list[i];
            if (!c.is_object()) roofplan::detail::fail(at, ": expected an object");
            DataParallelHostSample sample;
            sample.part = part;
            sample.model = detail::string_field(c, "model", at);
            if (part == Part::forward) sample.model += " " + detail::string_field(c, "precision", at);
            else {
                sample.modules = detail::number(c, "modules", at);
                sample.tensors = detail::number(c, "parameters", at) + detail::number(c, "buffers", at);
                if (!(sample.modules >= 1 && sample.tensors >= 0))
                    roofplan::detail::fail(at, ": expected at least one module and no negative parameter or buffer count");
            }
            if (!c.contains(times) || !c.at(times).is_object())
                roofplan::detail::fail(at, ".", times, ": expected an object of replica count -> microseconds");
            for (const auto& [count, value] : c.at(times).items()) {
                const std::string field = at + "." + times + "." + count;
                int replicas = 0;
                const auto [end, error] = std::from_chars(count.data(), count.data() + count.size(), replicas);
                if (error != std::errc{} || end != count.data() + count.size() || replicas < 1 || replicas > 1024)
                    roofplan::detail::fail(field, ": expected a replica count in [1, 1024] as the key");
                if (!value.is_number() || !std::isfinite(value.get<double>()) || !(value.get<double>() > 0))
                    roofplan::detail::fail(field, ": expected a positive finite time in microseconds");
                sample.replicas = replicas;
                sample.seconds = value.get<double>() * 1e-6;
                out.push_back(sample);
            }
        }
    }
    if (section.contains("thread_start_join_us")) {
        const double us = detail::number(section, "thread_start_join_us", where);
        if (!(us > 0 && us < 1e5))
            roofplan::detail::fail(where, ".thread_start_join_us: expected a time in (0, 100000) microseconds");
        out.push_back({Part::thread, "", 0, 0, 1, us * 1e-6});
    }
}

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
    if (report.contains("adam_split_host")) adam_split_samples(report.at("adam_split_host"), file + ": .adam_split_host", out.host);
    if (report.contains("kernel_gap_graph") && report.at("kernel_gap_graph").is_array())
        for (const json& g : report.at("kernel_gap_graph"))
            if (g.is_object() && g.contains("gap_us_median"))
                out.graph_kernel_gaps.push_back(detail::number(g, "gap_us_median", file + ": .kernel_gap_graph[]") * 1e-6);
    if (report.contains("kernel_gap") && report.at("kernel_gap").is_array())
        for (const json& g : report.at("kernel_gap"))
            if (g.is_object() && g.contains("gap_us_median"))
                out.kernel_gaps.push_back(detail::number(g, "gap_us_median", file + ": .kernel_gap[]") * 1e-6);
    if (report.contains("block_host")) block_host_samples(report.at("block_host"), file + ": .block_host", out.host);
    if (report.contains("dp_host"))
        data_parallel_host_samples(report.at("dp_host"), file + ": .dp_host", out.data_parallel_host);
    if (report.contains("host_speed")) host_speed_rounds(report.at("host_speed"), file, file + ": .host_speed", out.host_speed);
    out.sources.push_back(file + " (roofplan-ops, " + detail::report_date(report) + ")");
    return out;
}

}  // namespace roofplan::io

// roofplan/io/conv_shapes.hpp — reads the framework's shape-by-shape reports into the calibration's typed records:
// roofplan-conv-shapes (validation/ops/conv_bench.py) and roofplan-gemm-shapes (validation/ops/gemm_bench.py);
// schemas in docs/report-schemas.md.
#pragma once

#include <roofplan/calibration/measured_conv.hpp>
#include <roofplan/io/json.hpp>
#include <roofplan/layers/conv.hpp>
#include <roofplan/measurement/samples.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

namespace roofplan::io {

namespace detail {

/// An [h, w] pair of positive (or, for padding, non-negative) integers below 2^20.
inline std::pair<std::int64_t, std::int64_t> extent_pair(const json& c, std::string_view key, const std::string& where,
                                                         std::int64_t least) {
    const json& v = field(c, key, where);
    if (!v.is_array() || v.size() != 2 || !v[0].is_number_integer() || !v[1].is_number_integer() ||
        v[0].get<std::int64_t>() < least || v[1].get<std::int64_t>() < least || v[0].get<std::int64_t>() >= (1 << 20) ||
        v[1].get<std::int64_t>() >= (1 << 20))
        roofplan::detail::fail(path_of(where, key), ": expected [h, w], integers in [", least, ", 2^20), got ", shorten(v));
    return {v[0].get<std::int64_t>(), v[1].get<std::int64_t>()};
}

/// A pass's kernel time from its kernels' device time by class: its own kernels, and (TF32 on NCHW tensors) its
/// layout conversions, which the eager runtime times as kernels of their own (runtime/eager.hpp) from entries of
/// their own.
struct PassSeconds {
    double own = 0;
    double conversions = 0;
    bool converted = false;  ///< the pass had conversions (class copy/cast in TF32)
};
inline PassSeconds pass_seconds(const json& run, Precision precision, const std::string& where) {
    const json& by_class = field(run, "class_time_s", where);
    if (!by_class.is_object() || by_class.empty())
        roofplan::detail::fail(where, ".class_time_s: expected an object of kernel class -> seconds");
    PassSeconds out;
    for (const auto& [cls, value] : by_class.items()) {
        const double s = number(by_class, cls, where + ".class_time_s");
        if (s < 0) roofplan::detail::fail(where, ".class_time_s.", cls, ": expected seconds >= 0");
        if (precision == Precision::tf32 && cls == "copy/cast") {
            out.conversions = s;
            out.converted = true;
        } else {
            out.own += s;
        }
    }
    return out;
}

/// The precision mode a shape-by-shape report ran a shape in (`.mode`: fp32, tf32, bf16, fp16, as the e2e suite's
/// modes; bf16 and fp16 are autocast's).
inline Precision shape_mode(const json& record, const std::string& where) {
    constexpr std::array<std::pair<std::string_view, Precision>, 4> modes{
        {{"fp32", Precision::fp32}, {"tf32", Precision::tf32}, {"bf16", Precision::amp_bf16}, {"fp16", Precision::amp_fp16}}};
    const std::string mode = string_field(record, "mode", where);
    const auto m = std::find_if(modes.begin(), modes.end(), [&](const auto& p) { return p.first == mode; });
    if (m == modes.end()) roofplan::detail::fail(where, ".mode: '", mode, "' is not one of fp32, tf32, bf16, fp16");
    return m->second;
}

}  // namespace detail

/// The verified passes of a roofplan-conv-shapes report as measurements (a batch that ran out of memory is
/// skipped; a pass whose check failed does not count).
inline Measurements conv_shapes_report(const json& report, const std::string& file) {
    if (!report.is_object() || detail::string_or(report, "tool", file + ": ", "") != "roofplan-conv-shapes" ||
        !report.contains("convolutions") || !report.at("convolutions").is_array())
        roofplan::detail::fail(file, ": not a roofplan-conv-shapes report (needs .tool = roofplan-conv-shapes and a "
                               ".convolutions array)");
    Measurements out;
    const json& convs = report.at("convolutions");
    constexpr std::array<std::pair<std::string_view, Pass>, 3> passes{
        {{"forward", Pass::forward}, {"backward_data", Pass::backward_data}, {"backward_filter", Pass::backward_weight}}};
    for (std::size_t i = 0; i < convs.size(); ++i) {
        const json& c = convs[i];
        const std::string where = file + ": .convolutions[" + std::to_string(i) + "]";
        if (!c.is_object()) roofplan::detail::fail(where, ": expected an object");
        const Precision precision = detail::shape_mode(c, where);
        const std::string layout = detail::string_field(c, "layout", where);
        if (layout != "nchw" && layout != "nhwc")
            roofplan::detail::fail(where, ".layout: '", layout, "' is not one of nchw, nhwc");
        ConvGeometry g;
        g.layout = layout == "nhwc" ? ConvLayout::nhwc : ConvLayout::nchw;
        for (auto [key, target] : {std::pair<const char*, std::int64_t*>{"in_channels", &g.in_channels},
                                   {"out_channels", &g.out_channels}, {"groups", &g.groups}}) {
            const json& v = detail::field(c, key, where);
            if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() >= (1 << 20))
                roofplan::detail::fail(detail::path_of(where, key), ": expected an integer in [1, 2^20), got ", shorten(v));
            *target = v.get<std::int64_t>();
        }
        std::tie(g.kernel_h, g.kernel_w) = detail::extent_pair(c, "kernel", where, 1);
        std::tie(g.stride_h, g.stride_w) = detail::extent_pair(c, "stride", where, 1);
        std::tie(g.pad_h, g.pad_w) = detail::extent_pair(c, "padding", where, 0);
        std::tie(g.dilation_h, g.dilation_w) = detail::extent_pair(c, "dilation", where, 1);
        std::tie(g.in_h, g.in_w) = detail::extent_pair(c, "input_hw", where, 1);
        try {
            (void)layers::Conv2D(g.config());  // the geometry must be a convolution
        } catch (const Error& error) {
            roofplan::detail::fail(where, ": ", error.what());
        }
        const json& verified = detail::field(c, "verified", where);
        if (!verified.is_object()) roofplan::detail::fail(where, ".verified: expected an object of pass -> true/false");
        const json& runs = detail::field(c, "runs", where);
        if (!runs.is_array()) roofplan::detail::fail(where, ".runs: expected an array");
        for (std::size_t j = 0; j < runs.size(); ++j) {
            const json& r = runs[j];
            const std::string at = where + ".runs[" + std::to_string(j) + "]";
            if (!r.is_object()) roofplan::detail::fail(at, ": expected an object");
            if (r.contains("error")) continue;  // out of memory at this batch
            const std::string pass = detail::string_field(r, "pass", at);
            const auto p = std::find_if(passes.begin(), passes.end(), [&](const auto& q) { return q.first == pass; });
            if (p == passes.end())
                roofplan::detail::fail(at, ".pass: '", pass, "' is not one of forward, backward_data, backward_filter");
            if (!detail::flag(verified, pass, where + ".verified")) continue;
            ConvShapeSample s;
            s.where = at;
            s.geometry = g;
            s.precision = precision;
            s.pass = p->second;
            const double batch = detail::number(r, "batch", at);
            if (!(batch >= 1 && batch < 1e9) || batch != static_cast<double>(static_cast<std::int64_t>(batch)))
                roofplan::detail::fail(at, ".batch: expected an integer in [1, 1e9)");
            s.batch = static_cast<std::int64_t>(batch);
            const detail::PassSeconds time = detail::pass_seconds(r, s.precision, at);
            s.seconds = time.own;
            s.conversion_seconds = time.conversions;
            if (r.contains("kernels_per_call")) {  // less the three conversions, timed and counted apart
                const double n = detail::number(r, "kernels_per_call", at);
                if (!(n >= 1 && n <= 1e4)) roofplan::detail::fail(at, ".kernels_per_call: expected a number in [1, 1e4]");
                s.kernels = std::max(1.0, n - (time.converted ? 3 : 0));
            }
            if (!(s.seconds > 0 && s.seconds < 60))
                roofplan::detail::fail(at, ".class_time_s: the pass's own kernels must take (0, 60) seconds, got ",
                                       std::to_string(s.seconds));
            out.conv_shapes.push_back(s);
        }
    }
    out.sources.push_back(file + " (roofplan-conv-shapes, " + detail::report_date(report) + ")");
    return out;
}

/// The verified passes of a roofplan-gemm-shapes report as measurements (a row count that ran out of memory is
/// skipped; a pass whose check failed does not count).  A pass's time is every kernel it launched (cuBLAS's split-K
/// memsets, scaling and reduction kernels included: the eager runtime lowers one GEMM per pass).
inline Measurements gemm_shapes_report(const json& report, const std::string& file) {
    if (!report.is_object() || detail::string_or(report, "tool", file + ": ", "") != "roofplan-gemm-shapes" ||
        !report.contains("gemms") || !report.at("gemms").is_array())
        roofplan::detail::fail(file, ": not a roofplan-gemm-shapes report (needs .tool = roofplan-gemm-shapes and a "
                               ".gemms array)");
    Measurements out;
    const json& gemms = report.at("gemms");
    constexpr std::array<std::pair<std::string_view, Pass>, 3> passes{
        {{"forward", Pass::forward}, {"backward_data", Pass::backward_data}, {"backward_weight", Pass::backward_weight}}};
    for (std::size_t i = 0; i < gemms.size(); ++i) {
        const json& g = gemms[i];
        const std::string where = file + ": .gemms[" + std::to_string(i) + "]";
        if (!g.is_object()) roofplan::detail::fail(where, ": expected an object");
        const Precision precision = detail::shape_mode(g, where);
        GemmGeometry geometry;
        for (auto [key, target] : {std::pair<const char*, std::int64_t*>{"in_features", &geometry.in_features},
                                   {"out_features", &geometry.out_features}}) {
            const json& v = detail::field(g, key, where);
            if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() >= (1 << 24))
                roofplan::detail::fail(detail::path_of(where, key), ": expected an integer in [1, 2^24), got ", shorten(v));
            *target = v.get<std::int64_t>();
        }
        if (!detail::field(g, "bias", where).is_boolean())
            roofplan::detail::fail(detail::path_of(where, "bias"), ": expected true or false");
        geometry.bias = g.at("bias").get<bool>();
        const json& verified = detail::field(g, "verified", where);
        if (!verified.is_object()) roofplan::detail::fail(where, ".verified: expected an object of pass -> true/false");
        const json& runs = detail::field(g, "runs", where);
        if (!runs.is_array()) roofplan::detail::fail(where, ".runs: expected an array");
        for (std::size_t j = 0; j < runs.size(); ++j) {
            const json& r = runs[j];
            const std::string at = where + ".runs[" + std::to_string(j) + "]";
            if (!r.is_object()) roofplan::detail::fail(at, ": expected an object");
            if (r.contains("error")) continue;  // out of memory at this row count
            const std::string pass = detail::string_field(r, "pass", at);
            const auto p = std::find_if(passes.begin(), passes.end(), [&](const auto& q) { return q.first == pass; });
            if (p == passes.end())
                roofplan::detail::fail(at, ".pass: '", pass, "' is not one of forward, backward_data, backward_weight");
            if (!detail::flag(verified, pass, where + ".verified")) continue;
            GemmShapeSample s;
            s.where = at;
            s.geometry = geometry;
            s.precision = precision;
            s.pass = p->second;
            const double rows = detail::number(r, "rows", at);
            if (!(rows >= 1 && rows < 1e9) || rows != static_cast<double>(static_cast<std::int64_t>(rows)))
                roofplan::detail::fail(at, ".rows: expected an integer in [1, 1e9)");
            s.rows = static_cast<std::int64_t>(rows);
            s.seconds = detail::pass_seconds(r, Precision::fp32, at).own;  // every class: no conversions apart
            if (r.contains("kernels_per_call")) {
                const double n = detail::number(r, "kernels_per_call", at);
                if (!(n >= 1 && n <= 1e4)) roofplan::detail::fail(at, ".kernels_per_call: expected a number in [1, 1e4]");
                s.kernels = n;
            }
            if (!(s.seconds > 0 && s.seconds < 60))
                roofplan::detail::fail(at, ".class_time_s: the pass's kernels must take (0, 60) seconds, got ",
                                       std::to_string(s.seconds));
            out.gemm_shapes.push_back(s);
        }
    }
    out.sources.push_back(file + " (roofplan-gemm-shapes, " + detail::report_date(report) + ")");
    return out;
}

}  // namespace roofplan::io

// tools/roofplan/breakdown_svg.hpp — `predict --svg`: where a step's time goes, as SVG.  Two panels of horizontal
// stacked bars (forward, backward-data, backward-weight): the slowest layers, and the time by layer type (with the
// optimizer update); labelled time axes, a legend, and a title naming model, device, precision and batch.
#pragma once

#include "svg.hpp"

#include <roofplan/roofplan.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace roofplan::cli {

namespace svg_detail {
/// "1.23 s", "4.56 ms", "789 µs", "12.3 µs".
inline std::string time_label(double s) {
    char buf[32];
    if (s >= 1) std::snprintf(buf, sizeof buf, "%.2f s", s);
    else if (s >= 1e-3) std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
    else std::snprintf(buf, sizeof buf, "%.3g µs", s * 1e6);
    return buf;
}
/// Axis ticks at 1, 2 or 5 × 10^k up to at least `max`.
inline std::vector<double> nice_ticks(double max) {
    const double raw = max / 5;
    const double decade = std::pow(10.0, std::floor(std::log10(raw)));
    double step = decade;
    for (double f : {1.0, 2.0, 5.0, 10.0})
        if (decade * f >= raw) {
            step = decade * f;
            break;
        }
    std::vector<double> ticks;
    for (double t = 0; t <= max * 1.0001 + step; t += step) {
        ticks.push_back(t);
        if (t >= max) break;
    }
    return ticks;
}
/// Seconds in the unit that suits the axis maximum: "250 µs", "1.5 ms", "2 s".
inline std::string seconds_label(double s, double axis_max) {
    const double scale = axis_max >= 1 ? 1 : axis_max >= 1e-3 ? 1e3 : 1e6;
    const char* unit = axis_max >= 1 ? " s" : axis_max >= 1e-3 ? " ms" : " µs";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g%s", std::round(s * scale * 1000) / 1000, unit);
    return buf;
}
}  // namespace svg_detail

/// One bar: a label and its seconds per phase (forward, backward-data, backward-weight, optimizer).
struct BreakdownBar {
    std::string label;
    std::array<double, 4> phase{};
    std::string note;  ///< after the bar, e.g. "memory-bound"
    [[nodiscard]] double total() const { return phase[0] + phase[1] + phase[2] + phase[3]; }
};

struct BreakdownChart {
    std::string title;
    std::string subtitle;
    double step_s = 0;
    bool training = false;
    std::vector<BreakdownBar> layers;  ///< slowest first
    std::vector<BreakdownBar> types;   ///< largest first
};

inline BreakdownChart breakdown_chart(const Model& model, const Device& device, const Prediction& p,
                                      const std::string& model_id, std::size_t top) {
    BreakdownChart c;
    c.training = p.mode == Mode::train;
    c.step_s = p.step_time.value();
    c.title = "Step time breakdown: " + model_id + " on " + std::string(device.name.view());
    std::vector<const LayerPrediction*> order;
    for (const LayerPrediction& lp : p.layers) order.push_back(&lp);
    std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->time.value() > b->time.value(); });
    if (order.size() > top) order.resize(top);
    double shown = 0;
    for (const LayerPrediction* lp : order) {
        const Node& n = model.nodes()[lp->node];
        BreakdownBar bar{std::string(n.name.view()) + " (" + std::string(type_label(n.layer)) + ")",
                         {lp->pass[Pass::forward].value(), lp->pass[Pass::backward_data].value(), lp->pass[Pass::backward_weight].value(), 0.0},
                         std::string(to_string(lp->bound)) + "-bound"};
        shown += bar.total();
        c.layers.push_back(bar);
    }
    std::map<std::string, BreakdownBar> by_type;
    for (const LayerPrediction& lp : p.layers) {
        const std::string type(type_label(model.nodes()[lp.node].layer));
        BreakdownBar& bar = by_type[type];
        bar.label = type;
        for (std::size_t i = 0; i < 3; ++i) bar.phase[i] += lp.pass[static_cast<Pass>(i)].value();
    }
    for (auto& [type, bar] : by_type) c.types.push_back(bar);
    if (c.training && p.phase_time[Phase::optimizer].value() > 0) c.types.push_back({"optimizer update", {0, 0, 0, p.phase_time[Phase::optimizer].value()}, ""});
    std::stable_sort(c.types.begin(), c.types.end(), [](const auto& a, const auto& b) { return a.total() > b.total(); });
    c.subtitle = std::string(c.training ? "training" : "inference") + ", batch " + std::to_string(p.batch) + ", " +
                 std::string(to_string(p.precision)) + " on " + std::string(to_string(p.math)) + "; step " +
                 svg_detail::time_label(c.step_s) + "; the " + std::to_string(c.layers.size()) + " slowest of " +
                 std::to_string(p.layers.size()) + " layers take " +
                 std::to_string(static_cast<int>(std::lround(100.0 * shown / std::max(c.step_s, 1e-300)))) + "% of it";
    return c;
}


inline std::string render_breakdown_svg(const BreakdownChart& c) {
    using namespace svg_detail;
    static constexpr const char* colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#7f7f7f"};
    static constexpr const char* names[] = {"forward", "backward-data", "backward-weight", "optimizer"};
    const double width = 1000, row = 22, bar_h = 15;
    std::size_t longest = 10;
    for (const auto* bars : {&c.layers, &c.types})
        for (const auto& b : *bars) longest = std::max(longest, b.label.size());
    const double label_w = std::min(340.0, 6.4 * static_cast<double>(longest) + 16);
    const double left = label_w + 20, right = 170;  // room for the value after the longest bar
    const double plot_w = width - left - right;
    const double panel1_top = 125;
    const double panel1_h = row * static_cast<double>(c.layers.size());
    const double panel2_top = panel1_top + panel1_h + 90;
    const double panel2_h = row * static_cast<double>(c.types.size());
    const double height = panel2_top + panel2_h + 60;

    std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" + num(height) +
                    "\" viewBox=\"0 0 " + num(width) + " " + num(height) +
                    "\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    s += "<text x=\"20\" y=\"30\" font-size=\"18\" font-weight=\"bold\">" + escape(c.title) + "</text>\n";
    s += "<text x=\"20\" y=\"52\" font-size=\"12\" fill=\"#444\">" + escape(c.subtitle) + "</text>\n";
    // legend
    double lx = 20;
    s += "<g font-size=\"12\">\n";
    for (std::size_t i = 0; i < (c.training ? 4u : 1u); ++i) {
        s += "<rect x=\"" + num(lx) + "\" y=\"66\" width=\"12\" height=\"12\" fill=\"" + colours[i] + "\"/><text x=\"" +
             num(lx + 17) + "\" y=\"77\">" + names[i] + "</text>\n";
        lx += 30 + 7.2 * static_cast<double>(std::string(names[i]).size());
    }
    s += "</g>\n";

    const auto panel = [&](const std::vector<BreakdownBar>& bars, double top, double h, const std::string& heading) {
        double max = 0;
        for (const auto& b : bars) max = std::max(max, b.total());
        if (max <= 0) max = 1e-6;
        const std::vector<double> ticks = nice_ticks(max);
        const double axis_max = ticks.back();
        const auto X = [&](double t) { return left + plot_w * t / axis_max; };
        s += "<text x=\"20\" y=\"" + num(top - 14) + "\" font-size=\"14\" font-weight=\"bold\">" + escape(heading) + "</text>\n";
        s += "<g stroke=\"#e4e4e4\">\n";
        for (double t : ticks)
            s += "<line x1=\"" + num(X(t)) + "\" y1=\"" + num(top) + "\" x2=\"" + num(X(t)) + "\" y2=\"" + num(top + h) + "\"/>\n";
        s += "</g>\n<g font-size=\"11\" fill=\"#222\">\n";
        for (double t : ticks)
            s += "<text x=\"" + num(X(t)) + "\" y=\"" + num(top + h + 15) + "\" text-anchor=\"middle\">" +
                 seconds_label(t, axis_max) + "</text>\n";
        s += "</g>\n";
        s += "<text x=\"" + num(left + plot_w / 2) + "\" y=\"" + num(top + h + 34) +
             "\" text-anchor=\"middle\" font-size=\"12\">time per step</text>\n";
        s += "<line x1=\"" + num(left) + "\" y1=\"" + num(top) + "\" x2=\"" + num(left) + "\" y2=\"" + num(top + h) +
             "\" stroke=\"#222\"/>\n";
        double y = top + (row - bar_h) / 2;
        for (const auto& b : bars) {
            s += "<text x=\"" + num(left - 8) + "\" y=\"" + num(y + bar_h - 3) + "\" font-size=\"11\" text-anchor=\"end\">" +
                 escape(b.label) + "</text>\n";
            double x = 0;
            for (std::size_t i = 0; i < 4; ++i) {
                if (b.phase[i] <= 0) continue;
                s += "<rect x=\"" + num(X(x)) + "\" y=\"" + num(y) + "\" width=\"" + num(std::max(0.5, X(x + b.phase[i]) - X(x))) +
                     "\" height=\"" + num(bar_h) + "\" fill=\"" + colours[i] + "\"><title>" + escape(b.label) + ", " + names[i] +
                     ": " + time_label(b.phase[i]) + "</title></rect>\n";
                x += b.phase[i];
            }
            const double share = 100.0 * b.total() / std::max(c.step_s, 1e-300);
            char pct[32];
            if (share < 0.05) std::snprintf(pct, sizeof pct, "&lt;0.1%%");
            else std::snprintf(pct, sizeof pct, share >= 10 ? "%.0f%%" : "%.1f%%", share);
            s += "<text x=\"" + num(X(x) + 5) + "\" y=\"" + num(y + bar_h - 3) + "\" font-size=\"10\" fill=\"#333\">" +
                 time_label(b.total()) + " (" + pct + ")" + (b.note.empty() ? "" : ", " + b.note) + "</text>\n";
            y += row;
        }
    };
    panel(c.layers, panel1_top, panel1_h, c.training ? "slowest layers (all passes of each)" : "slowest layers");
    panel(c.types, panel2_top, panel2_h, c.training ? "by layer type, and the optimizer update" : "by layer type");
    s += "</svg>\n";
    return s;
}

/// Writes the breakdown chart of a prediction (which must have per-layer results) to `path`.
inline void write_breakdown_svg(const std::string& path, const Model& model, const Device& device, const Prediction& p,
                                const std::string& model_id, int top) {
    if (p.layers.empty()) roofplan::detail::fail("--svg: the prediction has no per-layer results to draw");
    std::ofstream out(path);
    if (!out) roofplan::detail::fail("cannot write '", path, "'");
    out << render_breakdown_svg(breakdown_chart(model, device, p, model_id, static_cast<std::size_t>(std::max(top, 1))));
    if (!out) roofplan::detail::fail("writing '", path, "' failed");
}

}  // namespace roofplan::cli

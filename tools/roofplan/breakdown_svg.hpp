// tools/roofplan/breakdown_svg.hpp — `predict --svg`: where a step's time goes, as SVG.  Two panels of horizontal
// stacked bars (forward, backward-data, backward-weight): the slowest layers, and the time by layer type (with the
// optimizer update); labelled time axes, a legend, and a title naming model, device, precision and batch.
#pragma once

#include "svg_canvas.hpp"

#include <roofplan/roofplan.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace roofplan::cli {

/// One bar: a label and its seconds per phase (forward, backward-data, backward-weight, optimizer).
struct BreakdownBar {
    std::string label;
    EnumArray<Phase, double> phase{};
    std::string note;  ///< after the bar, e.g. "memory-bound"
    [[nodiscard]] double total() const {
        double sum = 0;
        for (double s : phase) sum += s;
        return sum;
    }
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
                         {{lp->pass[Pass::forward].value(), lp->pass[Pass::backward_data].value(), lp->pass[Pass::backward_weight].value(), 0.0}},
                         std::string(to_string(lp->bound)) + "-bound"};
        shown += bar.total();
        c.layers.push_back(bar);
    }
    std::map<std::string, BreakdownBar> by_type;
    for (const LayerPrediction& lp : p.layers) {
        const std::string type(type_label(model.nodes()[lp.node].layer));
        BreakdownBar& bar = by_type[type];
        bar.label = type;
        for (Pass pass : enum_values<Pass>()) bar.phase[static_cast<Phase>(pass)] += lp.pass[pass].value();
    }
    for (auto& [type, bar] : by_type) c.types.push_back(bar);
    if (c.training && p.phase_time[Phase::optimizer].value() > 0) c.types.push_back({"optimizer update", {{0, 0, 0, p.phase_time[Phase::optimizer].value()}}, ""});
    std::stable_sort(c.types.begin(), c.types.end(), [](const auto& a, const auto& b) { return a.total() > b.total(); });
    c.subtitle = std::string(c.training ? "training" : "inference") + ", batch " + std::to_string(p.batch) + ", " +
                 std::string(to_string(p.precision)) + " on " + std::string(to_string(p.math)) + "; step " +
                 time_label(c.step_s) + "; the " + std::to_string(c.layers.size()) + " slowest of " +
                 std::to_string(p.layers.size()) + " layers take " +
                 std::to_string(static_cast<int>(std::lround(100.0 * shown / std::max(c.step_s, 1e-300)))) + "% of it";
    return c;
}

namespace breakdown_svg {

inline constexpr EnumArray<Phase, const char*> colours{{"#1f77b4", "#ff7f0e", "#2ca02c", "#7f7f7f"}};

/// The smallest step of 1, 2 or 5 × 10^k that is at least `raw`.
inline double nice_step(double raw) {
    static constexpr std::array<double, 4> multiples{1, 2, 5, 10};
    const double decade = std::pow(10.0, std::floor(std::log10(raw)));
    const auto fits = std::find_if(multiples.begin(), multiples.end(), [&](double f) { return decade * f >= raw; });
    return fits == multiples.end() ? decade : decade * *fits;
}

/// Axis ticks at 1, 2 or 5 × 10^k up to at least `max`, about five of them.
inline std::vector<double> nice_ticks(double max) {
    const double step = nice_step(max / 5);
    std::vector<double> ticks;
    for (double t = 0; t <= max * 1.0001 + step; t += step) {
        ticks.push_back(t);
        if (t >= max) break;
    }
    return ticks;
}

/// The geometry both panels share.
struct Layout {
    double width = 1000, row = 22, bar_h = 15;
    double left = 0, right = 170, plot_w = 0;
};

/// A bar's share of the step: "42%", "3.5%", "&lt;0.1%".
inline std::string share_text(double share) {
    char pct[32];
    if (share < 0.05) std::snprintf(pct, sizeof pct, "&lt;0.1%%");
    else std::snprintf(pct, sizeof pct, share >= 10 ? "%.0f%%" : "%.1f%%", share);
    return pct;
}

inline void draw_bars(SvgCanvas& s, const Layout& l, const BreakdownChart& c, const std::vector<BreakdownBar>& bars,
                      double top, double axis_max) {
    using C = SvgCanvas;
    const auto X = [&](double t) { return l.left + l.plot_w * t / axis_max; };
    double y = top + (l.row - l.bar_h) / 2;
    for (const auto& b : bars) {
        s.add(C::text(l.left - 8, y + l.bar_h - 3, C::escape(b.label), " font-size=\"11\" text-anchor=\"end\""));
        double x = 0;
        for (Phase ph : enum_values<Phase>()) {
            if (b.phase[ph] <= 0) continue;
            s.add(C::with_title(C::rect(X(x), y, std::max(0.5, X(x + b.phase[ph]) - X(x)), l.bar_h,
                                        std::string(" fill=\"") + colours[ph] + "\""),
                                C::escape(b.label) + ", " + std::string(to_string(ph)) + ": " + time_label(b.phase[ph])));
            x += b.phase[ph];
        }
        const double share = 100.0 * b.total() / std::max(c.step_s, 1e-300);
        s.add(C::text(X(x) + 5, y + l.bar_h - 3,
                      time_label(b.total()) + " (" + share_text(share) + ")" + (b.note.empty() ? "" : ", " + b.note),
                      " font-size=\"10\" fill=\"#333\""));
        y += l.row;
    }
}

inline void draw_panel(SvgCanvas& s, const Layout& l, const BreakdownChart& c, const std::vector<BreakdownBar>& bars,
                       double top, double h, const std::string& heading) {
    using C = SvgCanvas;
    double max = 0;
    for (const auto& b : bars) max = std::max(max, b.total());
    if (max <= 0) max = 1e-6;
    const std::vector<double> ticks = nice_ticks(max);
    const double axis_max = ticks.back();
    const auto X = [&](double t) { return l.left + l.plot_w * t / axis_max; };
    s.add(C::text("20", C::num(top - 14), C::escape(heading), " font-size=\"14\" font-weight=\"bold\""));
    s << "<g stroke=\"#e4e4e4\">\n";
    for (double t : ticks) s.add(C::line(X(t), top, X(t), top + h));
    s << "</g>\n<g font-size=\"11\" fill=\"#222\">\n";
    for (double t : ticks) s.add(C::text(X(t), top + h + 15, seconds_label(t, axis_max), " text-anchor=\"middle\""));
    s << "</g>\n";
    s.add(C::text(l.left + l.plot_w / 2, top + h + 34, "time per step", " text-anchor=\"middle\" font-size=\"12\""));
    s.add(C::line(l.left, top, l.left, top + h, " stroke=\"#222\""));
    draw_bars(s, l, c, bars, top, axis_max);
}

}  // namespace breakdown_svg

inline std::string render_breakdown_svg(const BreakdownChart& c) {
    using namespace breakdown_svg;
    using C = SvgCanvas;
    Layout l;
    std::size_t longest = 10;
    for (const auto* bars : {&c.layers, &c.types})
        for (const auto& b : *bars) longest = std::max(longest, b.label.size());
    const double label_w = std::min(340.0, 6.4 * static_cast<double>(longest) + 16);
    l.left = label_w + 20;  // room for the value after the longest bar on the right
    l.plot_w = l.width - l.left - l.right;
    const double panel1_top = 125;
    const double panel1_h = l.row * static_cast<double>(c.layers.size());
    const double panel2_top = panel1_top + panel1_h + 90;
    const double panel2_h = l.row * static_cast<double>(c.types.size());
    const double height = panel2_top + panel2_h + 60;

    SvgCanvas s(C::num(l.width), C::num(height));
    s.add(C::text("20", "30", C::escape(c.title), " font-size=\"18\" font-weight=\"bold\""));
    s.add(C::text("20", "52", C::escape(c.subtitle), " font-size=\"12\" fill=\"#444\""));
    double lx = 20;
    s << "<g font-size=\"12\">\n";
    for (Phase ph : enum_values<Phase>()) {
        if (!c.training && ph != Phase::forward) break;
        const std::string name(to_string(ph));
        s.add("<rect x=\"" + C::num(lx) + "\" y=\"66\" width=\"12\" height=\"12\" fill=\"" + colours[ph] + "\"/>" +
              C::text(C::num(lx + 17), "77", name));
        lx += 30 + 7.2 * static_cast<double>(name.size());
    }
    s << "</g>\n";
    draw_panel(s, l, c, c.layers, panel1_top, panel1_h,
               c.training ? "slowest layers (all passes of each)" : "slowest layers");
    draw_panel(s, l, c, c.types, panel2_top, panel2_h, c.training ? "by layer type, and the optimizer update" : "by layer type");
    return s.finish();
}

/// Writes the breakdown chart of a prediction (which must have per-layer results) to `path`.
inline void write_breakdown_svg(const std::string& path, const Model& model, const Device& device, const Prediction& p,
                                const std::string& model_id, int top) {
    if (p.layers.empty()) fail("--svg: the prediction has no per-layer results to draw");
    write_file(path, render_breakdown_svg(breakdown_chart(model, device, p, model_id,
                                                          static_cast<std::size_t>(std::max(top, 1)))));
}

}  // namespace roofplan::cli

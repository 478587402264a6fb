// tools/roofplan/roofline_svg.hpp — the roofline chart as SVG: log-log axes, a memory roof, a compute roof per
// precision, each layer a point (coloured by what bounds it, area by its share of the step), labels for the slowest
// layers.
#pragma once

#include "svg_canvas.hpp"

#include <roofplan/roofplan.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

namespace roofplan::cli {


struct RooflineChart {
    struct Roof {
        std::string label;
        double peak = 0;  ///< FLOP/s
        bool active = false;
    };
    struct Point {
        std::string name;
        std::string type;
        double intensity = 0;    ///< FLOP/B
        double performance = 0;  ///< FLOP/s attained (predicted)
        double time = 0;         ///< s
        std::string bound;
    };
    std::string title;
    std::string subtitle;
    double bandwidth = 0;           ///< B/s, datasheet
    double effective_bandwidth = 0; ///< B/s, with the profile's memory efficiency
    double effective_peak = 0;      ///< FLOP/s of the active class with the profile's GEMM efficiency
    std::vector<Roof> roofs;
    std::vector<Point> points;
};

inline RooflineChart roofline_chart(const Model& model, const Device& device, const EfficiencyProfile& profile,
                                    const Prediction& p, const std::string& model_id) {
    RooflineChart c;
    c.title = "Roofline: " + model_id + " on " + std::string(device.name.view());
    c.subtitle = std::string(p.mode == Mode::train ? "training" : "inference") + ", batch " + std::to_string(p.batch) +
                 ", " + std::string(to_string(p.precision)) + " (" + std::string(to_string(p.math)) +
                 "); each point is a layer (all its passes); profile: " + std::string(profile.source.view());
    const Roofline roofline(device, profile, p.math);
    c.bandwidth = roofline.bandwidth_bytes_s();
    c.effective_bandwidth = roofline.achieved_bytes_s();
    c.effective_peak = roofline.achieved_flops_s();
    for (const ComputeRoof& r : compute_roofs(device))
        c.roofs.push_back({std::string(r.label), r.peak_flops_s, r.serves(p.math)});
    for (const LayerPrediction& lp : p.layers) {
        if (lp.flops.value() <= 0 || lp.bytes.value() <= 0 || lp.time.value() <= 0) continue;
        const Node& n = model.nodes()[lp.node];
        c.points.push_back({std::string(n.name.view()), std::string(type_label(n.layer)),
                            lp.flops.value() / lp.bytes.value(), lp.flops.value() / lp.time.value(), lp.time.value(),
                            std::string(to_string(lp.bound))});
    }
    return c;
}

namespace roofline_svg {

inline const char* bound_colour(const std::string& bound) {
    if (bound == "compute") return "#d62728";
    if (bound == "memory") return "#1f77b4";
    return "#7f7f7f";
}

/// The plot's geometry: log-log axes fitted to the points and roofs.
struct Plot {
    double width = 960, height = 640, left = 90, right = 200, top = 70, bottom = 70;
    double plot_w = width - left - right, plot_h = height - top - bottom;
    double x0 = 0, x1 = 0, y0 = 0, y1 = 0;

    explicit Plot(const RooflineChart& c) {
        double imin = 1e300, imax = 0, pmin = 1e300, pmax = 0;
        for (const auto& pt : c.points) {
            imin = std::min(imin, pt.intensity);
            imax = std::max(imax, pt.intensity);
            pmin = std::min(pmin, pt.performance);
        }
        for (const auto& r : c.roofs) {
            pmax = std::max(pmax, r.peak);
            imax = std::max(imax, r.peak / c.bandwidth);
        }
        if (c.points.empty()) imin = 0.1, pmin = pmax / 1e4;
        x0 = std::pow(10.0, std::floor(std::log10(imin / 1.5)));
        x1 = std::pow(10.0, std::ceil(std::log10(imax * 2.0)));
        y0 = std::pow(10.0, std::floor(std::log10(std::min(pmin, c.bandwidth * x0) / 1.5)));
        y1 = std::pow(10.0, std::ceil(std::log10(pmax * 1.5)));
    }
    [[nodiscard]] double X(double i) const {
        return left + plot_w * (std::log10(i) - std::log10(x0)) / (std::log10(x1) - std::log10(x0));
    }
    [[nodiscard]] double Y(double p) const {
        return top + plot_h * (1 - (std::log10(p) - std::log10(y0)) / (std::log10(y1) - std::log10(y0)));
    }
};

/// Title, grid, tick labels, frame.
inline void draw_axes(SvgCanvas& s, const Plot& g, const RooflineChart& c) {
    using C = SvgCanvas;
    s.add(C::text(C::num(g.left), "28", C::escape(c.title), " font-size=\"18\" font-weight=\"bold\""));
    s.add(C::text(C::num(g.left), "50", C::escape(c.subtitle), " font-size=\"12\" fill=\"#444\""));
    s << "<g stroke=\"#e4e4e4\" stroke-width=\"1\">\n";
    for (double v = g.x0; v <= g.x1 * 1.0001; v *= 10) s.add(C::line(g.X(v), g.top, g.X(v), g.top + g.plot_h));
    for (double v = g.y0; v <= g.y1 * 1.0001; v *= 10) s.add(C::line(g.left, g.Y(v), g.left + g.plot_w, g.Y(v)));
    s << "</g>\n<g font-size=\"12\" fill=\"#222\">\n";
    for (double v = g.x0; v <= g.x1 * 1.0001; v *= 10)
        s.add(C::text(g.X(v), g.top + g.plot_h + 18, decade_label(v, ""), " text-anchor=\"middle\""));
    for (double v = g.y0; v <= g.y1 * 1.0001; v *= 10)
        s.add(C::text(g.left - 8, g.Y(v) + 4, decade_label(v, ""), " text-anchor=\"end\""));
    s << "</g>\n";
    s.frame(g.left, g.top, g.plot_w, g.plot_h, "arithmetic intensity (FLOP/byte)", g.height - 22,
            "attainable performance (FLOP/s)", 24);
}

/// The roofs (memory slope up to each compute ceiling); returns their labels, drawn later over the points.
inline std::string draw_roofs(SvgCanvas& s, const Plot& g, const RooflineChart& c) {
    using C = SvgCanvas;
    s << "<g fill=\"none\">\n";
    double top_peak = 0;
    for (const auto& r : c.roofs) top_peak = std::max(top_peak, r.peak);
    const double ridge_top = top_peak / c.bandwidth;
    s.add(C::line(g.X(g.x0), g.Y(c.bandwidth * g.x0), g.X(ridge_top), g.Y(top_peak),
                  " stroke=\"#1f77b4\" stroke-width=\"2.5\""));
    s.add(C::line(g.X(g.x0), g.Y(c.effective_bandwidth * g.x0), g.X(top_peak / c.effective_bandwidth), g.Y(top_peak),
                  " stroke=\"#1f77b4\" stroke-width=\"1\" stroke-dasharray=\"2,3\""));
    for (const auto& r : c.roofs)
        s.add(C::line(g.X(r.peak / c.bandwidth), g.Y(r.peak), g.X(g.x1), g.Y(r.peak),
                      std::string(" stroke=\"") + (r.active ? "#d62728" : "#888") + "\" stroke-width=\"" +
                          (r.active ? "2.5" : "1.5") + "\"" + (r.active ? "" : " stroke-dasharray=\"6,4\"")));
    if (c.effective_peak > 0)
        s.add(C::line(g.X(c.effective_peak / c.effective_bandwidth), g.Y(c.effective_peak), g.X(g.x1),
                      g.Y(c.effective_peak), " stroke=\"#d62728\" stroke-width=\"1\" stroke-dasharray=\"2,3\""));
    s << "</g>\n";
    // Roof labels go over the points (drawn after them) with a white halo, so that a point never hides one.
    std::string labels = "<g font-size=\"11\" stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\">\n";
    for (const auto& r : c.roofs)
        labels += C::text(g.X(g.x1) - 4, g.Y(r.peak) - 5, C::escape(r.label) + " " + value_label(r.peak, "FLOP/s"),
                          std::string(" text-anchor=\"end\" fill=\"") + (r.active ? "#d62728" : "#555") + "\"") +
                  "\n";
    const double xi = g.x0 * 3;
    const double angle = -std::atan2(g.Y(c.bandwidth * g.x0) - g.Y(c.bandwidth * g.x1), g.X(g.x1) - g.X(g.x0)) * 180 /
                         3.14159265358979;
    labels += "<text transform=\"translate(" + C::num(g.X(xi)) + "," + C::num(g.Y(c.bandwidth * xi) - 6) +
              ") rotate(" + C::num(angle) + ")\" fill=\"#1f77b4\">memory " + fixed(c.bandwidth / 1e9, 0) +
              " GB/s</text>\n";
    return labels + "</g>\n";
}

/// The points, largest first so small ones stay visible; area by share of the step.
inline std::vector<const RooflineChart::Point*> draw_points(SvgCanvas& s, const Plot& g, const RooflineChart& c) {
    double total = 0;
    for (const auto& pt : c.points) total += pt.time;
    std::vector<const RooflineChart::Point*> order;
    for (const auto& pt : c.points) order.push_back(&pt);
    std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->time > b->time; });
    s << "<g fill-opacity=\"0.55\" stroke-width=\"0.8\">\n";
    for (const auto* pt : order) {
        const double r = 2.5 + 18.0 * std::sqrt(pt->time / std::max(total, 1e-300));
        const std::string colour = bound_colour(pt->bound);
        s.add(SvgCanvas::with_title(
            SvgCanvas::circle(g.X(pt->intensity), g.Y(pt->performance), r,
                              " fill=\"" + colour + "\" stroke=\"" + colour + "\""),
            SvgCanvas::escape(pt->name) + " (" + SvgCanvas::escape(pt->type) + ")"));
    }
    s << "</g>\n";
    return order;
}

/// Labels for the slowest layers, each moved down until it overlaps no earlier one.  Points drawn on top of each
/// other (a repeated block) get one label, "name (+N alike)".
inline void draw_point_labels(SvgCanvas& s, const Plot& g, const std::vector<const RooflineChart::Point*>& order) {
    s << "<g font-size=\"10\" fill=\"#111\" stroke=\"white\" stroke-width=\"2.5\" paint-order=\"stroke\">\n";
    std::vector<std::array<double, 4>> placed;  // x0, y0, x1, y1
    std::vector<const RooflineChart::Point*> labelled;
    for (std::size_t i = 0; i < order.size() && labelled.size() < 6; ++i) {
        const auto* first = order[i];
        const auto same_spot = [&](const RooflineChart::Point* q) {
            return std::fabs(g.X(q->intensity) - g.X(first->intensity)) < 1.0 &&
                   std::fabs(g.Y(q->performance) - g.Y(first->performance)) < 1.0;
        };
        if (std::any_of(labelled.begin(), labelled.end(), same_spot)) continue;
        labelled.push_back(first);
        std::size_t alike = 0;
        for (const auto* q : order) alike += q != first && same_spot(q);
        const std::string name = first->name + (alike ? " (+" + std::to_string(alike) + " alike)" : std::string());
        const double w = 6.0 * static_cast<double>(name.size());
        double tx = g.X(first->intensity) + 8;
        if (tx + w > g.left + g.plot_w) tx = g.X(first->intensity) - 8 - w;  // keep labels inside the plot
        double ty = g.Y(first->performance) + 4;
        for (bool moved = true; moved;) {
            moved = false;
            for (const auto& b : placed)
                if (tx < b[2] && tx + w > b[0] && ty - 10 < b[3] && ty > b[1]) {
                    ty = b[3] + 11;
                    moved = true;
                }
        }
        placed.push_back({tx, ty - 10, tx + w, ty});
        s.add(SvgCanvas::text(tx, ty, SvgCanvas::escape(name)));
    }
    s << "</g>\n";
}

inline void draw_legend(SvgCanvas& s, const Plot& g) {
    using C = SvgCanvas;
    const double lx = g.left + g.plot_w + 16;
    double ly = g.top + 10;
    s << "<g font-size=\"12\">\n";
    s.add(C::text(lx, ly, "layers, bound by", " font-weight=\"bold\""));
    for (const char* b : {"compute", "memory", "latency"}) {
        ly += 20;
        s.add(C::circle(lx + 6, ly - 4, "6", std::string(" fill=\"") + bound_colour(b) + "\" fill-opacity=\"0.55\"") +
              C::text(lx + 18, ly, b));
    }
    ly += 18;
    s.add(C::text(lx, ly, "area: share of step time", " fill=\"#555\""));
    ly += 30;
    s.add(C::text(lx, ly, "roofs", " font-weight=\"bold\""));
    const auto legend_line = [&](const char* colour, const char* width, const char* dash, const char* label) {
        ly += 20;
        s.add(C::line(lx, ly - 4, lx + 28, ly - 4,
                      std::string(" stroke=\"") + colour + "\" stroke-width=\"" + width + "\"" +
                          (dash[0] ? std::string(" stroke-dasharray=\"") + dash + "\"" : "")) +
              C::text(lx + 34, ly, label));
    };
    legend_line("#d62728", "2.5", "", "peak, this precision");
    legend_line("#888", "1.5", "6,4", "peak, other precisions");
    legend_line("#1f77b4", "2.5", "", "memory bandwidth");
    legend_line("#555", "1", "2,3", "with efficiency");
    s << "</g>\n";
}

}  // namespace roofline_svg

inline std::string render_svg(const RooflineChart& c) {
    using namespace roofline_svg;
    const Plot g(c);
    SvgCanvas s(SvgCanvas::num(g.width), SvgCanvas::num(g.height));
    draw_axes(s, g, c);
    const std::string roof_labels = draw_roofs(s, g, c);
    const auto order = draw_points(s, g, c);
    s << roof_labels;
    draw_point_labels(s, g, order);
    draw_legend(s, g);
    return s.finish();
}

}  // namespace roofplan::cli

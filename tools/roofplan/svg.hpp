// tools/roofplan/svg.hpp — the roofline chart as SVG: log-log axes, a memory roof, a compute roof per precision,
// each layer a point (coloured by what bounds it, area by its share of the step), labels for the slowest layers.
#pragma once

#include <roofplan/roofplan.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
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

namespace svg_detail {
inline std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}
inline std::string escape(const std::string& s) {
    std::string out;
    for (char ch : s) {
        switch (ch) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += ch;
        }
    }
    return out;
}
inline std::string decade_label(double v, const char* unit) {
    static const char* prefixes[] = {"", "k", "M", "G", "T", "P"};
    const int e = static_cast<int>(std::lround(std::log10(v)));
    if (e < 0) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g%s", v, unit);
        return buf;
    }
    const int group = std::min(e / 3, 5);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g%s%s", std::pow(10.0, e - 3 * group), prefixes[group], unit);
    return buf;
}
/// A rate with an SI prefix and three significant digits: 989 TFLOP/s, 67 TFLOP/s, 1.98 PFLOP/s.
inline std::string value_label(double v, const char* unit) {
    static const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
    int group = 0;
    while (v >= 999.5 && group < 6) {
        v /= 1000;
        ++group;
    }
    char buf[48];
    std::snprintf(buf, sizeof buf, v >= 99.5 ? "%.0f %s%s" : v >= 9.95 ? "%.1f %s%s" : "%.2f %s%s", v, prefixes[group], unit);
    return buf;
}
inline const char* bound_colour(const std::string& bound) {
    if (bound == "compute") return "#d62728";
    if (bound == "memory") return "#1f77b4";
    return "#7f7f7f";
}
}  // namespace svg_detail

inline std::string render_svg(const RooflineChart& c) {
    using namespace svg_detail;
    const double width = 960, height = 640, left = 90, right = 200, top = 70, bottom = 70;
    const double plot_w = width - left - right, plot_h = height - top - bottom;

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
    const double x0 = std::pow(10.0, std::floor(std::log10(imin / 1.5)));
    const double x1 = std::pow(10.0, std::ceil(std::log10(imax * 2.0)));
    const double y0 = std::pow(10.0, std::floor(std::log10(std::min(pmin, c.bandwidth * x0) / 1.5)));
    const double y1 = std::pow(10.0, std::ceil(std::log10(pmax * 1.5)));
    const auto X = [&](double i) { return left + plot_w * (std::log10(i) - std::log10(x0)) / (std::log10(x1) - std::log10(x0)); };
    const auto Y = [&](double p) { return top + plot_h * (1 - (std::log10(p) - std::log10(y0)) / (std::log10(y1) - std::log10(y0))); };

    std::string s;
    s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" + num(height) +
         "\" viewBox=\"0 0 " + num(width) + " " + num(height) + "\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n";
    s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    s += "<text x=\"" + num(left) + "\" y=\"28\" font-size=\"18\" font-weight=\"bold\">" + escape(c.title) + "</text>\n";
    s += "<text x=\"" + num(left) + "\" y=\"50\" font-size=\"12\" fill=\"#444\">" + escape(c.subtitle) + "</text>\n";
    // grid and ticks
    s += "<g stroke=\"#e4e4e4\" stroke-width=\"1\">\n";
    for (double v = x0; v <= x1 * 1.0001; v *= 10)
        s += "<line x1=\"" + num(X(v)) + "\" y1=\"" + num(top) + "\" x2=\"" + num(X(v)) + "\" y2=\"" + num(top + plot_h) + "\"/>\n";
    for (double v = y0; v <= y1 * 1.0001; v *= 10)
        s += "<line x1=\"" + num(left) + "\" y1=\"" + num(Y(v)) + "\" x2=\"" + num(left + plot_w) + "\" y2=\"" + num(Y(v)) + "\"/>\n";
    s += "</g>\n<g font-size=\"12\" fill=\"#222\">\n";
    for (double v = x0; v <= x1 * 1.0001; v *= 10)
        s += "<text x=\"" + num(X(v)) + "\" y=\"" + num(top + plot_h + 18) + "\" text-anchor=\"middle\">" + decade_label(v, "") + "</text>\n";
    for (double v = y0; v <= y1 * 1.0001; v *= 10)
        s += "<text x=\"" + num(left - 8) + "\" y=\"" + num(Y(v) + 4) + "\" text-anchor=\"end\">" + decade_label(v, "") + "</text>\n";
    s += "</g>\n";
    s += "<rect x=\"" + num(left) + "\" y=\"" + num(top) + "\" width=\"" + num(plot_w) + "\" height=\"" + num(plot_h) +
         "\" fill=\"none\" stroke=\"#222\"/>\n";
    s += "<text x=\"" + num(left + plot_w / 2) + "\" y=\"" + num(height - 22) +
         "\" text-anchor=\"middle\" font-size=\"14\">arithmetic intensity (FLOP/byte)</text>\n";
    s += "<text transform=\"translate(24," + num(top + plot_h / 2) +
         ") rotate(-90)\" text-anchor=\"middle\" font-size=\"14\">attainable performance (FLOP/s)</text>\n";

    // roofs: memory slope up to each compute ceiling
    s += "<g fill=\"none\">\n";
    double top_peak = 0;
    for (const auto& r : c.roofs) top_peak = std::max(top_peak, r.peak);
    const double ridge_top = top_peak / c.bandwidth;
    s += "<line x1=\"" + num(X(x0)) + "\" y1=\"" + num(Y(c.bandwidth * x0)) + "\" x2=\"" + num(X(ridge_top)) + "\" y2=\"" +
         num(Y(top_peak)) + "\" stroke=\"#1f77b4\" stroke-width=\"2.5\"/>\n";
    s += "<line x1=\"" + num(X(x0)) + "\" y1=\"" + num(Y(c.effective_bandwidth * x0)) + "\" x2=\"" +
         num(X(top_peak / c.effective_bandwidth)) + "\" y2=\"" + num(Y(top_peak)) +
         "\" stroke=\"#1f77b4\" stroke-width=\"1\" stroke-dasharray=\"2,3\"/>\n";
    for (const auto& r : c.roofs) {
        const double ridge = r.peak / c.bandwidth;
        s += "<line x1=\"" + num(X(ridge)) + "\" y1=\"" + num(Y(r.peak)) + "\" x2=\"" + num(X(x1)) + "\" y2=\"" + num(Y(r.peak)) +
             "\" stroke=\"" + (r.active ? "#d62728" : "#888") + "\" stroke-width=\"" + (r.active ? "2.5" : "1.5") + "\"" +
             (r.active ? "" : " stroke-dasharray=\"6,4\"") + "/>\n";
    }
    if (c.effective_peak > 0)
        s += "<line x1=\"" + num(X(c.effective_peak / c.effective_bandwidth)) + "\" y1=\"" + num(Y(c.effective_peak)) +
             "\" x2=\"" + num(X(x1)) + "\" y2=\"" + num(Y(c.effective_peak)) +
             "\" stroke=\"#d62728\" stroke-width=\"1\" stroke-dasharray=\"2,3\"/>\n";
    s += "</g>\n";
    // Roof labels go over the points (drawn after them) with a white halo, so that a point never hides one.
    std::string roof_labels = "<g font-size=\"11\" stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\">\n";
    for (const auto& r : c.roofs)
        roof_labels += "<text x=\"" + num(X(x1) - 4) + "\" y=\"" + num(Y(r.peak) - 5) + "\" text-anchor=\"end\" fill=\"" +
             (r.active ? "#d62728" : "#555") + "\">" + escape(r.label) + " " + value_label(r.peak, "FLOP/s") +
             "</text>\n";
    {
        const double xi = x0 * 3;
        const double angle = -std::atan2(Y(c.bandwidth * x0) - Y(c.bandwidth * x1), X(x1) - X(x0)) * 180 / 3.14159265358979;
        char bw[64];
        std::snprintf(bw, sizeof bw, "memory %.0f GB/s", c.bandwidth / 1e9);
        roof_labels += "<text transform=\"translate(" + num(X(xi)) + "," + num(Y(c.bandwidth * xi) - 6) + ") rotate(" +
                       num(angle) + ")\" fill=\"#1f77b4\">" + bw + "</text>\n";
    }
    roof_labels += "</g>\n";

    // points, largest first so small ones stay visible; area by share of the step
    double total = 0;
    for (const auto& pt : c.points) total += pt.time;
    std::vector<const RooflineChart::Point*> order;
    for (const auto& pt : c.points) order.push_back(&pt);
    std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->time > b->time; });
    s += "<g fill-opacity=\"0.55\" stroke-width=\"0.8\">\n";
    for (const auto* pt : order) {
        const double r = 2.5 + 18.0 * std::sqrt(pt->time / std::max(total, 1e-300));
        s += "<circle cx=\"" + num(X(pt->intensity)) + "\" cy=\"" + num(Y(pt->performance)) + "\" r=\"" + num(r) + "\" fill=\"" +
             bound_colour(pt->bound) + "\" stroke=\"" + bound_colour(pt->bound) + "\"><title>" + escape(pt->name) + " (" +
             escape(pt->type) + ")</title></circle>\n";
    }
    s += "</g>\n" + roof_labels + "<g font-size=\"10\" fill=\"#111\" stroke=\"white\" stroke-width=\"2.5\" paint-order=\"stroke\">\n";
    // Label the slowest layers; move a label down until it overlaps no earlier one.  Points drawn on top of each
    // other (a repeated block) get one label, "name (+N alike)".
    std::vector<std::array<double, 4>> placed;  // x0, y0, x1, y1
    std::vector<const RooflineChart::Point*> labelled;
    for (std::size_t i = 0; i < order.size() && labelled.size() < 6; ++i) {
        const auto* first = order[i];
        const auto same_spot = [&](const RooflineChart::Point* q) {
            return std::fabs(X(q->intensity) - X(first->intensity)) < 1.0 && std::fabs(Y(q->performance) - Y(first->performance)) < 1.0;
        };
        bool seen = false;
        for (const auto* q : labelled) seen = seen || same_spot(q);
        if (seen) continue;
        labelled.push_back(first);
        std::size_t alike = 0;
        for (const auto* q : order) alike += q != first && same_spot(q);
        const RooflineChart::Point named{first->name + (alike ? " (+" + std::to_string(alike) + " alike)" : std::string()),
                                         first->type, first->intensity, first->performance, first->time, first->bound};
        const auto* pt = &named;
        const double w = 6.0 * static_cast<double>(pt->name.size());
        double tx = X(pt->intensity) + 8;
        if (tx + w > left + plot_w) tx = X(pt->intensity) - 8 - w;  // keep labels inside the plot
        double ty = Y(pt->performance) + 4;
        for (bool moved = true; moved;) {
            moved = false;
            for (const auto& b : placed)
                if (tx < b[2] && tx + w > b[0] && ty - 10 < b[3] && ty > b[1]) {
                    ty = b[3] + 11;
                    moved = true;
                }
        }
        placed.push_back({tx, ty - 10, tx + w, ty});
        s += "<text x=\"" + num(tx) + "\" y=\"" + num(ty) + "\">" + escape(pt->name) + "</text>\n";
    }
    s += "</g>\n";

    // legend
    const double lx = left + plot_w + 16;
    double ly = top + 10;
    s += "<g font-size=\"12\">\n<text x=\"" + num(lx) + "\" y=\"" + num(ly) + "\" font-weight=\"bold\">layers, bound by</text>\n";
    for (const char* b : {"compute", "memory", "latency"}) {
        ly += 20;
        s += "<circle cx=\"" + num(lx + 6) + "\" cy=\"" + num(ly - 4) + "\" r=\"6\" fill=\"" + bound_colour(b) +
             "\" fill-opacity=\"0.55\"/><text x=\"" + num(lx + 18) + "\" y=\"" + num(ly) + "\">" + b + "</text>\n";
    }
    ly += 18;
    s += "<text x=\"" + num(lx) + "\" y=\"" + num(ly) + "\" fill=\"#555\">area: share of step time</text>\n";
    ly += 30;
    s += "<text x=\"" + num(lx) + "\" y=\"" + num(ly) + "\" font-weight=\"bold\">roofs</text>\n";
    const auto legend_line = [&](const char* colour, const char* width_, const char* dash, const char* label) {
        ly += 20;
        s += std::string("<line x1=\"") + num(lx) + "\" y1=\"" + num(ly - 4) + "\" x2=\"" + num(lx + 28) + "\" y2=\"" + num(ly - 4) +
             "\" stroke=\"" + colour + "\" stroke-width=\"" + width_ + "\"" + (dash[0] ? std::string(" stroke-dasharray=\"") + dash + "\"" : "") +
             "/><text x=\"" + num(lx + 34) + "\" y=\"" + num(ly) + "\">" + label + "</text>\n";
    };
    legend_line("#d62728", "2.5", "", "peak, this precision");
    legend_line("#888", "1.5", "6,4", "peak, other precisions");
    legend_line("#1f77b4", "2.5", "", "memory bandwidth");
    legend_line("#555", "1", "2,3", "with efficiency");
    s += "</g>\n</svg>\n";
    return s;
}

}  // namespace roofplan::cli

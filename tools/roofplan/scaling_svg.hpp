// tools/roofplan/scaling_svg.hpp — `scaling --svg`: throughput vs GPU count (log-log), with linear scaling dashed
// and each point labelled with its scaling efficiency.
#pragma once

#include "svg_canvas.hpp"

#include <roofplan/plan/scaling.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace roofplan::cli {
namespace scaling_svg_detail {

/// The plot's geometry: GPUs on a log2 axis, throughput on a log10 axis.
struct Plot {
    double width = 720, height = 480, left = 80, right = 60, top = 60, bottom = 60;
    double pw = width - left - right, ph = height - top - bottom;
    double x0 = 1, x1 = 1, y0 = 0, y1 = 0, base = 0;

    explicit Plot(const std::vector<ScalingPoint>& pts) {
        double gmax = 1, tmin = 1e300, tmax = 0;
        for (const auto& p : pts)
            if (!p.error) {
                gmax = std::max(gmax, static_cast<double>(p.gpus));
                tmin = std::min(tmin, p.throughput);
                tmax = std::max(tmax, p.throughput);
                if (base == 0) base = p.throughput / p.gpus;
            }
        if (tmax <= 0) fail("scaling: no feasible GPU count to plot");
        tmax = std::max(tmax, base * gmax);
        x1 = std::pow(2.0, std::ceil(std::log2(gmax)));
        y0 = std::pow(10.0, std::floor(std::log10(tmin / 1.2)));
        y1 = std::pow(10.0, std::ceil(std::log10(tmax * 1.2)));
    }
    [[nodiscard]] double X(double g) const {
        return left + pw * std::log2(g / x0) / std::log2(x1 / x0 > 1 ? x1 / x0 : 2);
    }
    [[nodiscard]] double Y(double t) const { return top + ph * (1 - std::log10(t / y0) / std::log10(y1 / y0)); }
};

inline void draw_axes(SvgCanvas& s, const Plot& g) {
    using C = SvgCanvas;
    s << "<g stroke=\"#e4e4e4\">\n";
    for (double v = g.x0; v <= g.x1; v *= 2) s.add(C::line(g.X(v), g.top, g.X(v), g.top + g.ph));
    for (double v = g.y0; v <= g.y1 * 1.0001; v *= 10) s.add(C::line(g.left, g.Y(v), g.left + g.pw, g.Y(v)));
    s << "</g>\n<g font-size=\"12\">\n";
    for (double v = g.x0; v <= g.x1; v *= 2)
        s.add(C::text(g.X(v), g.top + g.ph + 18, fixed(v, 0), " text-anchor=\"middle\""));
    for (double v = g.y0; v <= g.y1 * 1.0001; v *= 10)
        s.add(C::text(g.left - 6, g.Y(v) + 4, decade_label(v, ""), " text-anchor=\"end\""));
    s << "</g>\n";
    s.frame(g.left, g.top, g.pw, g.ph, "GPUs", g.height - 15, "throughput (samples/s)", 20);
}

inline void draw_legend(SvgCanvas& s, const Plot& g) {
    using C = SvgCanvas;
    const std::string predicted = " stroke=\"#d62728\" stroke-width=\"2.5\"";
    const std::string linear = " stroke=\"#888\" stroke-dasharray=\"6,4\"";
    s.add("<g font-size=\"12\">" + C::line(g.left + 12, g.top + 16, g.left + 40, g.top + 16, predicted) +
          C::text(g.left + 46, g.top + 20, "predicted (labels: scaling efficiency)") +
          C::line(g.left + 12, g.top + 36, g.left + 40, g.top + 36, linear) +
          C::text(g.left + 46, g.top + 40, "linear scaling") + "</g>");
}

}  // namespace scaling_svg_detail

inline std::string scaling_svg(const std::string& title, const std::vector<ScalingPoint>& pts) {
    using namespace scaling_svg_detail;
    using C = SvgCanvas;
    const Plot g(pts);
    SvgCanvas s("720", "480");
    s.add(C::text(C::num(g.left), "30", C::escape(title), " font-size=\"16\" font-weight=\"bold\""));
    draw_axes(s, g);
    s.add(C::line(g.X(1), g.Y(g.base), g.X(g.x1), g.Y(g.base * g.x1), " stroke=\"#888\" stroke-dasharray=\"6,4\""));
    std::string path;
    for (const auto& p : pts)
        if (!p.error) path += (path.empty() ? "M" : " L") + C::num(g.X(p.gpus)) + "," + C::num(g.Y(p.throughput));
    s.add("<path d=\"" + path + "\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2.5\"/>");
    for (const auto& p : pts)
        if (!p.error)
            s.add(C::circle(g.X(p.gpus), g.Y(p.throughput), "4", " fill=\"#d62728\"") + "\n" +
                  C::text(g.X(p.gpus) + 6, g.Y(p.throughput) + 16, fixed(100 * p.efficiency, 0) + "%",
                          " font-size=\"11\""));
    draw_legend(s, g);
    return s.finish();
}

}  // namespace roofplan::cli

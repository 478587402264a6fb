// examples/common/chart.hpp — a small line-chart writer (SVG) for the benchmark-report examples: one or more
// series of (x, y) points, log or linear axes, a legend.  Not part of the library (the library never prints);
// the CLI's roofline and scaling charts live in tools/roofplan/.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace roofplan_examples {

struct Series {
    std::string label;
    std::vector<std::pair<double, double>> points;  ///< (x, y); points with y <= 0 on a log axis are skipped
    bool dashed = false;
};

struct LineChart {
    std::string title;
    std::string subtitle;
    std::string x_label;
    std::string y_label;
    bool log_x = true;   ///< powers of two (or ten, for wide ranges) as ticks
    bool log_y = false;  ///< decades as ticks
    std::vector<Series> series;
    double y_min = 0;  ///< the bottom of a linear y axis
};

namespace chart_detail {
inline std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}
inline std::string escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '&') out += "&amp;";
        else if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else if (c == '"') out += "&quot;";
        else out += c;
    }
    return out;
}
/// Tick label: 1, 16, 512, 4K, 1M, 1G (binary prefixes for powers of two >= 1024), or 0.5, 2.5, 1200.
inline std::string tick(double v) {
    char buf[32];
    const double a = std::fabs(v);
    if (a >= 1024 && std::fabs(std::log2(a) - std::round(std::log2(a))) < 1e-9) {
        const char* prefix[] = {"K", "M", "G", "T"};
        int p = -1;
        double x = a;
        while (x >= 1024 && p < 3) {
            x /= 1024;
            ++p;
        }
        std::snprintf(buf, sizeof buf, "%g%s", x, prefix[p]);
    } else {
        std::snprintf(buf, sizeof buf, "%g", v);
    }
    return buf;
}
/// Linear ticks: 1, 2 or 5 × 10^k steps, about six of them.
inline std::vector<double> linear_ticks(double lo, double hi) {
    const double raw = (hi - lo) / 6;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * mag >= raw) {
            step = m * mag;
            break;
        }
    std::vector<double> t;
    for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push_back(v);
    return t;
}
}  // namespace chart_detail

/// The chart as an SVG document (720×480).  Throws std::invalid_argument when no series has a plottable point.
inline std::string render_svg(const LineChart& c) {
    using chart_detail::num;
    const double width = 720, height = 480, left = 80, right = 200, top = 62, bottom = 56;
    const double pw = width - left - right, ph = height - top - bottom;
    double xmin = 1e300, xmax = -1e300, ymin = 1e300, ymax = -1e300;
    for (const Series& s : c.series)
        for (auto [x, y] : s.points) {
            if ((c.log_x && x <= 0) || (c.log_y && y <= 0) || !std::isfinite(x) || !std::isfinite(y)) continue;
            xmin = std::min(xmin, x);
            xmax = std::max(xmax, x);
            ymin = std::min(ymin, y);
            ymax = std::max(ymax, y);
        }
    if (xmin > xmax) throw std::invalid_argument("chart '" + c.title + "': no point to plot");
    std::vector<double> xt, yt;
    if (c.log_x) {
        const bool binary = xmax / xmin <= 8192;
        const double base = binary ? 2 : 10;
        const double step = binary && xmax / xmin > 64 ? 4 : base;  // every other power of two on wide ranges
        xmin = std::pow(base, std::floor(std::log(xmin) / std::log(base) + 1e-9));
        xmax = std::pow(base, std::ceil(std::log(xmax) / std::log(base) - 1e-9));
        if (xmax <= xmin) xmax = xmin * base;
        for (double v = xmin; v <= xmax * 1.0001; v *= step) xt.push_back(v);
    } else {
        if (xmax <= xmin) xmax = xmin + 1;
        xt = chart_detail::linear_ticks(xmin, xmax);
    }
    if (c.log_y) {
        ymin = std::pow(10.0, std::floor(std::log10(ymin) + 1e-9));
        ymax = std::pow(10.0, std::ceil(std::log10(ymax) - 1e-9));
        if (ymax <= ymin) ymax = ymin * 10;
        for (double v = ymin; v <= ymax * 1.0001; v *= 10) yt.push_back(v);
    } else {
        ymin = std::min(c.y_min, ymin);
        ymax = ymax > ymin ? ymax + 0.08 * (ymax - ymin) : ymin + 1;
        yt = chart_detail::linear_ticks(ymin, ymax);
        ymax = std::max(ymax, yt.back());
    }
    const auto X = [&](double x) {
        return left + pw * (c.log_x ? std::log(x / xmin) / std::log(xmax / xmin) : (x - xmin) / (xmax - xmin));
    };
    const auto Y = [&](double y) {
        return top + ph * (1 - (c.log_y ? std::log(y / ymin) / std::log(ymax / ymin) : (y - ymin) / (ymax - ymin)));
    };
    static const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                    "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
    std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"720\" height=\"480\" viewBox=\"0 0 720 480\" "
                    "font-family=\"DejaVu Sans, Arial, sans-serif\">\n<rect width=\"100%\" height=\"100%\" "
                    "fill=\"white\"/>\n";
    s += "<text x=\"" + num(left) + "\" y=\"26\" font-size=\"15\" font-weight=\"bold\">" +
         chart_detail::escape(c.title) + "</text>\n";
    s += "<text x=\"" + num(left) + "\" y=\"46\" font-size=\"11\" fill=\"#444\">" + chart_detail::escape(c.subtitle) +
         "</text>\n<g stroke=\"#e4e4e4\">\n";
    for (double v : xt)
        s += "<line x1=\"" + num(X(v)) + "\" y1=\"" + num(top) + "\" x2=\"" + num(X(v)) + "\" y2=\"" + num(top + ph) +
             "\"/>\n";
    for (double v : yt)
        s += "<line x1=\"" + num(left) + "\" y1=\"" + num(Y(v)) + "\" x2=\"" + num(left + pw) + "\" y2=\"" +
             num(Y(v)) + "\"/>\n";
    s += "</g>\n<g font-size=\"11\">\n";
    for (double v : xt)
        s += "<text x=\"" + num(X(v)) + "\" y=\"" + num(top + ph + 16) + "\" text-anchor=\"middle\">" +
             chart_detail::tick(v) + "</text>\n";
    for (double v : yt)
        s += "<text x=\"" + num(left - 6) + "\" y=\"" + num(Y(v) + 4) + "\" text-anchor=\"end\">" +
             chart_detail::tick(v) + "</text>\n";
    s += "</g>\n<rect x=\"" + num(left) + "\" y=\"" + num(top) + "\" width=\"" + num(pw) + "\" height=\"" + num(ph) +
         "\" fill=\"none\" stroke=\"#222\"/>\n";
    s += "<text x=\"" + num(left + pw / 2) + "\" y=\"" + num(height - 14) +
         "\" text-anchor=\"middle\" font-size=\"13\">" + chart_detail::escape(c.x_label) + "</text>\n";
    s += "<text transform=\"translate(18," + num(top + ph / 2) +
         ") rotate(-90)\" text-anchor=\"middle\" font-size=\"13\">" + chart_detail::escape(c.y_label) + "</text>\n";
    for (std::size_t i = 0; i < c.series.size(); ++i) {
        const Series& ser = c.series[i];
        const std::string colour = colours[i % 10];
        std::string path;
        std::string dots;
        for (auto [x, y] : ser.points) {
            if ((c.log_x && x <= 0) || (c.log_y && y <= 0) || !std::isfinite(x) || !std::isfinite(y)) continue;
            path += (path.empty() ? "M" : " L") + num(X(x)) + "," + num(Y(y));
            dots += "<circle cx=\"" + num(X(x)) + "\" cy=\"" + num(Y(y)) + "\" r=\"3\" fill=\"" + colour + "\"/>";
        }
        s += "<path d=\"" + path + "\" fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"2\"" +
             (ser.dashed ? " stroke-dasharray=\"6,4\"" : "") + "/>\n" + dots + "\n";
        const double ly = top + 10 + 18 * static_cast<double>(i);
        s += "<line x1=\"" + num(left + pw + 12) + "\" y1=\"" + num(ly) + "\" x2=\"" + num(left + pw + 36) +
             "\" y2=\"" + num(ly) + "\" stroke=\"" + colour + "\" stroke-width=\"2\"" +
             (ser.dashed ? " stroke-dasharray=\"6,4\"" : "") + "/><text x=\"" + num(left + pw + 42) + "\" y=\"" +
             num(ly + 4) + "\" font-size=\"11\">" + chart_detail::escape(ser.label) + "</text>\n";
    }
    s += "</svg>\n";
    return s;
}

/// Writes the chart to `path` and says so on stdout; throws std::runtime_error when the file cannot be written.
inline void write_svg(const std::string& path, const LineChart& c) {
    std::ofstream out(path);
    out << render_svg(c);
    if (!out) throw std::runtime_error("cannot write '" + path + "'");
    std::printf("wrote %s\n", path.c_str());
}

}  // namespace roofplan_examples

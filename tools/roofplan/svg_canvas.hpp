// tools/roofplan/svg_canvas.hpp — the one SVG canvas of the CLI's charts (roofline, step-time breakdown, scaling):
// the document, its elements, escaped text, coordinates at 0.1 px, log-axis grids, and writing the file.
#pragma once

#include "cli.hpp"
#include "format.hpp"

#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace roofplan::cli {

class SvgCanvas {
public:
    /// A document of `width` × `height` (as the chart writes them, e.g. "960.0" or "720") on a white background.
    SvgCanvas(std::string_view width, std::string_view height) {
        out_ += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"";
        out_ += width;
        out_ += "\" height=\"";
        out_ += height;
        out_ += "\" viewBox=\"0 0 ";
        out_ += width;
        out_ += " ";
        out_ += height;
        out_ += "\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    }

    /// A coordinate or length: one decimal.
    static std::string num(double v) { return fixed(v, 1); }

    /// Text content and attribute values with &, <, > and " escaped.
    static std::string escape(std::string_view s) {
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

    // Elements, as markup (no line break): attributes after the geometry, `content` already escaped.
    static std::string line(double x1, double y1, double x2, double y2, std::string_view attributes = "") {
        return "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" + num(y2) + "\"" +
               std::string(attributes) + "/>";
    }
    static std::string text(std::string_view x, std::string_view y, std::string_view content,
                            std::string_view attributes = "") {
        return "<text x=\"" + std::string(x) + "\" y=\"" + std::string(y) + "\"" + std::string(attributes) + ">" +
               std::string(content) + "</text>";
    }
    static std::string text(double x, double y, std::string_view content, std::string_view attributes = "") {
        return text(num(x), num(y), content, attributes);
    }
    static std::string rect(double x, double y, double width, double height, std::string_view attributes = "") {
        return "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(width) + "\" height=\"" +
               num(height) + "\"" + std::string(attributes) + "/>";
    }
    static std::string circle(double cx, double cy, std::string_view r, std::string_view attributes = "") {
        return "<circle cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"" + std::string(r) + "\"" +
               std::string(attributes) + "/>";
    }
    static std::string circle(double cx, double cy, double r, std::string_view attributes = "") {
        return circle(cx, cy, num(r), attributes);
    }
    /// An element with a tooltip: `<rect .../>` becomes `<rect ...><title>tip</title></rect>`.
    static std::string with_title(const std::string& element, std::string_view tip) {
        const std::string tag = element.substr(1, element.find(' ') - 1);
        return element.substr(0, element.size() - 2) + "><title>" + std::string(tip) + "</title></" + tag + ">";
    }

    /// Appends markup as it is.
    SvgCanvas& operator<<(std::string_view markup) {
        out_ += markup;
        return *this;
    }
    /// Appends one element and a line break.
    SvgCanvas& add(std::string_view element) {
        out_ += element;
        out_ += '\n';
        return *this;
    }

    /// A plot's frame: the rectangle and the axis titles below it and (rotated) left of it.
    void frame(double left, double top, double width, double height, std::string_view x_title, double x_title_y,
               std::string_view y_title, double y_title_x) {
        add(rect(left, top, width, height, " fill=\"none\" stroke=\"#222\""));
        add(text(left + width / 2, x_title_y, x_title, " text-anchor=\"middle\" font-size=\"14\""));
        add("<text transform=\"translate(" + fixed(y_title_x, 0) + "," + num(top + height / 2) +
            ") rotate(-90)\" text-anchor=\"middle\" font-size=\"14\">" + std::string(y_title) + "</text>");
    }

    /// The document, closed.
    [[nodiscard]] std::string finish() { return out_ + "</svg>\n"; }

private:
    std::string out_;
};

/// Writes `content` to `path`, or an error naming the file.
inline void write_file(const std::string& path, const std::string& content) {
    std::ofstream out(path);
    if (!out) fail("cannot write '", path, "'");
    out << content;
    if (!out) fail("writing '", path, "' failed");
}

}  // namespace roofplan::cli

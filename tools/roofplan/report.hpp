// tools/roofplan/report.hpp — table and JSON rendering for the CLI (the library headers never print).
#pragma once

#include <roofplan/roofplan.hpp>

#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <concepts>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

namespace roofplan::cli {

/// 1234567 → "1,234,567".
inline std::string grouped(std::int64_t value) {
    std::string digits = std::to_string(value < 0 ? -value : value);
    std::string out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    if (value < 0) out.insert(out.begin(), '-');
    return out;
}

/// Engineering notation with SI prefix: 4.09e9 → "4.09 G".
inline std::string si(double value, int digits = 3) {
    static constexpr const char* prefixes[] = {"", " k", " M", " G", " T", " P", " E"};
    int index = 0;
    double v = value;
    while (std::fabs(v) >= 1000.0 && index < 6) {
        v /= 1000.0;
        ++index;
    }
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*g%s", digits, v, prefixes[index]);
    return buffer;
}

/// The shortest text that reads back as the same double (CSV keeps full precision, no SI prefixes).
inline std::string raw_number(double value) {
    if (!std::isfinite(value)) return "";
    char buffer[64];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    return ec == std::errc() ? std::string(buffer, end) : std::string();
}

/// One table cell: the text a terminal shows and, for CSV, the machine-readable value (e.g. "1.23 ms" and
/// "0.00123"; "25,557,032" and "25557032"; "-" and an empty field).
struct Cell {
    std::string text;
    std::string raw;
    bool has_raw = false;
    Cell(std::string t) : text(std::move(t)) {}  // NOLINT(google-explicit-constructor): rows are braced lists
    Cell(const char* t) : text(t) {}             // NOLINT(google-explicit-constructor)
    template <class Number>
        requires std::is_arithmetic_v<Number>
    Cell(std::string t, Number value) : text(std::move(t)), has_raw(true) {
        if constexpr (std::is_integral_v<Number>) raw = std::to_string(value);
        else raw = raw_number(static_cast<double>(value));
    }
    /// A cell with no value ("-" on the terminal, an empty CSV field).
    static Cell missing(std::string t = "-") {
        Cell c(std::move(t));
        c.has_raw = true;
        return c;
    }
    [[nodiscard]] const std::string& csv_value() const { return has_raw ? raw : text; }
};

/// Terminal columns a UTF-8 string takes (code points; "Γ", "µ" and "·" are one column each).
inline std::size_t display_width(const std::string& s) {
    std::size_t n = 0;
    for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
    return n;
}

/// RFC 4180 field: quoted when it holds a comma, a quote or a line break; quotes doubled.
inline std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return out + "\"";
}

/// A text table with aligned columns: numbers right, text left.  `csv()` prints the same rows as RFC 4180 CSV with
/// raw values (cells built with a number), under the CSV column names if given (e.g. "time_s" for "time").
class Table {
public:
    explicit Table(std::vector<std::string> header, std::vector<bool> right_aligned)
        : header_(std::move(header)), right_(std::move(right_aligned)) {
        right_.resize(header_.size(), false);
    }
    void add(std::vector<Cell> row) { rows_.push_back(std::move(row)); }
    template <class S>
        requires std::same_as<S, std::string>
    void add(const std::vector<S>& row) {
        rows_.emplace_back(row.begin(), row.end());
    }
    void rule() { rows_.emplace_back(); }
    /// Column names for CSV (machine-friendly, with units): one per column.
    Table& csv_names(std::vector<std::string> names) {
        csv_header_ = std::move(names);
        return *this;
    }
    [[nodiscard]] std::string csv() const {
        std::string out;
        const std::vector<std::string>& head = csv_header_.size() == header_.size() ? csv_header_ : header_;
        // (appends, not "," + field: GCC 12's -Wrestrict misfires on const char* + std::string&& at -O3)
        for (std::size_t c = 0; c < head.size(); ++c) {
            if (c) out += ',';
            out += csv_field(head[c]);
        }
        out += '\n';
        for (const auto& row : rows_) {
            if (row.empty()) continue;  // rules are for terminals
            for (std::size_t c = 0; c < header_.size(); ++c) {
                if (c) out += ',';
                if (c < row.size()) out += csv_field(row[c].csv_value());
            }
            out += '\n';
        }
        return out;
    }
    [[nodiscard]] std::string render() const {
        std::vector<std::size_t> width(header_.size());
        for (std::size_t c = 0; c < header_.size(); ++c) width[c] = display_width(header_[c]);
        for (const auto& row : rows_)
            for (std::size_t c = 0; c < row.size() && c < width.size(); ++c)
                width[c] = std::max(width[c], display_width(row[c].text));
        std::string out;
        auto line = [&](const std::vector<Cell>& row) {
            for (std::size_t c = 0; c < header_.size(); ++c) {
                const std::string& cell = c < row.size() ? row[c].text : std::string();
                const std::string pad(width[c] - display_width(cell), ' ');
                out += right_[c] ? pad + cell : cell + pad;
                out += c + 1 < header_.size() ? "  " : "";
            }
            while (!out.empty() && out.back() == ' ') out.pop_back();
            out += '\n';
        };
        auto ruler = [&] {
            std::size_t total = 0;
            for (std::size_t w : width) total += w + 2;
            out += std::string(total - 2, '-') + '\n';
        };
        line(std::vector<Cell>(header_.begin(), header_.end()));
        ruler();
        for (const auto& row : rows_) {
            if (row.empty()) ruler(); else line(row);
        }
        return out;
    }

private:
    std::vector<std::string> header_;
    std::vector<std::string> csv_header_;
    std::vector<bool> right_;
    std::vector<std::vector<Cell>> rows_;
};

inline nlohmann::json shape_json(const Shape& s) {
    nlohmann::json dims = nlohmann::json::array();
    for (int i = 0; i < s.rank(); ++i) dims.push_back(s[i]);
    return dims;
}

}  // namespace roofplan::cli

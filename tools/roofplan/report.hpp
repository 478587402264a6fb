// tools/roofplan/report.hpp — the CLI's one row model: a Table of rows whose cells carry the text a terminal shows
// and the raw value, rendered as an aligned table, as RFC 4180 CSV and as JSON (the library headers never print).
#pragma once

#include "format.hpp"

#include <roofplan/error.hpp>
#include <roofplan/shape.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <iostream>
#include <concepts>
#include <string>
#include <type_traits>
#include <vector>

namespace roofplan::cli {

/// One table cell: the text a terminal shows and the raw value CSV and JSON carry (e.g. "1.23 ms" and 0.00123;
/// "25,557,032" and 25557032; "-" and an empty field / null).
struct Cell {
    std::string text;
    std::string raw;
    bool has_raw = false;
    nlohmann::json value;  ///< for JSON; a text cell's value is its text
    bool in_json = true;   ///< false: the row has no such field in JSON
    Cell(std::string t) : text(std::move(t)), value(text) {}  // NOLINT(google-explicit-constructor): braced rows
    Cell(const char* t) : text(t), value(text) {}             // NOLINT(google-explicit-constructor)
    template <class Number>
        requires std::is_arithmetic_v<Number>
    Cell(std::string t, Number v) : text(std::move(t)), has_raw(true), value(v) {
        if constexpr (std::same_as<Number, bool>) raw = v ? "true" : "false";
        else if constexpr (std::is_integral_v<Number>) raw = std::to_string(v);
        else raw = raw_number(static_cast<double>(v));
    }
    /// A cell whose JSON value is `json` (an array, an object), shown as `t`.
    static Cell structured(std::string t, nlohmann::json json) {
        Cell c(std::move(t));
        c.value = std::move(json);
        return c;
    }
    /// A cell with no value ("-" on the terminal, an empty CSV field, null in JSON).
    static Cell missing(std::string t = "-") {
        Cell c(std::move(t));
        c.has_raw = true;
        c.value = nullptr;
        return c;
    }
    /// A cell the row's JSON leaves out (an optional field), shown as `t`.
    static Cell absent(std::string t = "") {
        Cell c = missing(std::move(t));
        c.in_json = false;
        return c;
    }
    [[nodiscard]] const std::string& csv_value() const { return has_raw ? raw : text; }
};

/// One column of a table: its terminal header, its CSV name and its JSON key ("" where the column is not shown in
/// that rendering), and whether the terminal aligns it right (numbers).
struct Column {
    std::string title;
    std::string csv;
    std::string json;
    bool right = false;
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

/// Columns for CSV and JSON only (no terminal view), each key both the CSV name and the JSON key.
inline std::vector<Column> machine_columns(const std::vector<std::string>& keys) {
    std::vector<Column> out;
    for (const std::string& key : keys) out.push_back({"", key, key});
    return out;
}

/// The row model: rows of cells under columns, rendered as an aligned table (numbers right, text left), as
/// RFC 4180 CSV with raw values and as a JSON array of objects (one per row), so the three cannot disagree.
class Table {
public:
    explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}
    /// A table shown the same in every rendering: the CSV names are the headers (unless csv_names renames them);
    /// no JSON keys.
    explicit Table(const std::vector<std::string>& header, std::vector<bool> right_aligned) {
        right_aligned.resize(header.size(), false);
        for (std::size_t c = 0; c < header.size(); ++c) columns_.push_back({header[c], header[c], "", right_aligned[c]});
    }
    void add(std::vector<Cell> row) { rows_.push_back(std::move(row)); }
    template <class S>
        requires std::same_as<S, std::string>
    void add(const std::vector<S>& row) {
        rows_.emplace_back(row.begin(), row.end());
    }
    void rule() { rows_.emplace_back(); }
    /// Column names for CSV (machine-friendly, with units): one per column.
    Table& csv_names(const std::vector<std::string>& names) {
        if (names.size() == columns_.size())
            for (std::size_t c = 0; c < names.size(); ++c) columns_[c].csv = names[c];
        return *this;
    }
    /// The same rows in another order (indices into the rows).
    [[nodiscard]] Table reordered(const std::vector<std::size_t>& order) const {
        Table out(columns_);
        for (std::size_t i : order) out.rows_.push_back(rows_.at(i));
        return out;
    }
    [[nodiscard]] std::string csv() const {
        std::string out;
        // (appends, not "," + field: GCC 12's -Wrestrict misfires on const char* + std::string&& at -O3)
        bool first = true;
        for (const Column& column : columns_)
            if (!column.csv.empty()) {
                if (!first) out += ',';
                out += csv_field(column.csv);
                first = false;
            }
        out += '\n';
        for (const auto& row : rows_) {
            if (row.empty()) continue;  // rules are for terminals
            first = true;
            for (std::size_t c = 0; c < columns_.size(); ++c) {
                if (columns_[c].csv.empty()) continue;
                if (!first) out += ',';
                if (c < row.size()) out += csv_field(row[c].csv_value());
                first = false;
            }
            out += '\n';
        }
        return out;
    }
    /// The rows as JSON objects keyed by the columns' JSON keys.
    [[nodiscard]] nlohmann::json json() const {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& row : rows_) {
            if (row.empty()) continue;
            nlohmann::json object = nlohmann::json::object();
            for (std::size_t c = 0; c < columns_.size() && c < row.size(); ++c)
                if (!columns_[c].json.empty() && row[c].in_json) object[columns_[c].json] = row[c].value;
            out.push_back(std::move(object));
        }
        return out;
    }
    [[nodiscard]] std::string render() const {
        std::vector<std::size_t> shown;
        for (std::size_t c = 0; c < columns_.size(); ++c)
            if (!columns_[c].title.empty()) shown.push_back(c);
        std::vector<std::size_t> width(shown.size());
        for (std::size_t i = 0; i < shown.size(); ++i) width[i] = display_width(columns_[shown[i]].title);
        for (const auto& row : rows_)
            for (std::size_t i = 0; i < shown.size(); ++i)
                if (shown[i] < row.size()) width[i] = std::max(width[i], display_width(row[shown[i]].text));
        std::string out;
        const auto line = [&](const auto& text_of) {
            for (std::size_t i = 0; i < shown.size(); ++i) {
                const std::string cell = text_of(shown[i]);
                const std::string pad(width[i] - display_width(cell), ' ');
                out += columns_[shown[i]].right ? pad + cell : cell + pad;
                out += i + 1 < shown.size() ? "  " : "";
            }
            while (!out.empty() && out.back() == ' ') out.pop_back();
            out += '\n';
        };
        std::size_t total = 0;
        for (std::size_t w : width) total += w + 2;
        const std::string ruler = std::string(total - 2, '-') + '\n';
        line([&](std::size_t c) { return columns_[c].title; });
        out += ruler;
        for (const auto& row : rows_) {
            if (row.empty()) out += ruler;
            else line([&](std::size_t c) { return c < row.size() ? row[c].text : std::string(); });
        }
        return out;
    }

private:
    std::vector<Column> columns_;
    std::vector<std::vector<Cell>> rows_;
};

/// Whether a report's field can never be negative: times, sizes, rates, powers, counts (by the unit its name
/// carries, SPEC.md §6).
inline bool never_negative(std::string_view key) {
    for (std::string_view suffix : {"_s", "_bytes", "_gb_s", "_w", "_per_s", "_per_joule", "_per_watt", "_tflops"})
        if (key.size() > suffix.size() && key.substr(key.size() - suffix.size()) == suffix) return true;
    for (std::string_view name : {"batch", "gpus", "nodes", "max_batch", "flops", "bytes", "params", "kernel_count",
                                  "capacity", "weights", "gradients", "activations", "optimizer_state", "cost",
                                  "gpu_hours"})
        if (key == name) return true;
    return false;
}

/// The last line of defence before anything is printed: every number of a report is finite, and none that can
/// never be negative is (a NaN, an inf or a negative memory printed with exit 0 would be a lie).  Fails naming the
/// field; the inputs that led there are the user's to check, or a bug to report.
inline void check_figures(const nlohmann::json& j, const std::string& path = "") {
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) {
            const std::string at = path.empty() ? it.key() : path + "." + it.key();
            if (it->is_number() && never_negative(it.key()) && it->get<double>() < 0)
                throw roofplan::Error(std::string("the report's ").append(at).append(" came out negative (")
                                          .append(raw_number(it->get<double>()))
                                          .append("), which is impossible: the inputs are out of the model's range"));
            check_figures(*it, at);
        }
    } else if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i) check_figures(j[i], path + "[" + std::to_string(i) + "]");
    } else if (j.is_number_float() && !std::isfinite(j.get<double>())) {
        throw roofplan::Error(std::string("the report's ").append(path).append(
            " is not a finite number: the inputs are out of the model's range (e.g. a device figure far from any GPU's)"));
    }
}

/// Prints what --json (`document()`) or --csv (the rows of `table`) asks for; false when neither was asked (the
/// terminal's view is wanted).  Either way the document's figures are checked first (check_figures), so the
/// terminal's view, printed after, shows checked figures too.
template <class Document>
bool print_machine(bool as_json, bool as_csv, const Table& table, Document&& document) {
    const nlohmann::json checked = document();
    check_figures(checked);
    check_figures(table.json());
    if (as_json) std::cout << checked.dump(2) << '\n';
    else if (as_csv) std::cout << table.csv();
    return as_json || as_csv;
}

inline nlohmann::json shape_json(const Shape& s) {
    nlohmann::json dims = nlohmann::json::array();
    for (int i = 0; i < s.rank(); ++i) dims.push_back(s[i]);
    return dims;
}

}  // namespace roofplan::cli

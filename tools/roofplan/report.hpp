// tools/roofplan/report.hpp — table and JSON rendering for the CLI (the library headers never print).
#pragma once

#include <roofplan/roofplan.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <string>
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

/// A text table with aligned columns: numbers right, text left.
class Table {
public:
    explicit Table(std::vector<std::string> header, std::vector<bool> right_aligned)
        : header_(std::move(header)), right_(std::move(right_aligned)) {}
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    void rule() { rows_.emplace_back(); }
    [[nodiscard]] std::string render() const {
        std::vector<std::size_t> width(header_.size());
        for (std::size_t c = 0; c < header_.size(); ++c) width[c] = header_[c].size();
        for (const auto& row : rows_)
            for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
        std::string out;
        auto line = [&](const std::vector<std::string>& row) {
            for (std::size_t c = 0; c < header_.size(); ++c) {
                const std::string& cell = c < row.size() ? row[c] : std::string();
                const std::string pad(width[c] - cell.size(), ' ');
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
        line(header_);
        ruler();
        for (const auto& row : rows_) {
            if (row.empty()) ruler(); else line(row);
        }
        return out;
    }

private:
    std::vector<std::string> header_;
    std::vector<bool> right_;
    std::vector<std::vector<std::string>> rows_;
};

inline nlohmann::json shape_json(const Shape& s) {
    nlohmann::json dims = nlohmann::json::array();
    for (int i = 0; i < s.rank(); ++i) dims.push_back(s[i]);
    return dims;
}

}  // namespace roofplan::cli

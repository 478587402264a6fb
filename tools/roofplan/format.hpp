// tools/roofplan/format.hpp — every number formatter of the CLI and its charts, in one place.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

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

/// Fixed-point with `digits` decimals: fixed(3.14159, 2) == "3.14"; any double, however large (1e300 has 301 digits
/// before the point: the text is sized to fit, never cut).
inline std::string fixed(double v, int digits) {
    char buf[64];
    const int n = std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    if (n >= 0 && n < static_cast<int>(sizeof buf)) return buf;
    std::string out(static_cast<std::size_t>(n) + 1, '\0');
    std::snprintf(out.data(), out.size(), "%.*f", digits, v);
    out.pop_back();
    return out;
}

/// `digits` significant digits ("%g"): significant(0.0172, 3) == "0.0172".
inline std::string significant(double v, int digits = 3) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
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
    return significant(v, digits) + prefixes[index];
}

/// The shortest text that reads back as the same double (CSV keeps full precision, no SI prefixes).
inline std::string raw_number(double value) {
    if (!std::isfinite(value)) return "";
    char buffer[64];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    return ec == std::errc() ? std::string(buffer, end) : std::string();
}

/// A datasheet peak in TFLOPS: "67.0", "5.50", or "-" where the device has none.
inline std::string peak_text(double tflops) { return tflops > 0 ? fixed(tflops, tflops < 10 ? 2 : 1) : "-"; }

/// Seconds for tables: "1.234 s", "4.560 ms", "789.0 us".
inline std::string seconds_text(double s) {
    if (s >= 1) return fixed(s, 3) + " s";
    if (s >= 1e-3) return fixed(s * 1e3, 3) + " ms";
    return fixed(s * 1e6, 1) + " us";
}

/// Seconds for chart labels: "1.23 s", "4.56 ms", "789 µs".
inline std::string time_label(double s) {
    if (s >= 1) return fixed(s, 2) + " s";
    if (s >= 1e-3) return significant(s * 1e3, 3) + " ms";
    return significant(s * 1e6, 3) + " µs";
}

/// Seconds in the unit that suits an axis whose maximum is `axis_max`: "250 µs", "1.5 ms", "2 s".
inline std::string seconds_label(double s, double axis_max) {
    const double scale = axis_max >= 1 ? 1 : axis_max >= 1e-3 ? 1e3 : 1e6;
    const char* unit = axis_max >= 1 ? " s" : axis_max >= 1e-3 ? " ms" : " µs";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g%s", std::round(s * scale * 1000) / 1000, unit);
    return buf;
}

/// Hours for plans: "3.2 d" from two days on, "5.25 h" from an hour on, else "42.0 min".
inline std::string duration_text(double seconds) {
    const double hours = seconds / 3600.0;
    if (hours >= 48) return fixed(hours / 24.0, 1) + " d";
    if (hours >= 1) return fixed(hours, 2) + " h";
    return fixed(seconds / 60.0, 1) + " min";
}

/// Bytes in GiB: "1.50 GiB".
inline std::string gib(std::int64_t bytes) { return fixed(static_cast<double>(bytes) / 1073741824.0, 2) + " GiB"; }

/// A signed fraction as a percentage: "+12.3%", "-4.0%", "nan".
inline std::string percent(double fraction, int digits = 1) {
    if (!std::isfinite(fraction)) return "nan";
    return (fraction >= 0 ? "+" : "") + fixed(100 * fraction, digits) + "%";
}
/// A fraction as a percentage: "12.3%".
inline std::string abs_percent(double fraction, int digits = 1) { return fixed(100 * fraction, digits) + "%"; }

/// A rate for tables: one decimal from 10 on, else three significant digits (host GEMMs: 0.0172 TFLOPS).
inline std::string rate_text(double v) { return v >= 10 || v <= 0 ? fixed(v, 1) : significant(v, 3); }

/// A decade for log axes: 1e9 → "1G", 1e-2 → "0.01" (followed by `unit`).
inline std::string decade_label(double v, const char* unit) {
    static const char* prefixes[] = {"", "k", "M", "G", "T", "P"};
    const int e = static_cast<int>(std::lround(std::log10(v)));
    char buf[32];
    if (e < 0) {
        std::snprintf(buf, sizeof buf, "%g%s", v, unit);
        return buf;
    }
    const int group = std::min(e / 3, 5);
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
    return fixed(v, v >= 99.5 ? 0 : v >= 9.95 ? 1 : 2) + " " + prefixes[group] + unit;
}

}  // namespace roofplan::cli

// kernels/common/report.hpp — helpers every validation program shares for its JSON report: JSON strings and
// numbers written by hand (no dependency), CUDA version text, and the UTC date.  Included by each kernels/*/*.cu.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>

namespace roofplan::bench {

// A JSON string literal.  Quotes, backslashes and control characters are escaped; valid UTF-8 passes
// through; bytes that are not valid UTF-8 (argv need not be) become U+FFFD so the output stays valid.
inline std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            switch (c) {
                case '"': out += "\\\""; break;
                case '\\': out += "\\\\"; break;
                case '\b': out += "\\b"; break;
                case '\f': out += "\\f"; break;
                case '\n': out += "\\n"; break;
                case '\r': out += "\\r"; break;
                case '\t': out += "\\t"; break;
                default:
                    if (c < 0x20 || c == 0x7F) {
                        char buf[8];
                        std::snprintf(buf, sizeof buf, "\\u%04x", c);
                        out += buf;
                    } else {
                        out += char(c);
                    }
            }
            ++i;
            continue;
        }
        // Multi-byte UTF-8: lead byte, continuation count, smallest code point allowed (no overlongs).
        std::size_t len = 0;
        std::uint32_t cp = 0, min_cp = 0;
        if (c >= 0xC2 && c <= 0xDF) len = 2, cp = c & 0x1Fu, min_cp = 0x80;
        else if (c >= 0xE0 && c <= 0xEF) len = 3, cp = c & 0x0Fu, min_cp = 0x800;
        else if (c >= 0xF0 && c <= 0xF4) len = 4, cp = c & 0x07u, min_cp = 0x10000;
        bool valid = len != 0 && i + len <= s.size();
        for (std::size_t k = 1; valid && k < len; ++k) {
            const auto cc = static_cast<unsigned char>(s[i + k]);
            valid = (cc & 0xC0u) == 0x80u;
            cp = (cp << 6) | (cc & 0x3Fu);
        }
        valid = valid && cp >= min_cp && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
        if (valid) {
            out.append(s.substr(i, len));
            i += len;
        } else {
            out += "\\ufffd";
            ++i;
        }
    }
    return out + "\"";
}
// A JSON number; JSON has no NaN or infinity, so those become null.
inline std::string json_number(double x) {
    if (!std::isfinite(x)) return "null";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", x);
    return buf;
}
inline std::string utc_now_iso8601() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}
inline std::string version_string(int v) {  // CUDA encodes versions as 1000 * major + 10 * minor
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}
inline std::string json_number(std::uint64_t x) { return std::to_string(x); }
inline std::string json_number(std::int64_t x) { return std::to_string(x); }
inline std::string json_number(long long x) { return std::to_string(x); }
inline std::string json_number(int x) { return std::to_string(x); }
inline std::string json_optional(const std::optional<int>& x) { return x ? std::to_string(*x) : "null"; }
inline std::string json_optional(const std::optional<double>& x) { return x ? json_number(*x) : "null"; }
inline std::string json_bool(bool b) { return b ? "true" : "false"; }

}  // namespace roofplan::bench

// kernels/common/report.hpp — the JSON report every validation program writes: values written by hand (no
// dependency), an ordered object builder (Json) and the report file itself.  The names come from
// include/roofplan/io/report_schema.hpp; docs/report-schemas.md describes each program's fields.
//
//   Json record;
//   record.set(field::precision, "fp16").set(field::m, 4096).set(field::time_s_median, 1.2e-4);
//   report.records(key::results, {record});
#pragma once

#include "check.hpp"
#include "timing.hpp"

#include <roofplan/io/report_schema.hpp>

#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace roofplan::bench {

namespace key = roofplan::io::schema::key;
namespace field = roofplan::io::schema::field;

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

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};

// The JSON text of a bool, number, string, std::optional (empty: null) or std::vector (an array).
template <class T>
std::string to_json(const T& v) {
    if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
    else if constexpr (std::integral<T>) return std::to_string(v);
    else if constexpr (std::floating_point<T>) return json_number(double(v));
    else if constexpr (std::is_convertible_v<const T&, std::string_view>) return json_string(std::string_view(v));
    else if constexpr (is_optional<T>::value) return v ? to_json(*v) : "null";
    else {
        static_assert(is_vector<T>::value, "to_json: a bool, number, string, optional or vector");
        std::string text = "[";
        for (std::size_t i = 0; i < v.size(); ++i) text += (i ? ", " : "") + to_json(v[i]);
        return text + "]";
    }
}

// A JSON object whose fields keep the order they were set in.
class Json {
public:
    template <class T>
    Json& set(std::string_view key, const T& value) {
        return raw(key, to_json(value));
    }
    Json& raw(std::string_view key, std::string json_text) {
        fields_.push_back({std::string(key), std::move(json_text), {}, Kind::value});
        return *this;
    }
    Json& object(std::string_view key, Json value) {
        fields_.push_back({std::string(key), {}, {std::move(value)}, Kind::object});
        return *this;
    }
    Json& records(std::string_view key, std::vector<Json> values) {
        fields_.push_back({std::string(key), {}, std::move(values), Kind::records});
        return *this;
    }
    Json& merge(const Json& other) {
        fields_.insert(fields_.end(), other.fields_.begin(), other.fields_.end());
        return *this;
    }

    // On one line.
    std::string line() const {
        std::string text = "{";
        for (std::size_t i = 0; i < fields_.size(); ++i) {
            const Field& f = fields_[i];
            text += (i ? ", " : "") + json_string(f.key) + ": ";
            if (f.kind == Kind::value) text += f.text;
            else if (f.kind == Kind::object) text += f.children.front().line();
            else text += join(f.children, ", ", "", "");
        }
        return text + "}";
    }
    // Indented: objects as blocks, arrays of records one record a line.
    std::string block(int indent = 0) const {
        if (fields_.empty()) return "{}";
        const std::string pad(std::size_t(indent) + 2, ' ');
        std::string text = "{\n";
        for (std::size_t i = 0; i < fields_.size(); ++i) {
            const Field& f = fields_[i];
            text += pad + json_string(f.key) + ": ";
            if (f.kind == Kind::value) text += f.text;
            else if (f.kind == Kind::object) text += f.children.front().block(indent + 2);
            else text += join(f.children, ",", "\n" + pad + "  ", "\n" + pad);
            text += i + 1 < fields_.size() ? ",\n" : "\n";
        }
        return text + std::string(std::size_t(indent), ' ') + "}";
    }

private:
    enum class Kind { value, object, records };
    struct Field {
        std::string key, text;
        std::vector<Json> children;
        Kind kind;
    };
    // "[" + items, `sep` between them, each after `before` + "]"; "[]" when there are none.
    static std::string join(const std::vector<Json>& items, const char* sep, const std::string& before,
                            const std::string& after) {
        if (items.empty()) return "[]";
        std::string text = "[";
        for (std::size_t i = 0; i < items.size(); ++i) text += (i ? sep : "") + before + items[i].line();
        return text + after + "]";
    }
    std::vector<Field> fields_;
};

// The timing of a case (timing.hpp) as record fields.
inline Json timing_json(const Timing& t) {
    Json j;
    j.set(field::time_s_median, t.median_s).set(field::time_s_min, t.min_s).set(field::time_s_max, t.max_s);
    j.set(field::warm_runs, t.warm_runs).set(field::lead_s, t.lead_s).set(field::host_enqueue_s, t.host_enqueue_s);
    return j.set(field::host_kept_ahead, t.host_kept_ahead);
}

// Writes `text` to `path` through a temporary file and a rename, so that a reader never sees half a report, or
// to stdout when `path` is empty.  Returns 0, or kExitCudaError after writing the report to stdout instead.
inline int write_report(const std::string& path, const std::string& text, bool announce = true) {
    if (path.empty()) {
        std::fputs(text.c_str(), stdout);
        if (std::fflush(stdout) == 0) return 0;
        std::fprintf(stderr, "%s: error: writing the JSON report to stdout failed\n", g_program);
        return kExitCudaError;
    }
    const std::string tmp = path + ".tmp";
    std::FILE* f = std::fopen(tmp.c_str(), "w");
    const bool written = f != nullptr && std::fputs(text.c_str(), f) >= 0;
    if (f == nullptr || std::fclose(f) != 0 || !written || std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::fprintf(stderr, "%s: error: cannot write the JSON report to '%s'; here it is on stdout instead\n",
                     g_program, path.c_str());
        std::fputs(text.c_str(), stdout);
        return kExitCudaError;
    }
    if (announce) std::fprintf(stderr, "\n  JSON report written to %s\n", path.c_str());
    return 0;
}

}  // namespace roofplan::bench

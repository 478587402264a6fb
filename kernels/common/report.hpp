// kernels/common/report.hpp — the rows every validation program reports: JSON values written by hand (no
// dependency), an ordered object (Json) that is both a report record and a row of the table on stderr, and the
// report file.  The names come from include/roofplan/io/report_schema.hpp; docs/report-schemas.md describes them.
//
//   Json row;
//   row.set(field::kernel, "copy").set(field::median_s, 1.2e-4);
//   print_rows({row}, {{field::kernel, "kernel", -11}, {field::median_s, "median us", 12, "%.2f", 1e6}});
#pragma once

#include "check.hpp"
#include "timing.hpp"

#include <roofplan/io/report_schema.hpp>

#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace roofplan::bench {

namespace key = roofplan::io::schema::key;
namespace field = roofplan::io::schema::field;

// A JSON string literal.  Quotes, backslashes and control characters are escaped; valid UTF-8 passes through;
// bytes that are not valid UTF-8 (argv need not be) become U+FFFD so the output stays valid.
inline std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            const char* escape = c == '"'    ? "\\\""
                                 : c == '\\' ? "\\\\"
                                 : c == '\n' ? "\\n"
                                 : c == '\t' ? "\\t"
                                             : nullptr;
            char buf[8] = {char(c), 0};
            if (escape == nullptr && (c < 0x20 || c == 0x7F)) std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += escape != nullptr ? escape : buf;
            ++i;
            continue;
        }
        // Multi-byte UTF-8: lead byte, continuation count, smallest code point allowed (no overlongs).
        const std::size_t len = c >= 0xC2 && c <= 0xDF   ? 2
                                : c >= 0xE0 && c <= 0xEF ? 3
                                : c >= 0xF0 && c <= 0xF4 ? 4
                                                         : 0;
        std::uint32_t cp = c & (len == 2 ? 0x1Fu : len == 3 ? 0x0Fu : 0x07u);
        bool valid = len != 0 && i + len <= s.size();
        for (std::size_t k = 1; valid && k < len; ++k) {
            valid = (static_cast<unsigned char>(s[i + k]) & 0xC0u) == 0x80u;
            cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
        }
        valid = valid && cp >= (len == 2 ? 0x80u : len == 3 ? 0x800u : 0x10000u) && cp <= 0x10FFFF &&
                !(cp >= 0xD800 && cp <= 0xDFFF);
        out += valid ? std::string(s.substr(i, len)) : "\\ufffd";
        i += valid ? len : 1;
    }
    return out + "\"";
}

template <class T>
constexpr bool is_optional = false;
template <class T>
constexpr bool is_optional<std::optional<T>> = true;

// The JSON text of a bool, number (not finite: null), string, std::optional (empty: null) or std::vector.
template <class T>
std::string to_json(const T& v) {
    if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
    else if constexpr (std::integral<T>) return std::to_string(v);
    else if constexpr (std::floating_point<T>) {
        char buf[32] = "null";
        if (std::isfinite(v)) std::snprintf(buf, sizeof buf, "%.9g", double(v));
        return buf;
    } else if constexpr (std::is_convertible_v<const T&, std::string_view>) return json_string(std::string_view(v));
    else if constexpr (is_optional<T>) return v ? to_json(*v) : "null";
    else {
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
        fields_.push_back({std::string(key), std::move(json_text), {}, false});
        return *this;
    }
    Json& object(std::string_view key, Json value) { return add(key, {std::move(value)}, false); }
    Json& records(std::string_view key, std::vector<Json> values) { return add(key, std::move(values), true); }
    Json& merge(const Json& other) {
        fields_.insert(fields_.end(), other.fields_.begin(), other.fields_.end());
        return *this;
    }
    // The JSON text of a field set with set() or raw(), or null.
    const std::string* find(std::string_view key) const {
        for (const Field& f : fields_)
            if (f.key == key && f.children.empty()) return &f.text;
        return nullptr;
    }

    // On one line (indent < 0), or indented: objects as blocks, arrays of records one record a line.
    std::string text(int indent = -1) const {
        if (fields_.empty()) return "{}";
        const bool lines = indent >= 0;
        const std::string pad = lines ? "\n" + std::string(std::size_t(indent) + 2, ' ') : " ";
        std::string out = "{";
        for (std::size_t i = 0; i < fields_.size(); ++i) {
            const Field& f = fields_[i];
            out.append(i ? "," : "").append(lines || i ? pad : "").append(json_string(f.key)).append(": ");
            if (f.is_array) out += array_text(f.children, lines ? pad : "");
            else out += f.children.empty() ? f.text : f.children.front().text(lines ? indent + 2 : -1);
        }
        return out + (lines ? "\n" + std::string(std::size_t(indent), ' ') : "") + "}";
    }

private:
    struct Field {
        std::string key, text;
        std::vector<Json> children;
        bool is_array;
    };
    static std::string array_text(const std::vector<Json>& items, const std::string& pad) {
        if (items.empty()) return "[]";
        std::string out = "[";
        for (std::size_t k = 0; k < items.size(); ++k)
            out.append(k ? "," : "").append(pad.empty() ? (k ? " " : "") : pad + "  ").append(items[k].text());
        return out + pad + "]";
    }
    Json& add(std::string_view key, std::vector<Json> children, bool is_array) {
        fields_.push_back({std::string(key), {}, std::move(children), is_array});
        return *this;
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

// A column of the table on stderr: a record field, its heading and width (negative: left-aligned), and for numbers
// a printf format applied to the value times `scale`.
struct Column {
    std::string_view key;
    const char* heading;
    int width;
    const char* format = "%.2f";
    double scale = 1;
};

// The records as a table on stderr, one row a record: the table and the report are the same rows.
inline void print_rows(const std::vector<Json>& records, const std::vector<Column>& columns) {
    std::fprintf(stderr, " ");
    for (const Column& c : columns) std::fprintf(stderr, " %*s", c.width, c.heading);
    std::fprintf(stderr, "\n");
    for (const Json& r : records) {
        std::fprintf(stderr, " ");
        for (const Column& c : columns) {
            const std::string* text = r.find(c.key);
            std::string cell = text == nullptr || *text == "null" ? "n/a" : *text;
            if (cell.front() == '"') cell = cell.substr(1, cell.size() - 2);
            else if (cell != "n/a" && cell != "true" && cell != "false") {
                char buf[64];
                std::snprintf(buf, sizeof buf, c.format, std::strtod(cell.c_str(), nullptr) * c.scale);
                cell = buf;
            }
            std::fprintf(stderr, " %*s", c.width, cell.c_str());
        }
        std::fprintf(stderr, "\n");
    }
}

// Writes `text` to `path` through a temporary file and a rename, so that a reader never sees half a report, or
// to stdout when `path` is empty.  Returns 0, or kExitCudaError after writing the report to stdout instead.
inline int write_report(const std::string& path, const std::string& text, bool announce = true) {
    const std::string tmp = path + ".tmp";
    std::FILE* f = path.empty() ? stdout : std::fopen(tmp.c_str(), "w");
    bool written = f != nullptr && std::fputs(text.c_str(), f) >= 0;
    if (!path.empty())
        written = f != nullptr && std::fclose(f) == 0 && written && std::rename(tmp.c_str(), path.c_str()) == 0;
    else written = written && std::fflush(stdout) == 0;
    if (!written) {
        std::fprintf(stderr, "%s: error: cannot write the JSON report to '%s'%s\n", g_program,
                     path.empty() ? "stdout" : path.c_str(), path.empty() ? "" : "; here it is on stdout instead");
        if (!path.empty()) std::fputs(text.c_str(), stdout);
        return kExitCudaError;
    }
    if (announce && !path.empty()) std::fprintf(stderr, "\n  JSON report written to %s\n", path.c_str());
    return 0;
}

}  // namespace roofplan::bench

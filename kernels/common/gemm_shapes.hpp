// kernels/common/gemm_shapes.hpp — the matrix-product shapes of roofplan-gemm and roofplan-dp4a: --sizes LIST
// (squares), --shape MxNxK[xCOUNT] (repeatable) and --shapes-file FILE (validation/shapes/zoo_gemm.txt's format).
#pragma once

#include "args.hpp"

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roofplan::bench {

struct GemmShape {
    std::int64_t m = 0, n = 0, k = 0, count = 1;  // count: a strided batch of products of this shape
    std::string label, origin;  // origin, for messages: "--sizes", "--shape", "FILE:LINE" or "default"
};

inline std::string shape_text(const GemmShape& s) {
    std::string t = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    return s.count == 1 ? t : t + " (count " + std::to_string(s.count) + ")";
}

inline std::optional<std::uint64_t> to_unsigned(std::string_view text) {
    std::uint64_t value = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
    return value;
}

// A matrix dimension or batch count: a positive integer that the libraries take (at most 2^31 - 1).
inline std::int64_t parse_dim(std::string_view what, std::string_view text, const std::string& where) {
    constexpr std::int64_t kMaxDim = std::numeric_limits<std::int32_t>::max();
    const auto v = to_unsigned(text);
    const std::string head = where + ": " + std::string(what);
    if (!v) usage_error(head + " must be a positive integer, got '" + std::string(text) + "'");
    if (*v == 0) usage_error(head + " must be positive, got 0");
    if (*v > std::uint64_t(kMaxDim))
        usage_error(head + " " + std::string(text) + " is larger than " + std::to_string(kMaxDim) +
                    ", the largest size the libraries take");
    return std::int64_t(*v);
}

// "MxNxK", or "MxNxKxCOUNT" when `with_count`.
inline GemmShape parse_shape_spec(std::string_view spec, bool with_count) {
    std::string norm(spec);
    for (char& ch : norm) ch = ch == 'X' ? 'x' : ch;
    const auto parts = split(norm, 'x');
    const std::string where = "--shape '" + std::string(spec) + "'";
    if (parts.size() != 3 && !(with_count && parts.size() == 4))
        usage_error(where + (with_count ? ": expected MxNxK or MxNxKxCOUNT" : ": expected MxNxK") +
                    " (positive integers separated by 'x')");
    GemmShape s{parse_dim("M", parts[0], where), parse_dim("N", parts[1], where), parse_dim("K", parts[2], where), 1,
                "", "--shape"};
    if (parts.size() == 4) s.count = parse_dim("COUNT", parts[3], where);
    return s;
}

// Reads "M N K [COUNT] [LABEL]" lines; '#' starts a comment, blank lines are skipped.  A fourth field that is
// not a number starts the label (COUNT is then 1); the label is the rest of the line.
inline void read_shapes_file(std::vector<GemmShape>& shapes, const std::string& path) {
    std::ifstream in(path);
    if (!in) usage_error("cannot open --shapes-file '" + path + "': " + std::strerror(errno));
    const std::size_t before = shapes.size();
    std::string line;
    for (int line_no = 1; std::getline(in, line); ++line_no) {
        const std::string where = path + ":" + std::to_string(line_no);
        std::istringstream fields(line.substr(0, line.find('#')));
        std::string m, n, k, fourth, label;
        if (!(fields >> m)) continue;
        if (!(fields >> n >> k)) usage_error(where + ": expected 'M N K [COUNT] [LABEL]', got '" + line + "'");
        GemmShape s{parse_dim("M", m, where), parse_dim("N", n, where), parse_dim("K", k, where), 1, "", where};
        if (fields >> fourth && (to_unsigned(fourth) || fourth.front() == '-'))
            s.count = parse_dim("COUNT", fourth, where);
        else s.label = fourth;
        std::getline(fields, label);
        s.label += label;
        while (!s.label.empty() && std::isspace(static_cast<unsigned char>(s.label.back()))) s.label.pop_back();
        while (!s.label.empty() && std::isspace(static_cast<unsigned char>(s.label.front()))) s.label.erase(0, 1);
        shapes.push_back(s);
    }
    if (in.bad()) usage_error("error reading --shapes-file '" + path + "'");
    if (shapes.size() == before) usage_error("--shapes-file '" + path + "' holds no shapes");
}

// --sizes and --shape (with COUNT and --shapes-file when `batched`).
inline Cli& add_shape_options(Cli& cli, std::vector<GemmShape>& shapes, bool batched) {
    cli.option("--sizes", "LIST", "square sizes M = N = K, comma-separated (default 1024,2048,4096,8192)",
               [&shapes](std::string_view v) {
                   for (const std::string_view t : split(v, ',')) {
                       const std::int64_t s = parse_dim("size", t, "--sizes '" + std::string(v) + "'");
                       shapes.push_back({s, s, s, 1, "", "--sizes"});
                   }
               });
    cli.option("--shape", batched ? "SPEC" : "MxNxK",
               batched ? "one shape MxNxK or MxNxKxCOUNT (COUNT products of that shape: a strided\nbatch); repeatable"
                       : "one shape; repeatable (replaces the default sizes)",
               [&shapes, batched](std::string_view v) { shapes.push_back(parse_shape_spec(v, batched)); });
    if (batched)
        cli.option("--shapes-file", "FILE", "shapes, one a line: M N K [COUNT] [LABEL]; '#' starts a comment",
                   [&shapes](std::string_view v) {
                       if (v.empty()) usage_error("--shapes-file needs a non-empty path");
                       read_shapes_file(shapes, std::string(v));
                   });
    return cli;
}

// The default shapes when none was given: squares of 1024, 2048, 4096 and 8192.
inline void default_shapes(std::vector<GemmShape>& shapes) {
    if (shapes.empty())
        for (const std::int64_t s : {1024, 2048, 4096, 8192}) shapes.push_back({s, s, s, 1, "", "default"});
}

}  // namespace roofplan::bench

// roofplan/io/file.hpp — reading a file with a size limit (every reader's first step; see io/read.hpp for JSON).
//
//     const std::string text = roofplan::io::read_text("net.json");  // at most ReadLimits::max_file_bytes
#pragma once

#include <roofplan/detail/checked.hpp>

#include <cstdint>
#include <fstream>
#include <string>

namespace roofplan::io {

/// The limits of every file reader (documented in docs/model-files.md, "Limits").
struct ReadLimits {
    static constexpr std::int64_t max_file_bytes = std::int64_t{64} << 20;  ///< 64 MiB
    static constexpr int max_depth = 64;                                    ///< objects and arrays inside each other
    static constexpr std::int64_t max_onnx_bytes = std::int64_t{2} << 30;   ///< 2 GiB: protobuf's own limit
};

/// Reads a whole file, at most `limit` bytes (a larger file, or an endless one such as /dev/zero, is an error
/// once the limit is passed); errors name it.
inline std::string read_text(const std::string& file, std::int64_t limit = ReadLimits::max_file_bytes) {
    std::ifstream in(file, std::ios::binary);
    if (!in) roofplan::detail::fail("cannot open '", file, "'");
    std::string text;
    char buffer[1 << 16];
    while (in) {
        in.read(buffer, sizeof buffer);
        text.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (static_cast<std::int64_t>(text.size()) > limit)
            roofplan::detail::fail(file, ": larger than ", limit >> 20, " MiB (the limit of a file roofplan reads)");
    }
    if (in.bad()) roofplan::detail::fail("cannot read '", file, "'");
    return text;
}

}  // namespace roofplan::io

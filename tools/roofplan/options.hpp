// tools/roofplan/options.hpp — the option groups several subcommands share (device files, the model source, systems)
// and the parsers of option values (lists, sizes).  An option means the same on every command that has it.
#pragma once

#include "cli.hpp"
#include "format.hpp"
#include "option_checks.hpp"
#include "report.hpp"

#include <roofplan/io/json.hpp>  // links_from_json
#include <roofplan/io/model_file.hpp>
#include <roofplan/roofplan.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <list>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace roofplan::cli {

using json = nlohmann::json;

/// --device-file: user devices besides the catalog.
struct DeviceOptions {
    std::vector<std::string> device_files;
    [[nodiscard]] DeviceCatalog catalog() const {
        DeviceCatalog c;
        for (const std::string& f : device_files) io::load_devices(c, f);
        return c;
    }
};

inline void add_device_options(CLI::App* app, DeviceOptions& o) {
    app->add_option("--device-file", o.device_files,
                    "JSON file with extra devices (schema of data/devices.json); repeatable");
}

/// Adds --model/-m (required unless --model-file), --model-file, --strict and --input to `app`.
inline void add_model_source(CLI::App* app, io::ModelSource& s) {
    auto* zoo = app->add_option("--model,-m", s.model, "Model id (see `roofplan models`)");
    auto* file = app->add_option("--model-file", s.model_file,
                                 "Model file instead of --model: .onnx (ONNX graph) or .json (roofplan-model/1, "
                                 "see docs/model-files.md)");
    zoo->excludes(file);
    file->excludes(zoo);
    app->add_flag("--strict", s.strict, "ONNX: fail on operators roofplan cannot count instead of reporting them");
    app->add_option("--input", s.inputs, "ONNX: a graph input that carries data (repeatable; default: detected)");
}

/// --seq and --image-size (given: in range; absent: the model's own size).
inline void add_size_options(CLI::App* app, io::ModelSource& s) {
    app->add_option("--seq,-s", s.seq, "Sequence length (transformers, GNMT)")->check(integer_in(1, OptionLimits::max_seq));
    app->add_option("--image-size", s.image_size, "Square input resolution (CNNs)")
        ->check(integer_in(1, OptionLimits::max_image_size));
}

/// The warning for an operator an ONNX import left out (the CLI prints it after "roofplan: warning: "; the Python
/// package makes it a Python warning with the same text).
inline std::string skipped_operator_warning(const std::string& model_file, const io::SkippedOperator& u) {
    return joined(model_file, ": ", std::to_string(u.count), "x ", u.op_type, " not counted (", u.reason, "; first: '",
                  u.first_node, "'); --strict makes this an error");
}

/// What tells one version of a model file from another without reading it: its absolute path, modification time
/// and size (all empty for a zoo model; a file that cannot be read is keyed by its name and read to say why).
struct FileStamp {
    std::string path;
    std::int64_t modified_ns = 0;
    std::int64_t bytes = -1;
    friend bool operator==(const FileStamp&, const FileStamp&) = default;
};

inline FileStamp file_stamp(const std::string& file) {
    if (file.empty()) return {};
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(file, ec);
    FileStamp stamp{ec ? file : absolute.lexically_normal().string()};
    const auto modified = std::filesystem::last_write_time(file, ec);
    if (!ec)
        stamp.modified_ns =
            std::chrono::duration_cast<std::chrono::nanoseconds>(modified.time_since_epoch()).count();
    const auto bytes = std::filesystem::file_size(file, ec);
    if (!ec) stamp.bytes = static_cast<std::int64_t>(bytes);
    return stamp;
}

/// The model a command names; a file is read once per process and version (compare resolves the model for every
/// system; the Python package runs many commands in one process, and a file edited or replaced since is read
/// again), the 64 most recently used kept.  The operators an ONNX import left out are reported on stderr.
inline const io::LoadedModel& cached_model(const io::ModelSource& s) {
    using Key = std::tuple<std::string, FileStamp, std::int64_t, std::int64_t, bool, std::vector<std::string>>;
    constexpr std::size_t capacity = 64;
    static std::list<std::pair<Key, io::LoadedModel>> cache;  // most recently used first; references stay valid
    const Key key{s.model, file_stamp(s.model_file), s.seq, s.image_size, s.strict, s.inputs};
    const auto hit = std::find_if(cache.begin(), cache.end(), [&](const auto& entry) { return entry.first == key; });
    if (hit != cache.end()) {
        cache.splice(cache.begin(), cache, hit);
        return cache.front().second;
    }
    cache.emplace_front(key, io::load_model(s));
    if (cache.size() > capacity) cache.pop_back();  // the least recently used: no command of this run holds it
    const io::LoadedModel& loaded = cache.front().second;
    for (const io::SkippedOperator& u : loaded.unsupported)
        std::cerr << "roofplan: warning: " << skipped_operator_warning(s.model_file, u) << '\n';
    return loaded;
}

/// What an ONNX import did, for JSON reports (null for other models).
inline json import_json(const io::LoadedModel& m) {
    if (m.source != "onnx") return nullptr;
    json unsupported = json::array();
    for (const io::SkippedOperator& u : m.unsupported)
        unsupported.push_back({{"op_type", u.op_type}, {"count", u.count}, {"first_node", u.first_node},
                               {"reason", u.reason}});
    return {{"unsupported", std::move(unsupported)}, {"views_skipped", m.views_skipped},
            {"constant_nodes_skipped", m.constant_nodes_skipped}, {"nodes_fused", m.nodes_fused}, {"notes", m.notes}};
}

/// "a,b,c" → {"a", "b", "c"}.
inline std::vector<std::string> parse_list(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        const std::size_t comma = text.find(',', start);
        out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

/// What is wrong with a list of counts "1,2,4,8" (each an integer in [1, high]), or "".
inline std::string int_list_problem(const std::string& text, std::int64_t high = OptionLimits::max_gpus) {
    for (const std::string& item : parse_list(text)) {
        std::int64_t v = 0;
        const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
        if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || v < 1 || v > high)
            return joined("'", item, "' is not a positive integer (at most ", std::to_string(high),
                          "; expected e.g. 1,2,4,8)");
    }
    return {};
}

/// A CLI11 check of a list of counts (int_list_problem).
inline CLI::Validator int_list(std::int64_t high = OptionLimits::max_gpus) {
    return CLI::Validator([high](std::string& text) { return int_list_problem(text, high); }, "N,N,...");
}

/// Parses "1,2,4,8" into integers in [1, high]; `what` names the option in errors.
inline std::vector<int> parse_int_list(const std::string& text, std::string_view what,
                                       std::int64_t high = OptionLimits::max_gpus) {
    if (const std::string problem = int_list_problem(text, high); !problem.empty()) fail(what, ": ", problem);
    std::vector<int> out;
    for (const std::string& item : parse_list(text)) out.push_back(std::stoi(item));
    return out;
}

/// Parses "64MB", "1GiB", "4096", "1.5GB" (decimal k/M/G, binary Ki/Mi/Gi; B optional).
inline std::int64_t parse_bytes(const std::string& text) {
    double value = 0;
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ec != std::errc() || !(value > 0)) fail("'", text, "' is not a size; use e.g. 4096, 64KB, 1MiB, 1GB");
    std::string unit(ptr, end);
    for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!unit.empty() && unit.back() == 'b') unit.pop_back();
    static const std::map<std::string, double> scales = {{"", 1},     {"k", 1e3},       {"m", 1e6},
                                                         {"g", 1e9},  {"ki", 1024.0},   {"mi", 1024.0 * 1024},
                                                         {"gi", 1024.0 * 1024 * 1024}};
    const auto scale = scales.find(unit);
    if (scale == scales.end()) fail("'", text, "': unknown size unit; accepted: B, KB, MB, GB, KiB, MiB, GiB");
    const double bytes = value * scale->second;
    if (bytes > 1e15) fail("'", text, "' is too large (at most 1 PB)");
    return static_cast<std::int64_t>(bytes);
}

/// The systems a command sees: the built-ins plus those of --system-file (same id: replaces).  A file is read once
/// per process and version, as `cached_model` reads models (a file edited or replaced is read again); the 16 most
/// recently used kept (a command keeps pointers to its systems while it runs: only older files leave).
inline const std::vector<System>& system_catalog(const std::string& file) {
    if (file.empty()) return builtin_systems();
    constexpr std::size_t capacity = 16;
    static std::list<std::pair<FileStamp, std::vector<System>>> cache;  // most recently used first
    const FileStamp key = file_stamp(file);
    const auto hit = std::find_if(cache.begin(), cache.end(), [&](const auto& entry) { return entry.first == key; });
    if (hit != cache.end()) {
        cache.splice(cache.begin(), cache, hit);
        return cache.front().second;
    }
    cache.emplace_front(key, io::load_systems(file));
    if (cache.size() > capacity) cache.pop_back();
    return cache.front().second;
}

/// The system `id` among the built-ins and those of --system-file.
inline const System& pick_system(const std::string& id, const std::string& file) {
    if (file.empty()) return find_system(id);
    return find_system(id, system_catalog(file));
}

/// The link parameters of a calibrated profile file (roofplan calibrate with roofplan-nccl reports), or the
/// defaults when no profile is given or it carries none.
inline LinkParameters profile_links(const std::string& profile) {
    return profile.empty() ? LinkParameters{} : io::links_from_json(io::parse(io::read_text(profile), profile), profile);
}

}  // namespace roofplan::cli

// kernels/common/args.hpp — the command line of every validation program: "--flag value" or "--flag=value",
// -h/--help generated from the declared options, and the options every program shares (RunOptions).
//
//   Options o;
//   Cli cli("roofplan-x", "What the program measures.");
//   cli.number("--samples", "output elements checked per case", o.samples, 1, 1000000).common(o.run);
//   cli.parse(argc, argv);   // exits 0 after --help, 2 (kExitUsage) on a bad command line
#pragma once

#include "check.hpp"
#include "timing.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

namespace roofplan::bench {

[[noreturn]] inline void usage_error(const std::string& message) {
    std::fprintf(stderr, "%s: error: %s\nRun '%s --help' for usage.\n", g_program, message.c_str(), g_program);
    std::exit(kExitUsage);
}

// A non-negative integer in [lo, hi]; anything else is a usage error that names the flag.
inline std::uint64_t parse_unsigned(std::string_view flag, std::string_view text, std::uint64_t lo, std::uint64_t hi) {
    std::uint64_t value = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec == std::errc::invalid_argument || ptr != text.data() + text.size())
        usage_error(std::string(flag) + " expects a non-negative integer, got '" + std::string(text) + "'");
    if (ec == std::errc::result_out_of_range || value < lo || value > hi)
        usage_error(std::string(flag) + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                    ", got '" + std::string(text) + "'");
    return value;
}

inline std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> parts;
    for (std::size_t start = 0, pos = 0; pos != std::string_view::npos; start = pos + 1)
        parts.push_back(s.substr(start, (pos = s.find(sep, start)) == std::string_view::npos ? pos : pos - start));
    return parts;
}

// Adds to `out` the choices of a comma-separated list of `names` or "all", as E(index in names), in order, each
// once; an unknown name is a usage error that names `what` (and `flag`, if given) and the accepted names.
template <class E>
void add_choices(std::vector<E>& out, std::string_view list, const std::vector<std::string_view>& names,
                 std::string_view what, std::string_view flag = {}) {
    for (const std::string_view item : split(list, ',')) {
        const auto at = std::find(names.begin(), names.end(), item);
        if (at == names.end() && item != "all") {
            std::string accepted;
            for (const std::string_view n : names) accepted += std::string(n) + ", ";
            usage_error("unknown " + std::string(what) + " '" + std::string(item) + "'" +
                        (flag.empty() ? "" : " in " + std::string(flag)) + "; accepted: " + accepted + "all");
        }
        for (int i = 0; i < int(names.size()); ++i)
            if ((item == "all" || i == at - names.begin()) && std::find(out.begin(), out.end(), E(i)) == out.end())
                out.push_back(E(i));
    }
}

// What every program takes (NCCL: no --device and no --warmup-ms) and what its provenance records.
struct RunOptions {
    TimingOptions timing;
    std::optional<std::uint64_t> seed;
    std::string json_path;  // empty: stdout
    int device = 0;
    std::optional<std::string> git_sha;
    std::vector<std::string> command_line;  // argv
};

class Cli {
public:
    using Setter = std::function<void(std::string_view)>;

    Cli(const char* program, std::string about) : about_(std::move(about)) { g_program = program; }

    // An option with a value (`value_name` empty: a flag without one).  `help` may hold '\n' for more lines.
    Cli& option(std::string name, std::string value_name, std::string help, Setter set) {
        options_.push_back({std::move(name), std::move(value_name), std::move(help), std::move(set)});
        return *this;
    }
    // An integer option (int, std::uint64_t or std::optional<std::uint64_t>); the help shows the default.
    template <class T>
    Cli& number(std::string name, std::string help, T& target, std::uint64_t lo, std::uint64_t hi) {
        if constexpr (!std::is_same_v<T, std::optional<std::uint64_t>>)
            help += " (default " + std::to_string(target) + ")";
        const std::string flag = name;
        return option(std::move(name), "N", std::move(help),
                      [&target, flag, lo, hi](std::string_view v) { target = T(parse_unsigned(flag, v, lo, hi)); });
    }
    Cli& footer(std::string text) {
        footer_ = std::move(text);
        return *this;
    }

    // --repeats, --warmup, --warmup-ms (unless NCCL), --seed, --json, --device (unless NCCL), --git-sha.
    Cli& common(RunOptions& run, bool single_device = true) {
        run_ = &run;
        number("--repeats", "timed runs per case; median, min and max are reported", run.timing.repeats, 1, 100000);
        number("--warmup", "untimed runs per case just before the timed ones", run.timing.warmup, 0, 1000000);
        if (single_device)
            number("--warmup-ms", "milliseconds of back-to-back runs per case first, for the clocks",
                   run.timing.warmup_ms, 0, 600000);
        number("--seed", "seed of the input data (default: from the clock; printed and in the JSON)", run.seed, 0,
               std::numeric_limits<std::uint64_t>::max());
        option("--json", "PATH", "write the JSON report to PATH instead of stdout", [&run](std::string_view v) {
            if (v.empty()) usage_error("--json needs a non-empty path");
            run.json_path = std::string(v);
        });
        if (single_device) number("--device", "CUDA device index", run.device, 0, 1023);
        return option("--git-sha", "SHA", "source revision for the report (default: the ROOFPLAN_GIT_SHA compile\n"
                      "definition, else $ROOFPLAN_GIT_SHA, else \"unknown\")",
                      [&run](std::string_view v) { run.git_sha = std::string(v); });
    }

    void parse(int argc, char** argv) const {
        if (run_ != nullptr) run_->command_line.assign(argv, argv + argc);
        for (int i = 1; i < argc; ++i) {
            const std::string_view arg = argv[i];
            if (arg == "-h" || arg == "--help") print_help();
            if (arg.substr(0, 2) != "--") usage_error("unexpected argument '" + std::string(arg) + "'");
            const auto eq = arg.find('=');
            const std::string_view flag = arg.substr(0, eq);
            const auto o =
                std::find_if(options_.begin(), options_.end(), [&](const Option& c) { return c.name == flag; });
            if (o == options_.end()) usage_error("unknown option '" + std::string(flag) + "'");
            if (eq != std::string_view::npos && o->value_name.empty())
                usage_error(std::string(flag) + " takes no value");
            if (eq != std::string_view::npos || o->value_name.empty()) {
                o->set(eq == std::string_view::npos ? std::string_view() : arg.substr(eq + 1));
                continue;
            }
            if (i + 1 >= argc) usage_error(std::string(flag) + " needs a value");
            o->set(argv[++i]);
        }
    }

private:
    struct Option {
        std::string name, value_name, help;
        Setter set;
    };
    [[noreturn]] void print_help() const {
        std::printf("Usage: %s [options]\n%s\n\nOptions:\n", g_program, about_.c_str());
        for (const Option& o : options_) {
            std::string help = o.help;
            for (std::size_t at = help.find('\n'); at != std::string::npos; at = help.find('\n', at + 1))
                help.insert(at + 1, 22, ' ');
            std::printf("  %-19s %s\n", (o.name + (o.value_name.empty() ? "" : " " + o.value_name)).c_str(),
                        help.c_str());
        }
        std::printf("  %-19s show this help\n\n%sProgress and the table go to stderr, the JSON report to stdout (or "
                    "--json PATH).\nExit status: 0 ok, 1 verification failed, 2 bad command line, 3 CUDA, library or "
                    "I/O error,\n77 no CUDA device.\n", "-h, --help", footer_.c_str());
        std::exit(0);
    }
    std::string about_, footer_;
    std::vector<Option> options_;
    RunOptions* run_ = nullptr;
};

}  // namespace roofplan::bench

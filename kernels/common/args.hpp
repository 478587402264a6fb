// kernels/common/args.hpp — the command line of every validation program: "--flag value" or "--flag=value",
// -h/--help generated from the declared options, and the options every program shares (RunOptions).
//
//   RunOptions run;
//   Cli cli("roofplan-x", "What the program measures.");
//   cli.common(run).number("--samples", "output elements checked per case", samples, 1, 1000000);
//   cli.parse(argc, argv);   // exits 0 after --help, 2 (kExitUsage) on a bad command line
#pragma once

#include "check.hpp"
#include "timing.hpp"

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
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec == std::errc::invalid_argument || ptr != end)
        usage_error(std::string(flag) + " expects a non-negative integer, got '" + std::string(text) + "'");
    if (ec == std::errc::result_out_of_range || value < lo || value > hi)
        usage_error(std::string(flag) + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                    ", got '" + std::string(text) + "'");
    return value;
}

inline std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> parts;
    for (std::size_t start = 0;;) {
        const std::size_t pos = s.find(sep, start);
        parts.push_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
        if (pos == std::string_view::npos) return parts;
        start = pos + 1;
    }
}

// What every program takes (NCCL: no --device and no --warmup-ms) and what provenance records.
struct RunOptions {
    TimingOptions timing;
    std::optional<std::uint64_t> seed;
    std::string json_path;  // empty: stdout
    int device = 0;
    std::optional<std::string> git_sha;
    std::vector<std::string> command_line;  // argv, for the report
};

class Cli {
public:
    using Setter = std::function<void(std::string_view)>;

    Cli(const char* program, std::string about) : about_(std::move(about)) { g_program = program; }

    // An option with a value.  `help` may hold '\n' for more lines.
    Cli& option(std::string name, std::string value_name, std::string help, Setter set) {
        options_.push_back({std::move(name), std::move(value_name), std::move(help), std::move(set)});
        return *this;
    }
    Cli& flag(std::string name, std::string help, std::function<void()> set) {
        return option(std::move(name), "", std::move(help), [set = std::move(set)](std::string_view) { set(); });
    }
    // An integer option (int, std::uint64_t or std::optional<std::uint64_t>); the help shows the default.
    template <class T>
    Cli& number(std::string name, std::string help, T& target, std::uint64_t lo, std::uint64_t hi) {
        if constexpr (!std::is_same_v<T, std::optional<std::uint64_t>>) help += " (default " + std::to_string(target) + ")";
        const std::string flag = name;
        return option(std::move(name), "N", std::move(help),
                      [&target, flag, lo, hi](std::string_view v) { target = T(parse_unsigned(flag, v, lo, hi)); });
    }
    Cli& footer(std::string text) {
        footer_ += text;
        return *this;
    }

    Cli& timing(TimingOptions& t, bool with_warmup_ms = true);
    Cli& common(RunOptions& run, bool with_device = true, bool with_warmup_ms = true);
    void parse(int argc, char** argv) const;

private:
    struct Option {
        std::string name, value_name, help;
        Setter set;
    };
    void print_help() const;
    std::string about_, footer_;
    std::vector<Option> options_;
    RunOptions* run_ = nullptr;
};

inline Cli& Cli::timing(TimingOptions& t, bool with_warmup_ms) {
    number("--repeats", "timed runs per case; median, min and max are reported", t.repeats, 1, 100000);
    number("--warmup", "untimed runs per case just before the timed ones", t.warmup, 0, 1000000);
    if (with_warmup_ms) number("--warmup-ms", "milliseconds of back-to-back runs per case first, for the clocks",
                               t.warmup_ms, 0, 600000);
    return *this;
}

inline Cli& Cli::common(RunOptions& run, bool with_device, bool with_warmup_ms) {
    run_ = &run;
    timing(run.timing, with_warmup_ms);
    number("--seed", "seed of the input data (default: from the clock; printed and in the JSON)", run.seed, 0,
           std::numeric_limits<std::uint64_t>::max());
    option("--json", "PATH", "write the JSON report to PATH instead of stdout", [&run](std::string_view v) {
        if (v.empty()) usage_error("--json needs a non-empty path");
        run.json_path = std::string(v);
    });
    if (with_device) number("--device", "CUDA device index", run.device, 0, 1023);
    return option("--git-sha", "SHA",
                  "source revision for the report (default: the ROOFPLAN_GIT_SHA compile\n"
                  "definition, else $ROOFPLAN_GIT_SHA, else \"unknown\")",
                  [&run](std::string_view v) { run.git_sha = std::string(v); });
}

inline void Cli::print_help() const {
    std::printf("Usage: %s [options]\n%s\n\nOptions:\n", g_program, about_.c_str());
    for (const Option& o : options_) {
        const std::string head = o.name + (o.value_name.empty() ? "" : " " + o.value_name);
        std::string help = o.help;
        for (std::size_t at = help.find('\n'); at != std::string::npos; at = help.find('\n', at + 1))
            help.insert(at + 1, 22, ' ');
        std::printf("  %-19s %s\n", head.c_str(), help.c_str());
    }
    std::printf("  %-19s %s\n\n%s", "-h, --help", "show this help", footer_.c_str());
    std::printf("Exit status: 0 ok, 1 verification failed, 2 bad command line, 3 CUDA or I/O error, 77 no CUDA device.\n");
}

inline void Cli::parse(int argc, char** argv) const {
    if (run_ != nullptr) run_->command_line.assign(argv, argv + argc);
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            print_help();
            std::exit(0);
        }
        if (arg.substr(0, 2) != "--") usage_error("unexpected argument '" + std::string(arg) + "'");
        const auto eq = arg.find('=');
        const std::string_view flag = arg.substr(0, eq);
        const Option* o = nullptr;
        for (const Option& candidate : options_)
            if (candidate.name == flag) o = &candidate;
        if (o == nullptr) usage_error("unknown option '" + std::string(flag) + "'");
        if (o->value_name.empty() && eq != std::string_view::npos) usage_error(std::string(flag) + " takes no value");
        if (o->value_name.empty() || eq != std::string_view::npos) {
            o->set(eq == std::string_view::npos ? std::string_view() : arg.substr(eq + 1));
            continue;
        }
        if (i + 1 >= argc) usage_error(std::string(flag) + " needs a value");
        o->set(argv[++i]);
    }
}

}  // namespace roofplan::bench

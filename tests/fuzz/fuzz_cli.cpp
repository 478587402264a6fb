// libFuzzer target: the command line (tools/roofplan/run.hpp).  An input is an argument list, one argument per
// line (the first line names the subcommand); any list must end in a parse error, a clear roofplan error (exit 2), an
// infeasible plan (exit 1) or a result (exit 0) — never a crash, a hang, or an "internal error" (exit 3, which
// aborts here so that libFuzzer records the input).
//
// Subcommands whose arguments parse and pass their checks run, with their output discarded, except those that
// write files (--svg, -o/--output, --update-doc) or read directories of recorded reports (calibrate, validate):
// those stop after the checks, so that the fuzzer writes nothing and reads only what the inputs name.  With
// ROOFPLAN_FUZZ_CLI_PARSE_ONLY set in the environment no subcommand runs: the parsing and the checks alone
// (scripts/fuzz_long.sh's `cli-parse`), about 1.4 times as fast: the named subcommand's options are built for each
// input (tools/roofplan/run.cpp), and that dominates under the sanitizers.
#include "../../tools/roofplan/run.hpp"

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

namespace {

/// A stream buffer that drops what it is given (std::cout and std::cerr while a command runs).
class Discard : public std::streambuf {
protected:
    int overflow(int c) override { return traits_type::not_eof(c); }
    std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

const bool parse_only = std::getenv("ROOFPLAN_FUZZ_CLI_PARSE_ONLY") != nullptr;

bool writes_or_scans(const CLI::App& sub) {
    if (parse_only) return true;
    if (sub.get_name() == "calibrate" || sub.get_name() == "validate") return true;
    for (const CLI::Option* o : sub.get_options())
        for (const std::string& name : o->get_lnames())
            if ((name == "svg" || name == "output" || name == "update-doc") && o->count() > 0) return true;
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 4096) return 0;  // an argument list, not a file
    std::vector<std::string> args{"roofplan"};
    std::string current;
    for (std::size_t i = 0; i < size; ++i) {
        const char c = static_cast<char>(data[i]);
        if (c == '\n') {
            args.push_back(current);
            current.clear();
        } else if (c != '\0') {
            current.push_back(c);
        }
    }
    if (!current.empty()) args.push_back(current);
    if (args.size() > 64) return 0;
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());

    static Discard discard;
    std::streambuf* const out = std::cout.rdbuf(&discard);
    std::streambuf* const err = std::cerr.rdbuf(&discard);
    const int status = roofplan::cli::run(static_cast<int>(argv.size()), argv.data(),
                                          [](const CLI::App& sub) { return !writes_or_scans(sub); });
    std::cout.rdbuf(out);
    std::cerr.rdbuf(err);
    if (status == 3) {
        std::fprintf(stderr, "fuzz_cli: internal error (exit 3) for the arguments:");
        for (const std::string& a : args) std::fprintf(stderr, " [%s]", a.c_str());
        std::fprintf(stderr, "\n");
        std::abort();
    }
    return 0;
}

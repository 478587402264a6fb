// tools/roofplan/run.hpp — the command line as a function: what main() runs, and what the fuzz target of the command
// line (tests/fuzz/fuzz_cli.cpp) calls with its inputs.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace roofplan::cli {

/// Parses `argv` (argv[0] is the program), runs the subcommand it names and returns the exit status: 0 ok, 1
/// infeasible or a check failed, 2 usage or input error, 3 internal error (docs/cli.md).  Output goes to std::cout
/// and std::cerr.  `may_run`, when given, is asked before a parsed and checked subcommand does its work; false skips
/// the work (status 0).
int run(int argc, const char* const* argv, std::function<bool(const CLI::App&)> may_run = {});

}  // namespace roofplan::cli

// tools/roofplan/cli.hpp — the CLI's plumbing: its errors, the flag each library field is given by, and how a
// subcommand (one .cpp file each, CLI11's subcommands-in-files pattern) is registered and run.
#pragma once

#include <roofplan/error.hpp>

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

namespace roofplan::cli {

/// Throws a roofplan::Error with the message the parts make (the CLI's own errors may name its flags).
template <class... Parts>
[[noreturn]] void fail(const Parts&... parts) {
    std::ostringstream message;
    (message << ... << parts);
    throw roofplan::Error(message.str());
}

/// The command-line flag that gives a library field: "dataset" → "--dataset", "batch_per_gpu" → "--batch".  Errors
/// from the library refer to fields; the CLI writes them as its flags.
inline std::string flag_name(std::string_view field) {
    struct Special {
        std::string_view field, flag;
    };
    static constexpr Special specials[] = {
        {"batch_per_gpu", "--batch"},
        {"price_per_gpu_hour", "--price P"},
        {"price_by_id", "--price ID=P,ID=P"},
    };
    for (const Special& s : specials)
        if (s.field == field) return std::string(s.flag);
    std::string flag = "--";
    for (char c : field) flag += c == '_' ? '-' : c;
    return flag;
}

/// An error's message as the CLI prints it: library fields written as the flags that give them.
inline std::string message_of(const roofplan::Error& e) { return e.message(flag_name); }

/// One run of the command line (run.hpp): the exit status the subcommand returns, and whether a subcommand, once its
/// options are parsed and checked, does its work (an empty `may_run` lets every one run; the fuzz target of the
/// command line skips the slow ones).
struct Session {
    int exit_code = 0;
    std::function<bool(const CLI::App&)> may_run;
};

/// Runs `run` when subcommand `sub` was given; its return value becomes the process's exit status.  --json and
/// --csv together are an error on every command.
inline void on_run(CLI::App* sub, Session& session, std::function<int()> run) {
    sub->callback([sub, &session, run = std::move(run)] {
        const CLI::Option* as_json = sub->get_option_no_throw("--json");
        const CLI::Option* as_csv = sub->get_option_no_throw("--csv");
        if (as_json && as_csv && as_json->count() && as_csv->count())
            fail(sub->get_name(), ": give --json or --csv, not both");
        if (session.may_run && !session.may_run(*sub)) return;
        session.exit_code = run();
    });
}

/// A subcommand (one .cpp file each, CLI11's subcommands-in-files pattern): its name, what it does, and how it adds
/// its options to its CLI11 App and what it runs.
struct Command {
    std::string name;
    std::string description;
    std::function<void(CLI::App*, Session&)> attach;
};

/// The subcommand whose flags `add_options` adds to a fresh Options and which runs `run` with them.
template <class Options>
Command command(std::string name, std::string description, void (*add_options)(CLI::App*, Options&),
                int (*run)(const Options&)) {
    return {std::move(name), std::move(description), [add_options, run](CLI::App* sub, Session& session) {
                auto o = std::make_shared<Options>();
                add_options(sub, *o);
                on_run(sub, session, [o, run] { return run(*o); });
            }};
}

/// --json and --csv, with what each prints.
inline void add_output_flags(CLI::App* app, bool& json, bool& csv, const std::string& json_help = "Print JSON",
                             const std::string& csv_help = "Print CSV (RFC 4180, raw numbers)") {
    app->add_flag("--json", json, json_help);
    app->add_flag("--csv", csv, csv_help);
}

}  // namespace roofplan::cli

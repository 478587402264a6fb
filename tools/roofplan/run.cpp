// tools/roofplan/run.cpp — the roofplan command line: the subcommands (one file each) and error handling.
#include "run.hpp"

#include "cli.hpp"
#include "commands.hpp"

#include <roofplan/version.hpp>

#include <algorithm>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <utility>

namespace roofplan::cli {

int run(int argc, const char* const* argv, std::function<bool(const CLI::App&)> may_run) {
    CLI::App app{"roofplan: deep-learning workload arithmetic and roofline performance planning"};
    app.set_version_flag("--version", std::string(roofplan::version));
    app.require_subcommand(1);
    Session session;
    session.may_run = std::move(may_run);
    const auto& commands = all_commands;
    // The top-level app has flags only (--help, --version), so the first argument that is not an option names the
    // subcommand.  Only that one gets its options: adding a CLI11 option checks it against every option already
    // there, and adding all thirteen commands' options costs more than most commands' work (the fuzz target of the
    // command line builds the app for every input).  The others stay listed with their descriptions, so --help and
    // the errors read the same; when no argument names a command exactly, every command gets its options as before.
    std::string_view named;
    for (int i = 1; i < argc; ++i)
        if (argv[i][0] != '-') {
            named = argv[i];
            break;
        }
    const bool known = std::any_of(commands.begin(), commands.end(), [&](const Command* c) { return c->name == named; });
    for (const Command* c : commands) {
        CLI::App* sub = app.add_subcommand(c->name, c->description);
        if (!known || c->name == named) c->attach(sub, session);
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help and --version exit 0; every command-line error exits 2, like the other errors of bad input.
        return app.exit(e) == 0 ? 0 : 2;
    } catch (const roofplan::Error& e) {
        std::cerr << "roofplan: error: " << message_of(e) << '\n';
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "roofplan: internal error: " << e.what() << '\n';
        return 3;
    }
    return session.exit_code;
}

}  // namespace roofplan::cli

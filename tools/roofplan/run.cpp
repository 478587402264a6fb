// tools/roofplan/run.cpp — the roofplan command line: the subcommands (one file each) and error handling.
#include "run.hpp"

#include "cli.hpp"
#include "commands.hpp"

#include <roofplan/version.hpp>

#include <exception>
#include <iostream>
#include <string>
#include <utility>

namespace roofplan::cli {

int run(int argc, const char* const* argv, std::function<bool(const CLI::App&)> may_run) {
    CLI::App app{"roofplan: deep-learning workload arithmetic and roofline performance planning"};
    app.set_version_flag("--version", std::string(roofplan::version));
    app.require_subcommand(1);
    Session session;
    session.may_run = std::move(may_run);
    for (const Command* c : {&models_command, &inspect_command, &devices_command, &predict_command, &systems_command,
                             &collective_command, &roofline_command, &compare_command, &scaling_command,
                             &calibrate_command, &validate_command, &explain_command, &plan_command})
        c->attach(app.add_subcommand(c->name, c->description), session);
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

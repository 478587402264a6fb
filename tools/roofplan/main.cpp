// tools/roofplan/main.cpp — the roofplan command-line interface: the subcommands (one file each) and error handling.
#include "cli.hpp"
#include "commands.hpp"

#include <roofplan/version.hpp>

#include <CLI/CLI.hpp>

#include <iostream>
#include <string>

int main(int argc, char** argv) {
    CLI::App app{"roofplan: deep-learning workload arithmetic and roofline performance planning"};
    app.set_version_flag("--version", std::string(roofplan::version));
    app.require_subcommand(1);
    int exit_code = 0;
    using namespace roofplan::cli;
    for (const Command* c : {&models_command, &inspect_command, &devices_command, &predict_command, &systems_command,
                             &collective_command, &roofline_command, &compare_command, &scaling_command,
                             &calibrate_command, &validate_command, &explain_command, &plan_command})
        c->attach(app.add_subcommand(c->name, c->description), exit_code);
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
    return exit_code;
}

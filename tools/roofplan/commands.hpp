// tools/roofplan/commands.hpp — the subcommands, one .cpp file each (CLI11's subcommands-in-files pattern), in the
// order `roofplan --help` lists them.
#pragma once

#include "cli.hpp"

#include <array>

namespace roofplan::cli {

extern const Command models_command, inspect_command, devices_command, predict_command, systems_command,
    collective_command, roofline_command, compare_command, scaling_command, calibrate_command, validate_command,
    explain_command, plan_command;

/// Every subcommand, in the order `roofplan --help` lists them (run.cpp; the Python package lists their options).
inline const std::array<const Command*, 13> all_commands{
    &models_command,     &inspect_command,  &devices_command, &predict_command, &systems_command,
    &collective_command, &roofline_command, &compare_command, &scaling_command, &calibrate_command,
    &validate_command,   &explain_command,  &plan_command};

}  // namespace roofplan::cli

// tools/roofplan/validate.cpp — `roofplan validate`: predicted vs measured, case by case (validate_cmd.hpp).
#include "commands.hpp"
#include "validate_cmd.hpp"

namespace roofplan::cli {

const Command validate_command = command<ValidateOptions>(
    "validate", "Predicted vs measured per case (default and calibrated profiles); the recorded validation tables",
    add_validate_options, run_validate);

}  // namespace roofplan::cli

// tools/roofplan/calibrate.cpp — `roofplan calibrate`: fit an efficiency profile to micro-benchmark reports
// (calibrate_cmd.hpp).
#include "calibrate_cmd.hpp"
#include "commands.hpp"

namespace roofplan::cli {

const Command calibrate_command = command<CalibrateOptions>(
    "calibrate", "Fit an efficiency profile to GEMM and bandwidth micro-benchmark reports (never end-to-end runs)",
    add_calibrate_options, run_calibrate);

}  // namespace roofplan::cli

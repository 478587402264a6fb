// roofplan/io/calibrate.hpp — forwarding header, kept while tools/roofplan/system_cmd.hpp includes it for
// io::links_from_json.  Calibration is its own stage now: the fitter is calibration/fit.hpp (typed samples in, a
// Calibration out), the reports are read by io/reports.hpp, and the profile's JSON (links_from_json,
// calibration_json) is in io/json.hpp.  Include those instead.
#pragma once

#include <roofplan/io/json.hpp>

// roofplan/calibration/calibration.hpp — what a calibration returns: the fitted parameters and how well they
// reproduce the measurements they were fitted to.  Plain data (the fitter itself is calibration/fit.hpp, which
// needs Eigen); io/json.hpp writes it as a roofplan-profile/1 file.
#pragma once

#include <roofplan/calibration/profile.hpp>
#include <roofplan/system/topology.hpp>

#include <string>
#include <vector>

namespace roofplan::calibration {

/// How well a fitted parameter reproduces the measurements it was fitted to.
struct FitQuality {
    std::string what;     ///< "bf16_tensor", "memory", "conv.bf16_tensor (nhwc)", "links.nvswitch"
    int samples = 0;
    double value = 0;     ///< the fitted efficiency or factor
    double median_rel_error = 0;
    double worst_rel_error = 0;
    double fixed_s = 0;   ///< GEMMs: the fitted fixed cost per kernel; links: the base cost per collective (seconds)
};

/// An efficiency profile fitted to one GPU's micro-benchmarks (and, for the kernel classes' SM-side terms, the
/// operator cases of another GPU: calibration/operators.hpp).
struct Calibration {
    EfficiencyProfile profile;
    std::string device_id;
    std::vector<FitQuality> quality;
    std::vector<std::string> sources;  ///< the reports the samples came from
};

/// The collective parameters fitted to NCCL measurements on one system.
struct LinkCalibration {
    LinkParameters links;
    LinkKind kind = LinkKind::nvswitch;  ///< the link kind the fit is for (the rings' limiting link)
    FitQuality quality;
};

}  // namespace roofplan::calibration

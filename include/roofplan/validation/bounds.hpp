// roofplan/validation/bounds.hpp — holding summary figures of a recorded set to bounds.
//
// A bound names a figure (an |error| summary such as "h200.gemm.bf16_tensor.median"), the bar it should meet and,
// where the recorded data misses the bar, the figure it is held to as a regression bound (recorded data is fixed,
// so only a change to the model or the fit can move it).  The bounds themselves are the project's data
// (validation/results/bounds.json, read by io/bounds.hpp), not the library's.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace roofplan::validation {

/// A bar on one figure (a fraction) and the regression bound it is held to where the bar is missed.
struct Bound {
    std::string id;    ///< the figure: "h200.gemm.all.median", "nccl.allreduce.worst", "e2e.resnet50"
    std::string what;  ///< what it means, for tables
    double bar = 0;    ///< the target
    double held = 0;   ///< the regression bound where the bar is missed (0: the bar itself must hold)
};

/// The bounds of a recorded set, with the title of their table.
struct Bounds {
    std::string title;
    std::vector<Bound> bounds;
};

/// A bound beside the figure achieved.
struct BoundResult {
    Bound bound;
    bool measured = false;  ///< the figure exists (its cases were recorded)
    double value = 0;
    bool met = false;       ///< value <= bar
    bool ok = true;         ///< met, or within the held regression bound (a figure not measured is ok)
};

/// Each bound beside its figure from `figures` (figure id → achieved fraction).
inline std::vector<BoundResult> judge(const std::map<std::string, double>& figures, const Bounds& bounds) {
    std::vector<BoundResult> out;
    for (const Bound& b : bounds.bounds) {
        const auto it = figures.find(b.id);
        if (it == figures.end()) {
            out.push_back({b, false, 0, false, true});
            continue;
        }
        const double v = it->second;
        const bool met = v <= b.bar;
        out.push_back({b, true, v, met, met || (b.held > 0 && v <= b.held)});
    }
    return out;
}

/// Whether every bound holds.
inline bool all_ok(const std::vector<BoundResult>& results) {
    for (const BoundResult& r : results)
        if (!r.ok) return false;
    return true;
}

}  // namespace roofplan::validation

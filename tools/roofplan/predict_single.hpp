// tools/roofplan/predict_single.hpp — what `roofplan predict` computes for one GPU, and its JSON: shared by the
// command and by the Python package (python/), so that both give the same figures under the same field names.
#pragma once

#include "predict_options.hpp"
#include "report.hpp"

#include <string>

namespace roofplan::cli {

/// Where the batches come from (system/input.hpp): one GPU, and every GPU of a system.
struct InputOptions {
    std::string source;          ///< empty: synthetic
    int workers = 0;             ///< data-loader workers per GPU; 0: the GPU's share of the system's cores
    double decode_rate = 0;      ///< images/s per core; 0: the measured default
};

/// One GPU's prediction with its input pipeline (`roofplan predict` without --system).  `predictor` is the
/// model's (a caller that predicts one model many times keeps it).
[[nodiscard]] Prediction predict_single(const Predictor& predictor, const Resolved& r, const PredictOptions& o,
                                        const InputOptions& io);
[[nodiscard]] Prediction predict_single(const Resolved& r, const PredictOptions& o, const InputOptions& io);

/// `roofplan predict --json` of one GPU's prediction.
[[nodiscard]] json prediction_json(const Resolved& r, const Prediction& p);

}  // namespace roofplan::cli

// roofplan/calibration/measured_gemm.hpp — linear-layer GEMMs measured one shape at a time, as the profile carries
// them (the companion of measured_conv.hpp).
//
// cuBLAS's choice of kernel changes with the shape and the number of rows: a small FP32 product with a long
// reduction runs split-K (a memset, a scaling kernel, the partial products and their reduction: four kernels where
// the model had one), vocabulary-sized outputs run fallback kernels, and the efficiency of one kernel family moves
// with the rows by tile quantization.  So a profile may carry, per linear layer (in features, out features, bias),
// math class and pass (forward: x·Wᵀ + b; backward-data: dY·W; backward-weight: dYᵀ·X), the time measured at several
// row counts (tokens: batch × sequence; validation/ops/gemm_bench.py through PyTorch's own operators, fitted by
// `roofplan calibrate`), stored as an efficiency against the pass's roofline on the GPU that measured it
// (max(2·MACs / peak, bytes / bandwidth) / measured seconds, as for convolutions), and the kernels cuBLAS launched
// per call.  Between measured row counts the efficiency is linear in the rows; outside them the nearest one's.
// GEMMs not in the table keep the GEMM model (tile quantization and the math class's efficiency).
#pragma once

#include <roofplan/calibration/measured_conv.hpp>

#include <cstdint>
#include <span>
#include <string_view>
#include <tuple>
#include <vector>

namespace roofplan {

/// A linear layer's weight shape and whether it adds a bias (in the forward GEMM's epilogue), and a 64-bit key of
/// them (FNV-1a over the fields, after a tag that keeps the keys apart from convolutions').
struct GemmGeometry {
    std::int64_t in_features = 0, out_features = 0;
    bool bias = false;
    constexpr bool operator==(const GemmGeometry&) const = default;

    /// Never 0 (0 marks a kernel without a measured shape).
    [[nodiscard]] constexpr std::uint64_t key() const {
        return detail::shape_key({std::int64_t{0x6d6d}, in_features, out_features, std::int64_t{bias ? 1 : 0}});
    }
};

/// One linear-layer pass measured at one row count, as an efficiency against its roofline.
struct MeasuredGemm {
    GemmGeometry geometry;
    std::uint64_t key = 0;  ///< geometry.key()
    MathClass math = MathClass::fp32;
    Pass pass = Pass::forward;
    static constexpr bool conversions = false;  ///< GEMMs have no parts (the generic table's fourth key)
    double rows = 0;                            ///< the product's rows: tokens (batch × sequence)
    double efficiency = 0;
    /// Kernels cuBLAS launched per call (split-K: a memset, a scaling kernel, the product, a reduction).
    double kernels = 0;

    /// The table's order: by shape, math class, pass, then rows.
    [[nodiscard]] constexpr auto order() const { return std::tuple(key, math, pass, conversions, rows); }
    [[nodiscard]] constexpr double coordinate() const { return rows; }
};

/// A sorted table of measured linear-layer GEMMs (a view; see `keep`).
struct MeasuredGemms {
    std::span<const MeasuredGemm> entries;
    MeasuredOn on{};  ///< the GPU that measured them
    detail::MeasuredIndex index{};  ///< the entries' groups and samples (empty: the table is searched)

    [[nodiscard]] constexpr bool empty() const { return entries.empty(); }
    /// Pass `pass` of the linear layer `key` in `math` at `rows`: the efficiency linear between the measured row
    /// counts (the nearest one's outside them) and the nearest one's kernels per call; {} when not in the table.
    [[nodiscard]] constexpr MeasuredPoint at(std::uint64_t key, MathClass math, Pass pass, double rows) const {
        return detail::measured_point(entries, index, key, math, pass, false, rows);
    }
};

/// As `keep` for convolutions: sorted, checked (efficiency in (0, 8], rows in [1, 1e9), kernels per call in
/// [0, 1e4], keys matching their geometry, no two entries of one shape, class, pass and rows) and kept for the life
/// of the process, at most `max_kept_measured_entries` entries in all.
inline MeasuredGemms keep(std::vector<MeasuredGemm> entries, std::string_view where) {
    const auto kept = detail::keep_measured(std::move(entries), where, "measured GEMM", "rows", max_kept_measured_entries);
    return {kept.entries, {}, kept.index};
}

}  // namespace roofplan

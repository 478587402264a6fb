// roofplan/precision.hpp — numeric precision modes and their storage widths.
#pragma once

#include <roofplan/detail/checked.hpp>
#include <roofplan/enum_names.hpp>

#include <array>
#include <cstdint>
#include <string_view>

namespace roofplan {

/// Precision modes (SPEC §5).  amp-* is mixed precision: FP16/BF16 activations and math, FP32 master weights.
enum class Precision { fp32, tf32, amp_fp16, amp_bf16, int8 };

template <>
struct EnumNames<Precision> {
    static constexpr std::string_view field = "precision";
    static constexpr std::array<std::string_view, 5> names{"fp32", "tf32", "amp-fp16", "amp-bf16", "int8"};
    static constexpr std::array<EnumAlias<Precision>, 4> aliases{
        {{"fp16", Precision::amp_fp16}, {"amp_fp16", Precision::amp_fp16}, {"bf16", Precision::amp_bf16},
         {"amp_bf16", Precision::amp_bf16}}};
};

inline constexpr std::array<Precision, 5> all_precisions = enum_values<Precision>();

/// Parses "fp32", "tf32", "amp-fp16", "amp-bf16", "int8" (also "fp16"/"bf16" as the AMP modes).
constexpr Precision parse_precision(std::string_view name) { return parse_enum<Precision>(name); }

/// Bytes per activation (and per weight as the math reads it) in this mode.  TF32 stores FP32; AMP keeps
/// FP32 master weights but the kernels read FP16/BF16 copies; INT8 inference reads and writes 8-bit tensors.
constexpr std::int64_t element_bytes(Precision p) {
    switch (p) {
        case Precision::fp32:
        case Precision::tf32: return 4;
        case Precision::amp_fp16:
        case Precision::amp_bf16: return 2;
        case Precision::int8: return 1;
    }
    return 4;
}

/// Whether a mode is mixed precision (AMP): FP16/BF16 math and activations over FP32 master weights.
constexpr bool is_mixed(Precision p) { return p == Precision::amp_fp16 || p == Precision::amp_bf16; }

/// Bytes per weight-gradient element: FP32 master gradients under AMP, else the mode's element width.
constexpr std::int64_t gradient_bytes(Precision p) { return is_mixed(p) ? 4 : element_bytes(p); }

}  // namespace roofplan

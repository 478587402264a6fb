// roofplan/device/device.hpp — a GPU as the roofline sees it: datasheet peaks per math class, memory, power, links.
//
// Figures are the vendor's dense peaks (never the 2:4-sparse ones), in decimal units: TFLOPS/TOPS = 1e12 per
// second with a multiply-add counting 2, GB/s = 1e9 B/s; memory in GiB, L2 in MiB.  The built-in catalog
// (catalog.hpp) is generated from data/devices.json, which cites a source for every figure.
#pragma once

#include <roofplan/detail/checked.hpp>
#include <roofplan/detail/fixed_string.hpp>
#include <roofplan/detail/suggest.hpp>
#include <roofplan/enum_names.hpp>
#include <roofplan/precision.hpp>
#include <roofplan/units.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace roofplan {

enum class Architecture { kepler, maxwell, pascal, volta, turing, ampere, hopper };

template <>
struct EnumNames<Architecture> {
    static constexpr std::string_view field = "architecture";
    static constexpr std::array<std::string_view, 7> names{"kepler", "maxwell", "pascal", "volta",
                                                           "turing", "ampere",  "hopper"};
};

constexpr Architecture parse_architecture(std::string_view name) { return parse_enum<Architecture>(name); }

/// The math units a kernel can run on.  Which one a precision mode uses is `math_class(device, precision, mode)`.
enum class MathClass { fp64, fp32, tf32_tensor, fp16_tensor_fp16_acc, fp16_tensor_fp32_acc, bf16_tensor, int8_tensor,
                       int8_dp4a };

template <>
struct EnumNames<MathClass> {
    static constexpr std::string_view field = "math_class";
    static constexpr std::string_view what = "math class";
    static constexpr std::array<std::string_view, 8> names{
        "fp64",        "fp32",        "tf32_tensor", "fp16_tensor_fp16_acc", "fp16_tensor_fp32_acc",
        "bf16_tensor", "int8_tensor", "int8_dp4a"};
};

inline constexpr std::array<MathClass, 8> all_math_classes = enum_values<MathClass>();

/// Dense peak rates in TFLOPS (TOPS for INT8); 0 where the device has no such unit.
struct PeakRates {
    double fp64 = 0;
    double fp32 = 0;
    double tf32_tensor = 0;
    double fp16_tensor_fp16_acc = 0;
    double fp16_tensor_fp32_acc = 0;
    double bf16_tensor = 0;  ///< FP32 accumulate
    double int8_tensor = 0;
    double int8_dp4a = 0;

    [[nodiscard]] constexpr double operator[](MathClass m) const {
        switch (m) {
            case MathClass::fp64: return fp64;
            case MathClass::fp32: return fp32;
            case MathClass::tf32_tensor: return tf32_tensor;
            case MathClass::fp16_tensor_fp16_acc: return fp16_tensor_fp16_acc;
            case MathClass::fp16_tensor_fp32_acc: return fp16_tensor_fp32_acc;
            case MathClass::bf16_tensor: return bf16_tensor;
            case MathClass::int8_tensor: return int8_tensor;
            case MathClass::int8_dp4a: return int8_dp4a;
        }
        return 0;
    }
    constexpr bool operator==(const PeakRates&) const = default;
};

struct NvLink {
    int generation = 0;
    int links = 0;
    double gb_s_per_link_per_direction = 0;
    constexpr bool operator==(const NvLink&) const = default;
};

struct Pcie {
    int generation = 0;
    int lanes = 0;
    constexpr bool operator==(const Pcie&) const = default;
};

using DeviceId = FixedString<31>;

/// What the engine runs: training (forward + backward + optimizer) or inference (forward only).
enum class Mode { train, infer };

template <>
struct EnumNames<Mode> {
    static constexpr std::string_view field = "mode";
    static constexpr std::array<std::string_view, 2> names{"train", "infer"};
    static constexpr std::array<EnumAlias<Mode>, 2> aliases{{{"training", Mode::train}, {"inference", Mode::infer}}};
};

constexpr Mode parse_mode(std::string_view name) { return parse_enum<Mode>(name); }

/// A GPU.  A literal type, so catalogs can be constexpr tables.
struct Device {
    DeviceId id;
    FixedString<63> name;
    std::array<DeviceId, 6> aliases{};
    Architecture architecture = Architecture::volta;
    int cc_major = 0;
    int cc_minor = 0;
    FixedString<15> form_factor;  ///< sxm2, sxm4, sxm5, pcie
    FixedString<15> market;       ///< datacenter, workstation, consumer
    int sms = 0;
    int fp32_cores = 0;
    int tensor_cores = 0;
    double base_clock_mhz = 0;
    double boost_clock_mhz = 0;
    PeakRates peak{};
    double memory_gib = 0;
    FixedString<15> memory_type;
    int memory_bus_bits = 0;
    double bandwidth_gb_s = 0;
    double l2_mib = 0;
    double tdp_w = 0;
    NvLink nvlink{};
    Pcie pcie{};

    /// Whether `name` (case-insensitive) is this device's id or one of its aliases.
    [[nodiscard]] constexpr bool answers_to(std::string_view wanted) const {
        if (detail::iequals(id.view(), wanted)) return true;
        for (const DeviceId& a : aliases)
            if (!a.empty() && detail::iequals(a.view(), wanted)) return true;
        return false;
    }
    [[nodiscard]] constexpr bool has_tensor_cores() const { return tensor_cores > 0; }
    /// SM cycles a second at the boost clock (SMs x boost clock): what a kernel's SM-side work scales with.
    [[nodiscard]] constexpr double sm_cycles_per_s() const { return sms * boost_clock_mhz * 1e6; }

    [[nodiscard]] constexpr units::flops_per_second peak_rate(MathClass m) const {
        return units::tflops_per_second(peak[m]);
    }
    [[nodiscard]] constexpr units::bytes_per_second bandwidth() const {
        return units::gigabytes_per_second(bandwidth_gb_s);
    }
    [[nodiscard]] constexpr byte_count memory() const {
        return units::bytes(static_cast<std::int64_t>(memory_gib * 1024.0 * 1024.0 * 1024.0));
    }
    [[nodiscard]] constexpr units::watts tdp() const { return units::in_watts(tdp_w); }
    /// The ridge point: FLOP per byte at which a kernel in this math class stops being memory-bound.
    [[nodiscard]] constexpr units::flops_per_byte ridge(MathClass m) const {
        return units::flops_per_byte::from_value(peak[m] * 1e12 / (bandwidth_gb_s * 1e9));
    }
};

/// The math class that the matrix work (MACs) of `precision` runs on, or an error naming what the device lacks.
///   fp32     → FP32 FMA units (TF32 is off, as `torch.backends.cuda.matmul.allow_tf32 = False`)
///   tf32     → TF32 tensor cores (Ampere and later)
///   amp-fp16 → FP16 tensor cores; training accumulates in FP32 (what cuBLAS/cuDNN use under autocast, and why
///              Turing GeForce cards run it at half rate); inference may accumulate in FP16 (TensorRT's choice)
///   amp-bf16 → BF16 tensor cores (Ampere and later)
///   int8     → INT8 tensor cores (Turing, Ampere, Hopper), else DP4A (Pascal sm_61, Volta); inference only
constexpr MathClass math_class(const Device& d, Precision precision, Mode mode) {
    const auto missing = [&](std::string_view what, std::string_view accepted) {
        detail::fail("device '", d.id.view(), "' (", to_string(d.architecture), ") has no ", what, " for precision ",
                     to_string(precision), "; it supports ", accepted);
    };
    std::string accepted = "fp32";
    if (d.peak.tf32_tensor > 0) accepted += ", tf32";
    if (d.peak.fp16_tensor_fp32_acc > 0 || d.peak.fp16_tensor_fp16_acc > 0) accepted += ", amp-fp16";
    if (d.peak.bf16_tensor > 0) accepted += ", amp-bf16";
    if (d.peak.int8_tensor > 0 || d.peak.int8_dp4a > 0) accepted += ", int8 (inference)";
    switch (precision) {
        case Precision::fp32:
            if (d.peak.fp32 <= 0) missing("FP32 rate", accepted);
            return MathClass::fp32;
        case Precision::tf32:
            if (d.peak.tf32_tensor <= 0) missing("TF32 tensor cores", accepted);
            return MathClass::tf32_tensor;
        case Precision::amp_fp16:
            if (mode == Mode::infer && d.peak.fp16_tensor_fp16_acc > 0) return MathClass::fp16_tensor_fp16_acc;
            if (d.peak.fp16_tensor_fp32_acc <= 0) missing("FP16 tensor cores", accepted);
            return MathClass::fp16_tensor_fp32_acc;
        case Precision::amp_bf16:
            if (d.peak.bf16_tensor <= 0) missing("BF16 tensor cores", accepted);
            return MathClass::bf16_tensor;
        case Precision::int8:
            if (mode == Mode::train)
                detail::fail_about("precision", "precision int8 is for inference only (use ", field_ref("mode"),
                                   " infer); training modes: fp32, tf32, amp-fp16, amp-bf16");
            if (d.peak.int8_tensor > 0) return MathClass::int8_tensor;
            if (d.peak.int8_dp4a <= 0) missing("INT8 tensor cores or DP4A", accepted);
            return MathClass::int8_dp4a;
    }
    return MathClass::fp32;
}

/// Whether the device runs `precision` in `mode` (math_class would succeed), without throwing.
constexpr bool supports(const Device& d, Precision precision, Mode mode) {
    switch (precision) {
        case Precision::fp32: return d.peak.fp32 > 0;
        case Precision::tf32: return d.peak.tf32_tensor > 0;
        case Precision::amp_fp16: return d.peak.fp16_tensor_fp32_acc > 0 || (mode == Mode::infer && d.peak.fp16_tensor_fp16_acc > 0);
        case Precision::amp_bf16: return d.peak.bf16_tensor > 0;
        case Precision::int8: return mode == Mode::infer && (d.peak.int8_tensor > 0 || d.peak.int8_dp4a > 0);
    }
    return false;
}


/// The range of every device figure (validate, and the device-file reader through it): ceilings far above any GPU,
/// floors far below any, so that only typos fall outside (docs/model-files.md, "Limits").
struct DeviceLimits {
    static constexpr double min_peak_tflops = 1e-4, max_peak_tflops = 1e5;
    static constexpr double min_memory_gib = 0.01, max_memory_gib = 1e5;
    static constexpr double min_bandwidth_gb_s = 0.01, max_bandwidth_gb_s = 1e6;
    static constexpr double min_clock_mhz = 1, max_clock_mhz = 1e5;
    static constexpr double min_power_w = 1, max_power_w = 1e5;
    static constexpr double max_l2_mib = 1e5, max_link_gb_s = 1e4;
    static constexpr int max_sms = 1'000'000;
};

/// Checks a device's figures (for user-supplied devices): each within DeviceLimits (positive where a GPU must have
/// them, zero allowed elsewhere), finite.  `where` prefixes the message (e.g. the file name).
constexpr void validate(const Device& d, std::string_view where = "device") {
    // Each figure is positive (or zero where the device may lack it) and below a physical ceiling far above any
    // GPU (DeviceLimits), so that a typo such as 5e-324 or 1e15 is an error, not an inf or a negative capacity.
    using L = DeviceLimits;
    const auto in = [&](double v, double low, double high, std::string_view field, std::string_view range) {
        if (!(v >= low && v <= high))
            detail::fail(where, " '", d.id.view(), "': ", field, " must be ", range);
    };
    if (d.id.empty()) detail::fail(where, ": a device needs an id");
    in(d.sms, 1, L::max_sms, "sms", "a positive number in [1, 1e6]");
    in(d.boost_clock_mhz, L::min_clock_mhz, L::max_clock_mhz, "boost_clock_mhz", "a positive number in [1, 1e5] MHz");
    in(d.base_clock_mhz, 0, L::max_clock_mhz, "base_clock_mhz", ">= 0, in [0, 1e5] MHz");
    if (d.base_clock_mhz > d.boost_clock_mhz)
        detail::fail(where, " '", d.id.view(), "': base_clock_mhz (", static_cast<std::int64_t>(d.base_clock_mhz),
                     ") exceeds boost_clock_mhz (", static_cast<std::int64_t>(d.boost_clock_mhz), ")");
    in(d.peak.fp32, L::min_peak_tflops, L::max_peak_tflops, "peak.fp32", "a positive number in [1e-4, 1e5] TFLOPS");
    for (MathClass m : all_math_classes)
        if (d.peak[m] != 0 && !(d.peak[m] >= L::min_peak_tflops && d.peak[m] <= L::max_peak_tflops))
            detail::fail(where, " '", d.id.view(), "': peak.", to_string(m),
                         " must be in [1e-4, 1e5] TFLOPS (or null: the device has no such unit)");
    in(d.memory_gib, L::min_memory_gib, L::max_memory_gib, "memory_gib", "a positive number in [0.01, 1e5] GiB");
    in(d.bandwidth_gb_s, L::min_bandwidth_gb_s, L::max_bandwidth_gb_s, "bandwidth_gb_s", "a positive number in [0.01, 1e6] GB/s");
    in(d.l2_mib, 0, L::max_l2_mib, "l2_mib", ">= 0, in [0, 1e5] MiB");
    in(d.tdp_w, L::min_power_w, L::max_power_w, "tdp_w", "a positive number in [1, 1e5] W");
    in(d.nvlink.gb_s_per_link_per_direction, 0, L::max_link_gb_s, "nvlink.gb_s_per_link_per_direction",
       ">= 0, in [0, 1e4] GB/s");
    if (d.nvlink.links < 0 || d.nvlink.links > 1000)
        detail::fail(where, " '", d.id.view(), "': nvlink.links must be in [0, 1000]");
    if (d.pcie.generation < 1 || d.pcie.generation > 7 || d.pcie.lanes < 1 || d.pcie.lanes > 32)
        detail::fail(where, " '", d.id.view(), "': pcie must have generation 1..7 and lanes 1..32");
}

}  // namespace roofplan

// tools/roofplan-bench/host_info.hpp — what the runner knows about the host: CPU (from /proc/cpuinfo and sysfs),
// memory, the SIMD width the binary's Eigen uses, and the host described as a roofplan device.
//
// The host "device" is a datasheet-like ESTIMATE, derived, never measured:
//   FP32 peak = threads used × clock × FLOP per cycle per core,
//   FLOP per cycle = SIMD lanes (FP32, of the instruction set this binary's Eigen was compiled for: SSE 4, AVX 8,
//                    AVX-512 16) × 2 vector pipes (assumed: Intel since Haswell, AMD since Zen have two FMA/ALU
//                    pipes) × 2 if FMA is used (a fused multiply-add counts 2 FLOP), else 1;
//   clock = cpufreq's maximum if the kernel exposes it, else the base clock in the model name ("@ 2.80GHz"),
//           else the current "cpu MHz" (each labelled with its source).
// Memory bandwidth has no derivation from /proc: it is --peak-bandwidth (a datasheet figure the user gives), or
// else an ASSUMPTION stated in the report: the best STREAM kernel of the run.  A fit against that assumption
// gives a memory efficiency relative to the best kernel (so at most 1), not to the DRAM peak.
#pragma once

#include <roofplan/device/device.hpp>

#include <Eigen/Core>
#include <nlohmann/json.hpp>

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace roofplan::bench {

using json = nlohmann::json;


/// The clock in a CPU model name ("Intel(R) Xeon(R) Platinum 8480+ @ 2.00GHz" -> 2.0), or 0 when it names none.
/// (Plain parsing: std::regex trips GCC 12's -Wmaybe-uninitialized under the sanitizers.)
inline double ghz_in_model_name(const std::string& model) {
    const auto at = model.find('@');
    if (at == std::string::npos) return 0;
    std::size_t i = at + 1;
    while (i < model.size() && (model[i] == ' ' || model[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < model.size() && ((model[i] >= '0' && model[i] <= '9') || model[i] == '.')) ++i;
    if (i == start) return 0;
    const std::string number = model.substr(start, i - start);
    while (i < model.size() && model[i] == ' ') ++i;
    if (model.compare(i, 3, "GHz") != 0) return 0;
    return std::atof(number.c_str());
}

inline std::string trim(std::string s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    const auto e = s.find_last_not_of(" \t\r\n");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

inline std::optional<std::string> read_first_line(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line)) return std::nullopt;
    return trim(line);
}

/// "48 MiB" / "49152K" / "2048 KB" → bytes; 0 if unreadable.
inline double parse_cache_size(std::string text) {
    text = trim(text);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || !(v > 0)) return 0;
    const std::string unit = trim(end);
    if (unit.empty()) return v;
    const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0])));
    return u == 'K' ? v * 1024 : u == 'M' ? v * 1048576 : u == 'G' ? v * 1073741824 : v;
}

struct CpuInfo {
    std::string model = "unknown CPU";
    int logical_cpus = 1;
    int physical_cores = 1;
    double current_mhz = 0;
    double base_mhz = 0;   ///< 0: unknown
    double max_mhz = 0;    ///< 0: unknown
    std::string clock_source;
    double clock_mhz = 0;  ///< the clock the peak uses
    double llc_bytes = 0;
    std::string llc_source;
    std::vector<std::string> simd_flags;  ///< the CPU's (sse4_2, avx2, fma, avx512f, ...)
    double memory_bytes = 0;
};

inline CpuInfo read_cpu_info() {
    CpuInfo c;
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    std::set<std::pair<std::string, std::string>> cores;  // (physical id, core id)
    std::string physical, flags;
    int logical = 0;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        const std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
        if (key == "processor") ++logical;
        else if (key == "model name" && c.model == "unknown CPU") c.model = value;
        else if (key == "cpu MHz" && c.current_mhz == 0) c.current_mhz = std::atof(value.c_str());
        else if (key == "physical id") physical = value;
        else if (key == "core id") cores.emplace(physical, value);
        else if (key == "cache size" && c.llc_bytes == 0) c.llc_bytes = parse_cache_size(value), c.llc_source = "/proc/cpuinfo cache size";
        else if (key == "flags" && flags.empty()) flags = value;
    }
    c.logical_cpus = std::max(1, logical);
    c.physical_cores = cores.empty() ? c.logical_cpus : static_cast<int>(cores.size());
    std::istringstream fs(flags);
    for (std::string f; fs >> f;)
        if (f == "sse2" || f == "sse4_2" || f == "avx" || f == "avx2" || f == "fma" || f == "avx512f" ||
            f == "avx512_bf16" || f == "amx_tile" || f == "neon" || f == "asimd")
            c.simd_flags.push_back(f);
    // Largest cache level that sysfs lists (index3 is usually the LLC).
    for (int i = 0; i < 8; ++i) {
        const std::string base = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
        if (const auto size = read_first_line(base + "size")) {
            const double bytes = parse_cache_size(*size);
            if (bytes > c.llc_bytes) c.llc_bytes = bytes, c.llc_source = base + "size";
        }
    }
    if (const auto max = read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"))
        c.max_mhz = std::atof(max->c_str()) / 1000.0;
    if (const auto base = read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/base_frequency"))
        c.base_mhz = std::atof(base->c_str()) / 1000.0;
    if (c.base_mhz == 0) c.base_mhz = ghz_in_model_name(c.model) * 1000.0;
    if (c.max_mhz > 0) c.clock_mhz = c.max_mhz, c.clock_source = "cpufreq cpuinfo_max_freq (maximum)";
    else if (c.base_mhz > 0) c.clock_mhz = c.base_mhz, c.clock_source = "base clock (no maximum exposed)";
    else c.clock_mhz = c.current_mhz, c.clock_source = "current cpu MHz (neither maximum nor base exposed)";
    if (!(c.clock_mhz > 0)) c.clock_mhz = 1000, c.clock_source = "unknown: 1000 MHz placeholder";
    std::ifstream mem("/proc/meminfo");
    while (std::getline(mem, line))
        if (line.rfind("MemTotal:", 0) == 0) c.memory_bytes = std::atof(line.substr(9).c_str()) * 1024.0;
    if (!(c.memory_bytes > 0)) c.memory_bytes = 1073741824.0;
    return c;
}

/// The SIMD this binary's Eigen uses for FP32: lanes and whether it fuses multiply-adds.
struct SimdInUse {
    std::string eigen_sets;  ///< Eigen::SimdInstructionSetsInUse()
    int fp32_lanes = 1;
    bool fma = false;
    int pipes = 2;  ///< vector FMA/ALU pipes per core: an assumption (see the header comment)
    [[nodiscard]] int flop_per_cycle() const { return fp32_lanes * pipes * (fma ? 2 : 1); }
};

inline SimdInUse simd_in_use() {
    SimdInUse s;
    s.eigen_sets = Eigen::SimdInstructionSetsInUse();
#if defined(EIGEN_VECTORIZE_AVX512)
    s.fp32_lanes = 16;
#elif defined(EIGEN_VECTORIZE_AVX)
    s.fp32_lanes = 8;
#elif defined(EIGEN_VECTORIZE_SSE) || defined(EIGEN_VECTORIZE_NEON)
    s.fp32_lanes = 4;
#endif
#if defined(EIGEN_VECTORIZE_FMA) || defined(EIGEN_VECTORIZE_NEON)
    s.fma = true;
#endif
    return s;
}

inline std::string eigen_version() {
    return std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
           std::to_string(EIGEN_MINOR_VERSION);
}

inline std::string compiler_text() {
#if defined(__clang__)
    return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
    return std::string("gcc ") + __VERSION__;
#else
    return "unknown";
#endif
}

/// The host as a roofplan device (schema of data/devices.json) plus how each figure was derived.
/// `threads` is the number of threads the measurements use; `bandwidth_gb_s` and its source come from the caller.
inline json host_device_json(const CpuInfo& cpu, const SimdInUse& simd, int threads, double bandwidth_gb_s,
                             const std::string& bandwidth_source) {
    const double fp32_tflops = threads * cpu.clock_mhz * 1e6 * simd.flop_per_cycle() / 1e12;
    std::string name = "host: " + cpu.model;
    if (name.size() > 63) name = name.substr(0, 63);
    json device = {{"id", "host-cpu"},
                   {"name", name},
                   {"aliases", json::array({"host"})},
                   // The schema asks for a GPU generation; "pascal" only selects generic default efficiencies
                   // (FP32 0.85, memory 0.85 for non-HBM memory, 5 us launch). This is not a GPU.
                   {"architecture", "pascal"},
                   {"compute_capability", "0.0"},
                   {"form_factor", "cpu"},
                   {"market", "host"},
                   {"sms", threads},
                   {"fp32_cores", threads * simd.fp32_lanes},
                   {"tensor_cores", 0},
                   {"base_clock_mhz", std::min(cpu.base_mhz > 0 ? cpu.base_mhz : cpu.clock_mhz, cpu.clock_mhz)},
                   {"boost_clock_mhz", cpu.clock_mhz},
                   {"peak", {{"fp64", fp32_tflops / 2}, {"fp32", fp32_tflops}, {"tf32_tensor", nullptr},
                             {"fp16_tensor_fp16_acc", nullptr}, {"fp16_tensor_fp32_acc", nullptr},
                             {"bf16_tensor", nullptr}, {"int8_tensor", nullptr}, {"int8_dp4a", nullptr}}},
                   {"memory_gib", cpu.memory_bytes / 1073741824.0},
                   {"memory_type", "DRAM"},
                   {"memory_bus_bits", 64},
                   {"bandwidth_gb_s", bandwidth_gb_s},
                   {"l2_mib", cpu.llc_bytes / 1048576.0},
                   {"tdp_w", 100},
                   {"nvlink", {{"generation", 0}, {"links", 0}, {"gb_s_per_link_per_direction", 0}}},
                   {"pcie", {{"generation", 3}, {"lanes", 16}}}};
    json derivation = {
        {"kind", "estimate derived from /proc/cpuinfo and the binary's SIMD, not a datasheet and not measured"},
        {"fp32_peak_tflops", fp32_tflops},
        {"fp32_formula", std::to_string(threads) + " thread(s) x " + std::to_string(cpu.clock_mhz) + " MHz x " +
                             std::to_string(simd.flop_per_cycle()) + " FLOP/cycle (" + std::to_string(simd.fp32_lanes) +
                             " FP32 lanes x " + std::to_string(simd.pipes) + " pipes (assumed) x " +
                             (simd.fma ? "2 (FMA)" : "1 (no FMA)") + ")"},
        {"clock_source", cpu.clock_source},
        {"simd_in_use", simd.eigen_sets},
        {"bandwidth_gb_s", bandwidth_gb_s},
        {"bandwidth_source", bandwidth_source},
        {"placeholders", "architecture (pascal: generic defaults only), compute_capability, memory_bus_bits, tdp_w (energy "
                         "figures are meaningless), pcie"}};
    return {{"device", device}, {"derivation", derivation}};
}

inline std::string hostname() {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
    return buf;
}

inline std::string os_text() {
    utsname u{};
    if (uname(&u) != 0) return "unknown";
    return std::string(u.sysname) + " " + u.release + " " + u.machine;
}

}  // namespace roofplan::bench

// kernels/common/device_info.hpp — what a report records about where it was measured: the device's properties,
// the driver and runtime, the compiler, the source revision (git sha), the command line, the environment variables
// that change what the libraries do, and the date; and the report's first lines.
#pragma once

#include "args.hpp"
#include "check.hpp"
#include "report.hpp"

#include <roofplan/version.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

extern char** environ;

namespace roofplan::bench {

struct DeviceInfo {
    int index = 0;
    std::string name, pci_bus_id;
    int cc_major = 0, cc_minor = 0, sm_count = 0;
    std::optional<int> clock_khz, memory_clock_khz, memory_bus_width_bits, l2_bytes;
    std::uint64_t global_memory_bytes = 0, free_memory_bytes_at_start = 0;
    bool ecc = false;

    // Theoretical DRAM bandwidth, 2 transfers per memory clock (the convention deviceQuery uses).
    std::optional<double> peak_gb_per_s() const {
        if (!memory_clock_khz || !memory_bus_width_bits) return std::nullopt;
        return 2.0 * *memory_clock_khz * 1e3 * (*memory_bus_width_bits / 8.0) / 1e9;
    }
    // The L2 size, or 64 MiB (more than any current GPU has) when the device does not report it.
    std::uint64_t l2_or_64mib() const { return std::uint64_t(l2_bytes.value_or(64 << 20)); }
};

// cudaDeviceGetAttribute, with "not reported" (an error the driver uses for that, or a zero) as empty.
// CUDA 13 removed cudaDeviceProp::clockRate and ::memoryClockRate; the attributes remain.
inline std::optional<int> device_attribute(cudaDeviceAttr attr, int device) {
    int value = 0;
    const cudaError_t err = cudaDeviceGetAttribute(&value, attr, device);
    if (err == cudaErrorInvalidValue || err == cudaErrorNotSupported) {
        (void)cudaGetLastError();  // reset the runtime's last error; the value is simply absent
        return std::nullopt;
    }
    CHECK(err);
    return value > 0 ? std::optional<int>(value) : std::nullopt;
}

// Makes `device` current and describes it.
inline DeviceInfo query_device(int device) {
    cudaDeviceProp prop{};
    CHECK(cudaSetDevice(device));
    CHECK(cudaGetDeviceProperties(&prop, device));
    char bus[64] = {};
    CHECK(cudaDeviceGetPCIBusId(bus, int(sizeof bus), device));
    std::size_t free_bytes = 0, total_bytes = 0;
    CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    return {device, prop.name, bus, prop.major, prop.minor, prop.multiProcessorCount,
            device_attribute(cudaDevAttrClockRate, device), device_attribute(cudaDevAttrMemoryClockRate, device),
            device_attribute(cudaDevAttrGlobalMemoryBusWidth, device), device_attribute(cudaDevAttrL2CacheSize, device),
            prop.totalGlobalMem, free_bytes, prop.ECCEnabled != 0};
}

// The number of visible CUDA devices; with none, says why and exits with kExitNoDevice (77).
inline int visible_devices() {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaSuccess && count > 0) return count;
    if (err == cudaSuccess)
        std::fprintf(stderr, "%s: no CUDA device available (the driver reports 0 devices)\n", g_program);
    else
        std::fprintf(stderr, "%s: no CUDA device available: cudaGetDeviceCount failed with %s (%s)%s\n", g_program,
                     cudaGetErrorName(err), cudaGetErrorString(err),
                     err == cudaErrorInsufficientDriver
                         ? "; the runtime also says this when no NVIDIA driver is installed"
                         : "");
    std::exit(kExitNoDevice);
}

// The device a single-GPU program runs on (--device), made current.
inline DeviceInfo open_device(int device) {
    if (const int count = visible_devices(); device >= count)
        usage_error("--device " + std::to_string(device) + " does not exist; this machine has " +
                    std::to_string(count) + " CUDA device(s)");
    return query_device(device);
}

// The seed of the input data: --seed, else the clock, kept below 2^53 to survive a round trip through a double.
inline std::uint64_t seed_or_clock(const std::optional<std::uint64_t>& seed) {
    return seed.value_or(std::uint64_t(std::chrono::system_clock::now().time_since_epoch().count()) &
                         ((1ull << 53) - 1));
}

inline std::string host_name() {
    char buf[256] = {};
    return gethostname(buf, sizeof buf - 1) == 0 ? buf : "";
}

// CUDA's versions, 1000 major + 10 minor: "major.minor".  cuBLAS's, cuDNN's and NCCL's (>= 2.9), 10000 major +
// 100 minor + patch (older NCCL: 1000 major + 100 minor + patch): "major.minor.patch".
inline std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }
inline std::string library_version_string(long long v) {
    const long long major_unit = v >= 10000 ? 10000 : 1000;
    return std::to_string(v / major_unit) + "." + std::to_string(v % major_unit / 100) + "." + std::to_string(v % 100);
}
inline std::pair<int, int> driver_and_runtime() {
    int driver = 0, runtime = 0;
    CHECK(cudaDriverGetVersion(&driver));
    CHECK(cudaRuntimeGetVersion(&runtime));
    return {driver, runtime};
}

// The source revision: --git-sha, else the ROOFPLAN_GIT_SHA compile definition (-DROOFPLAN_GIT_SHA=abc123,
// quoted or not), else the ROOFPLAN_GIT_SHA environment variable, else "unknown"; and which of them it was.
#define ROOFPLAN_STRINGIFY_(x) #x
#define ROOFPLAN_STRINGIFY(x) ROOFPLAN_STRINGIFY_(x)
inline std::pair<std::string, std::string> git_sha_and_source(const std::optional<std::string>& given) {
    if (given) return {*given, "command line"};
#ifdef ROOFPLAN_GIT_SHA
    std::string compiled = ROOFPLAN_STRINGIFY(ROOFPLAN_GIT_SHA);
    if (compiled.size() >= 2 && compiled.front() == '"' && compiled.back() == '"')
        compiled = compiled.substr(1, compiled.size() - 2);
    // A quoted definition arrives with escaped quotes (\"abc\"); drop those too.
    if (compiled.size() >= 4 && compiled.compare(0, 2, "\\\"") == 0) compiled = compiled.substr(2, compiled.size() - 4);
    if (!compiled.empty()) return {compiled, "compile definition"};
#endif
    if (const char* env = std::getenv("ROOFPLAN_GIT_SHA"); env != nullptr && *env != '\0') return {env, "environment"};
    return {"unknown", "none"};
}

// The environment variables that are set among `names`, or that start with `prefix` (when not empty), sorted.
inline Json environment(const std::vector<std::string_view>& names, std::string_view prefix = {}) {
    std::vector<std::pair<std::string, std::string>> found;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        const std::string_view entry = *e, name = entry.substr(0, entry.find('='));
        if (name.size() < entry.size() && ((!prefix.empty() && name.starts_with(prefix)) ||
                                           std::find(names.begin(), names.end(), name) != names.end()))
            found.emplace_back(std::string(name), std::string(entry.substr(name.size() + 1)));
    }
    std::sort(found.begin(), found.end());
    Json env;
    for (const auto& [name, value] : found) env.set(name, value);
    return env;
}

// The provenance every report starts with; the caller adds its libraries' versions and the device(s).
inline Json provenance(const RunOptions& run, const Json& environment_found) {
    const auto [sha, sha_source] = git_sha_and_source(run.git_sha);
    const auto [driver, runtime] = driver_and_runtime();
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    Json p;
    p.set(field::program, g_program).set(field::version, roofplan::version).set(field::date_utc, date);
    p.set(field::command_line, run.command_line).set(field::git_sha, sha).set(field::git_sha_source, sha_source);
    p.set(field::driver_version, version_string(driver)).set(field::driver_version_code, driver);
    p.set(field::runtime_version, version_string(runtime)).set(field::runtime_version_code, runtime);
    p.set(field::compiler, "nvcc " + std::to_string(__CUDACC_VER_MAJOR__) + "." + std::to_string(__CUDACC_VER_MINOR__) +
                               "." + std::to_string(__CUDACC_VER_BUILD__));
    return p.object(field::environment, environment_found);
}

inline Json device_json(const DeviceInfo& d) {
    Json j;
    j.set(field::index, d.index).set(field::device_name, d.name).set(field::pci_bus_id, d.pci_bus_id);
    j.set(field::compute_capability, std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
    j.set(field::sm_count, d.sm_count).set(field::clock_rate_khz, d.clock_khz);
    j.set(field::memory_clock_rate_khz, d.memory_clock_khz).set(field::memory_bus_width_bits, d.memory_bus_width_bits);
    j.set(field::l2_cache_bytes, d.l2_bytes).set(field::global_memory_bytes, d.global_memory_bytes);
    j.set(field::free_memory_bytes_at_start, d.free_memory_bytes_at_start).set(field::ecc_enabled, d.ecc);
    return j.set(field::peak_gb_per_s_estimate, d.peak_gb_per_s());
}

// The first fields of a report: tool, schema version, provenance, config.
inline Json report_head(std::string_view tool, Json provenance_block, Json config) {
    Json doc;
    doc.set(key::tool, tool).set(key::schema_version, roofplan::io::schema::version);
    return doc.object(key::provenance, std::move(provenance_block)).object(key::config, std::move(config));
}
// A single-GPU program's, with the device in the provenance.
inline Json report_head(std::string_view tool, Json provenance_block, const DeviceInfo& dev, Json config) {
    return report_head(tool, std::move(provenance_block.object(field::device, device_json(dev))), std::move(config));
}

// The device and the software, first line of the tables on stderr (the caller ends the line).
inline void print_device_line(const DeviceInfo& d) {
    const auto [driver, runtime] = driver_and_runtime();
    std::fprintf(stderr, "\n%s: %s [device %d, %s], sm_%d%d, %d SMs, driver %s, runtime %s", g_program, d.name.c_str(),
                 d.index, d.pci_bus_id.c_str(), d.cc_major, d.cc_minor, d.sm_count, version_string(driver).c_str(),
                 version_string(runtime).c_str());
    if (d.clock_khz) std::fprintf(stderr, ", clock %d MHz", *d.clock_khz / 1000);
    if (d.l2_bytes) std::fprintf(stderr, ", L2 %.1f MiB", double(*d.l2_bytes) / double(1 << 20));
}

}  // namespace roofplan::bench

// roofplan/memory/context.hpp — the device-level memory that is not the caching allocator's: the CUDA context
// and the libraries' handles (cuBLAS, cuBLASLt, cuDNN modules and state), the memory the driver keeps out of
// sight, and the library workspaces that PyTorch allocates through its allocator.
//
// Two kinds of figure, kept apart:
//   * the context (outside the allocator): measured, with its provenance.  A measurement reads NVML's `used`
//     minus torch.cuda.memory_reserved() while a step runs (every library loaded), plus the difference between
//     the datasheet memory (Device::memory(), what roofplan compares with) and NVML's `total` (memory the driver
//     never shows).  validation/memory/memory_bench.py measures it on a bare process;
//   * the workspaces (inside the allocator, so part of `allocated`): cuBLAS keeps one workspace per (handle,
//     stream) — aten/src/ATen/cuda/CublasHandlePool.cpp, getChosenWorkspaceSize: 32 MiB on sm_90 (Hopper),
//     else ":4096:2:16:8" = 8 MiB + 128 KiB — and cuBLASLt one of 1 MiB (getCUDABlasLtWorkspaceSize, the
//     CUBLASLT_WORKSPACE_SIZE default).  Handles are per thread: a training step uses two (the Python thread runs
//     the forward, the autograd engine's device thread the backward).
#pragma once

#include <roofplan/detail/checked.hpp>
#include <roofplan/device/device.hpp>
#include <roofplan/memory/conv_workspace_h200_benchmark.hpp>
#include <roofplan/memory/conv_workspace_sm90.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>

namespace roofplan::memory {

/// The device memory outside PyTorch's allocator, and where the figure comes from.
struct ContextFigure {
    std::int64_t bytes = 0;
    std::string_view source;  ///< the measurement (file, date, what was read), or why it is an estimate
    bool measured = false;    ///< measured on this device (false: borrowed from another device)
};

/// The library workspaces PyTorch allocates through its allocator, per thread that runs matrix products.
struct WorkspaceFigure {
    std::int64_t cublas_bytes = 0;    ///< per (cuBLAS handle, stream)
    std::int64_t cublaslt_bytes = 0;  ///< per (cuBLASLt handle, stream)
    /// cuDNN's per-call convolution workspaces measured on this architecture (memory/conv_workspace.hpp), or none:
    /// the engines cuDNN's heuristics choose.
    const ConvWorkspaceTable* convolutions = nullptr;
    /// The same for the engines cudnn.benchmark picks by timing them on this device (they differ from the
    /// heuristics' at some shapes, and between devices of one architecture), or none: `convolutions` serves.
    const ConvWorkspaceTable* benchmarked_convolutions = nullptr;
};

namespace context_data {
// Two terms, both in cudaMemGetInfo's frame (what PyTorch's allocator sees):
//  * the process: NVML used - torch reserved while a step runs, the largest over the 19 eager cases of one process
//    (every library and the kernels they load lazily), less NVML total - cudaMemGetInfo total (memory NVML counts
//    as used before any process runs): H200 1,490,944,000 - (143,771 MiB - 150,109,880,320 B); H100 1,349,320,704
//    - (81,559 MiB - 85,017,493,504 B).  Both come to 0.845 GB.  Checks: a bare process with cuBLAS and cuDNN
//    initialised uses 0.73 GB (validation/results/2026-11-23-*-memory, `context`), less than a real step that
//    loads more kernels; at the largest batch that trained (same files, `max_batch`), cudaMemGetInfo total - torch
//    reserved was >= 0.852 GB on both GPUs, which bounds the process term from above;
//  * hidden: the datasheet memory (Device::memory(), what roofplan compares with) - cudaMemGetInfo total.
inline constexpr std::int64_t h200_process_bytes = 1'490'944'000 - ((143'771LL << 20) - 150'109'880'320LL);
inline constexpr std::int64_t h200_hidden_bytes = (144'384LL << 20) - 150'109'880'320LL;
inline constexpr std::int64_t h100_process_bytes = 1'349'320'704 - ((81'559LL << 20) - 85'017'493'504LL);
inline constexpr std::int64_t h100_hidden_bytes = (81'920LL << 20) - 85'017'493'504LL;
inline constexpr std::string_view h200_source =
    "validation/results/2026-11-23-h200-e2e/e2e_eager_h200.json (torch 2.11.0+cu130, cuDNN 9.19, driver "
    "580.159.04, 2026-11-23): the process's 0.845 GB (NVML used - torch reserved, largest over the 19 cases, in "
    "cudaMemGetInfo's frame) plus datasheet 141 GiB - cudaMemGetInfo total 150,109,880,320 B (1.29 GB)";
inline constexpr std::string_view h100_source =
    "validation/results/2026-11-23-h100-e2e/e2e_eager_h100.json (torch 2.11.0+cu130, cuDNN 9.19, driver "
    "580.159.04, 2026-11-23): the process's 0.845 GB (NVML used - torch reserved, largest over the 19 cases, in "
    "cudaMemGetInfo's frame) plus datasheet 80 GiB - cudaMemGetInfo total 85,017,493,504 B (0.88 GB)";
inline constexpr std::string_view borrowed_source =
    "not measured on this device: the H100 SXM's process context (0.845 GB, torch 2.11 + CUDA 13) plus the "
    "H100's hidden share of its memory (1.03%); pass a measured context (validation/memory/memory_bench.py) to "
    "replace it";
}  // namespace context_data

/// The measured context for `device` (H200, H100 SXM), or one borrowed from the H100 SXM: its process context and
/// its hidden memory as a share of the device's.
inline ContextFigure default_context(const Device& device) {
    using namespace context_data;
    if (device.answers_to("h200"))
        return {h200_process_bytes + h200_hidden_bytes, h200_source, true};
    if (device.answers_to("h100-sxm"))
        return {h100_process_bytes + h100_hidden_bytes, h100_source, true};
    const double hidden_share = static_cast<double>(h100_hidden_bytes) / static_cast<double>(81'920LL << 20);
    const auto hidden = static_cast<std::int64_t>(hidden_share * static_cast<double>(std::max<std::int64_t>(
                                                                     0, device.memory().value())));
    return {h100_process_bytes + hidden, borrowed_source, false};
}

/// The cuBLAS and cuBLASLt workspace sizes PyTorch chooses on `device` (CublasHandlePool.cpp), and the measured
/// cuDNN convolution workspaces: of its architecture under the heuristics (sm_90 only so far), and of the device
/// under cudnn.benchmark (the H200 only so far; the H100's e2e peaks agree with the heuristics' table).
constexpr WorkspaceFigure default_workspaces(const Device& device) {
    const bool sm90 = device.cc_major == 9 && device.cc_minor == 0;
    return {sm90 ? std::int64_t{32} << 20 : (std::int64_t{8} << 20) + (std::int64_t{128} << 10), std::int64_t{1} << 20,
            sm90 ? &conv_workspaces_sm90 : nullptr,
            sm90 && device.answers_to("h200") ? &conv_workspaces_h200_benchmark : nullptr};
}

/// The device's memory, or an error for a device that has none recorded.
inline std::int64_t device_capacity(const Device& device) {
    const std::int64_t bytes = device.memory().value();
    if (bytes <= 0)
        detail::fail("device '", device.id.view(), "' has no memory size (memory_gib is 0); give the device a ",
                     "memory_gib > 0 to predict whether a step fits");
    return bytes;
}

/// Checks a context figure given by the caller.
inline void require_context(const ContextFigure& context) {
    if (context.bytes < 0)
        detail::fail("context memory must be >= 0 bytes, got ", context.bytes,
                     " (the CUDA context and library handles, outside PyTorch's allocator)");
}

}  // namespace roofplan::memory

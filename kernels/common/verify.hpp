// kernels/common/verify.hpp — what every program's check before timing shares: the checked run (inputs uploaded,
// output poisoned), the output positions a check samples, sampled elements brought back to the host, and host
// work spread over threads.
#pragma once

#include "check.hpp"
#include "random.hpp"
#include "report.hpp"
#include "timing.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <span>
#include <system_error>
#include <thread>
#include <vector>

namespace roofplan::bench {

// The checked run: uploads `inputs`, poisons an output of `out_bytes` (every byte `poison`), runs
// launch(device inputs, output) once on `stream`, waits (faults raised while it ran surface here), returns the output.
template <class Launch>
std::vector<unsigned char> run_checked(const std::vector<HostBytes>& inputs, std::uint64_t out_bytes, int poison,
                                       cudaStream_t stream, Launch&& launch) {
    std::vector<void*> in(inputs.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
        CHECK(cudaMalloc(&in[i], inputs[i].bytes));
        CHECK(cudaMemcpyAsync(in[i], inputs[i].data, inputs[i].bytes, cudaMemcpyHostToDevice, stream));
    }
    void* out = nullptr;
    CHECK(cudaMalloc(&out, out_bytes));
    CHECK(cudaMemsetAsync(out, poison, out_bytes, stream));
    launch(std::span<void* const>(in), out);
    std::vector<unsigned char> host(out_bytes);
    CHECK(cudaMemcpyAsync(host.data(), out, out_bytes, cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaGetLastError());
    for (void* p : in) CHECK(cudaFree(p));
    CHECK(cudaFree(out));
    return host;
}

// The poison of an int32 output: every byte 0x7f (cudaMemset).
inline constexpr std::int32_t kPoisonI32 = 0x7f7f7f7f;

// Whether a check of `count` positions of `total` checks them all: when `count` is more than half of `total`,
// since drawing that many distinct positions would take long.
inline bool checks_all(std::uint64_t total, std::uint64_t count) { return 2 * count > total; }

// `count` distinct positions in [0, total), sorted: `always` and random ones from `rng` (every position when
// checks_all).
inline std::vector<std::uint64_t> sample_positions(std::uint64_t total, std::vector<std::uint64_t> always,
                                                   std::uint64_t count, SplitMix64 rng) {
    std::vector<std::uint64_t> pos;
    if (checks_all(total, count)) {
        for (std::uint64_t i = 0; i < total; ++i) pos.push_back(i);
        return pos;
    }
    pos = std::move(always);
    do {  // draw the missing ones; repeats are dropped and drawn again
        for (std::size_t s = pos.size(); s < count; ++s) pos.push_back(rng.next() % total);  // modulo bias: irrelevant
        std::sort(pos.begin(), pos.end());
        pos.erase(std::unique(pos.begin(), pos.end()), pos.end());
    } while (pos.size() < count);
    return pos;
}

// The errors of the checked elements against their references, as the reports give them: each |d - ref| / scale
// (scale: the sum of |terms|, the size of its rounding error) within element_bound, ||d - ref|| / ||ref|| within
// norm_limit (0 for both: exact).
struct ErrorStats {
    double element_bound = 0, norm_limit = 0;
    std::uint64_t checked = 0;
    double max_rel_error = 0, err2 = 0, ref2 = 0;

    // Adds one element; false when it is over element_bound (a NaN always is).
    bool add(double got, double ref, double scale) {
        const double err = std::fabs(got - ref);
        ++checked;
        max_rel_error = std::max(max_rel_error, err / scale);
        err2 += err * err;
        ref2 += ref * ref;
        return err / scale <= element_bound;
    }
    double rel_l2_error() const { return ref2 > 0 ? std::sqrt(err2 / ref2) : 0.0; }
    Json json() const {
        Json j;
        j.set(field::checked_elements, checked).set(field::max_rel_error, max_rel_error);
        j.set(field::rel_l2_error, rel_l2_error()).set(field::element_bound, element_bound);
        return j.set(field::norm_limit, norm_limit);
    }
};

// Runs task(0) ... task(tasks - 1) on up to 32 host threads (on this one where no thread can be had).
template <class Task>
void parallel_for(std::size_t tasks, Task&& task) {
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i; (i = next.fetch_add(1)) < tasks;) task(i);
    };
    std::vector<std::thread> pool;
    try {
        for (unsigned t = 1; t < std::min(32u, std::max(1u, std::thread::hardware_concurrency())) && t < tasks; ++t)
            pool.emplace_back(work);
    } catch (const std::system_error&) {
    }
    work();
    for (std::thread& t : pool) t.join();
}

// Blocks of 256 threads for a grid-stride loop over `n` elements: enough to cover them, at least 1, at most `most`.
inline unsigned grid_for(std::size_t n, std::size_t most) {
    return unsigned(std::clamp<std::size_t>((n + 255) / 256, 1, most));
}

template <class T>
__global__ void gather_kernel(const T* data, const std::uint64_t* where, std::size_t count, float* out) {
    const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
    for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride)
        out[i] = float(data[where[i]]);
}

// The elements of the device array `data` at positions `where`, as floats on the host.
template <class T>
std::vector<float> gather_to_host(const T* data, const std::vector<std::uint64_t>& where, cudaStream_t stream) {
    std::uint64_t* d_where = nullptr;
    float* d_out = nullptr;
    CHECK(cudaMalloc(&d_where, where.size() * sizeof(std::uint64_t)));
    CHECK(cudaMalloc(&d_out, where.size() * sizeof(float)));
    CHECK(cudaMemcpyAsync(d_where, where.data(), where.size() * sizeof(std::uint64_t), cudaMemcpyHostToDevice, stream));
    gather_kernel<<<grid_for(where.size(), 8192), 256, 0, stream>>>(data, d_where, where.size(), d_out);
    CHECK_LAUNCH("gather_kernel");
    std::vector<float> out(where.size());
    CHECK(cudaMemcpyAsync(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaFree(d_where));
    CHECK(cudaFree(d_out));
    return out;
}

}  // namespace roofplan::bench

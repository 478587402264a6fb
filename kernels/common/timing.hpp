// kernels/common/timing.hpp — how every validation program times the GPU (the method: /METHOD.md of the device
// notes; the model: nvbench).
//
// A case first runs back to back for --warmup-ms of wall time (at most a few runs queued ahead of the GPU) so that
// the clocks have ramped up.  Then a lead kernel spins on the GPU while the host queues --warmup untimed and
// --repeats timed runs on one stream with a CUDA event between consecutive runs; each repeat is the time between
// two events.  The lead kernel keeps the GPU busy until everything is queued, so short runs go back to back rather
// than behind the host's launch overhead; if the host took longer to queue than the lead kernel lasted, the case
// is flagged (host_kept_ahead = false).  Median, min and max are reported.
//
// Cold inputs: consecutive runs must not find their inputs in L2 from the run before, so a case rotates through
// S copies of its inputs with (S - 1) x (bytes of one set) >= 2 x L2 (Rotation).  Rotation rather than an L2
// flush between runs: a flush is extra work between the timed runs that the events would count.
#pragma once

#include "check.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

namespace roofplan::bench {

struct TimingOptions {
    int repeats = 20, warmup = 5, warmup_ms = 100;
};

// One thread that spins for `ns` nanoseconds of the GPU's global timer: it holds the stream while the host
// queues the timed runs behind it.
__global__ void lead_kernel(unsigned long long ns) {
    auto now = [] {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        return t;
    };
    for (const unsigned long long start = now(); now() - start < ns;) {
    }
}

// How long the lead kernel spins while the host queues `queued` runs: 2 ms plus 100 us a run, at most 250 ms.
inline double lead_seconds(double queued) { return std::min(0.25, 2e-3 + 1e-4 * queued); }

inline void launch_lead(cudaStream_t stream, double seconds) {
    lead_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(seconds * 1e9));
    CHECK_LAUNCH("lead_kernel");
}

struct Summary {
    double median_s = 0, min_s = 0, max_s = 0;
};

inline Summary summarize(std::vector<double> seconds) {
    std::sort(seconds.begin(), seconds.end());
    const std::size_t m = seconds.size();
    if (m == 0) return {};
    return {m % 2 ? seconds[m / 2] : 0.5 * (seconds[m / 2 - 1] + seconds[m / 2]), seconds.front(), seconds.back()};
}

struct Timing : Summary {
    int warm_runs = 0;                       // runs of the --warmup-ms phase
    double lead_s = 0, host_enqueue_s = 0;   // how long the lead kernel spun; the host's time to queue behind it
    bool host_kept_ahead = true;             // host_enqueue_s < lead_s
};

// For a progress line: a note when the host fell behind the lead kernel.
inline const char* fell_behind(bool host_kept_ahead) {
    return host_kept_ahead ? "" : " (the host fell behind the lead kernel: launch gaps possible)";
}

// Seconds on the host's steady clock since `start`.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs `enqueue(run)` back to back for `ms` of wall time with at most a few runs queued (an event after each;
// the host waits for the one two runs back), so the phase ends soon after `ms`.  Returns the runs made.
template <class Enqueue>
int warm_clocks(cudaStream_t stream, Enqueue& enqueue, int ms, std::size_t& run) {
    if (ms <= 0) return 0;
    constexpr int kDepth = 4;
    cudaEvent_t ev[kDepth];
    for (cudaEvent_t& e : ev) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    const auto start = std::chrono::steady_clock::now();
    int runs = 0;
    while (seconds_since(start) * 1e3 < ms) {
        enqueue(run++);
        CHECK(cudaEventRecord(ev[runs % kDepth], stream));
        ++runs;
        if (runs >= kDepth - 1) CHECK(cudaEventSynchronize(ev[(runs + 1) % kDepth]));
    }
    CHECK(cudaStreamSynchronize(stream));
    for (cudaEvent_t e : ev) CHECK(cudaEventDestroy(e));
    return runs;
}

// Times `enqueue(run)`, which queues run number `run` on `stream` and checks its launch (see the top of the
// file); `run` counts every run queued so that the caller can rotate through input sets.
template <class Enqueue>
Timing time_runs(cudaStream_t stream, Enqueue&& enqueue, const TimingOptions& o) {
    Timing t;
    std::size_t run = 0;
    t.warm_runs = warm_clocks(stream, enqueue, o.warmup_ms, run);
    std::vector<cudaEvent_t> events(std::size_t(o.repeats) + 1);  // events[r] before timed run r, [r + 1] after
    for (cudaEvent_t& e : events) CHECK(cudaEventCreate(&e));
    t.lead_s = lead_seconds(double(o.warmup + o.repeats));
    launch_lead(stream, t.lead_s);
    const auto queue_start = std::chrono::steady_clock::now();
    for (int i = 0; i < o.warmup; ++i) enqueue(run++);
    for (std::size_t r = 0; r + 1 < events.size(); ++r) {
        CHECK(cudaEventRecord(events[r], stream));
        enqueue(run++);
    }
    CHECK(cudaEventRecord(events.back(), stream));
    t.host_enqueue_s = seconds_since(queue_start);
    t.host_kept_ahead = t.host_enqueue_s < t.lead_s;
    CHECK(cudaEventSynchronize(events.back()));
    CHECK(cudaGetLastError());
    std::vector<double> seconds;
    for (std::size_t r = 0; r + 1 < events.size(); ++r) {
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, events[r], events[r + 1]));
        seconds.push_back(double(ms) * 1e-3);
    }
    for (cudaEvent_t e : events) CHECK(cudaEventDestroy(e));
    static_cast<Summary&>(t) = summarize(std::move(seconds));
    return t;
}

inline constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
inline std::uint64_t round_up_256(std::uint64_t x) { return (x + 255) / 256 * 256; }

// S copies of a case's input buffers (sizes `bytes`) to rotate through while timing, with (S - 1) x (one set)
// >= 2 x L2 where the free device memory allows, keeping `reserve` bytes free; 1 <= S <= 64.
class Rotation {
public:
    Rotation(std::vector<std::uint64_t> bytes, std::uint64_t l2_bytes, std::uint64_t reserve)
        : bytes_(std::move(bytes)) {
        std::uint64_t per_set = 0;
        for (std::uint64_t b : bytes_) per_set += round_up_256(b);
        std::size_t free_bytes = 0, total_bytes = 0;
        CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        const std::uint64_t wanted = 1 + (2 * l2_bytes + per_set - 1) / per_set;
        const std::uint64_t fit = free_bytes > reserve ? (free_bytes - reserve) / per_set : 0;
        sets_ = std::max<std::uint64_t>(1, std::min<std::uint64_t>({wanted, fit, 64}));
        for (std::uint64_t s = 0; s < sets_ * bytes_.size(); ++s)
            CHECK(cudaMalloc(&buffers_.emplace_back(), bytes_[s % bytes_.size()]));
    }
    ~Rotation() {
        for (void* p : buffers_) cudaFree(p);
    }
    Rotation(const Rotation&) = delete;
    Rotation& operator=(const Rotation&) = delete;

    int sets() const { return int(sets_); }
    // The buffers of the set that run number `run` reads.
    std::span<void* const> set(std::size_t run) const {
        return std::span<void* const>(buffers_).subspan((run % sets_) * bytes_.size(), bytes_.size());
    }
    // Copies set 0 into the others (the same values at other addresses) and waits.
    void replicate(cudaStream_t stream) const {
        for (std::size_t s = 1; s < sets_; ++s)
            for (std::size_t b = 0; b < bytes_.size(); ++b)
                CHECK(cudaMemcpyAsync(set(s)[b], set(0)[b], bytes_[b], cudaMemcpyDeviceToDevice, stream));
        CHECK(cudaStreamSynchronize(stream));
    }

private:
    std::vector<std::uint64_t> bytes_;
    std::uint64_t sets_ = 1;
    std::vector<void*> buffers_;
};

// Host data to upload.
struct HostBytes {
    const void* data;
    std::uint64_t bytes;
};

// time_runs with rotated inputs: S copies of `inputs` (Rotation, reserving the output and 256 MiB of slack) and one
// output; run r is launch(copy r mod S, output).  `sets` receives S.
template <class Launch>
Timing time_rotated(const std::vector<HostBytes>& inputs, std::uint64_t out_bytes, std::uint64_t l2_bytes,
                    cudaStream_t stream, const TimingOptions& o, int& sets, Launch&& launch) {
    std::vector<std::uint64_t> sizes;
    for (const HostBytes& h : inputs) sizes.push_back(h.bytes);
    const Rotation rotation(sizes, l2_bytes, round_up_256(out_bytes) + 256 * kMiB);
    for (std::size_t i = 0; i < inputs.size(); ++i)
        CHECK(cudaMemcpyAsync(rotation.set(0)[i], inputs[i].data, inputs[i].bytes, cudaMemcpyHostToDevice, stream));
    rotation.replicate(stream);
    void* out = nullptr;
    CHECK(cudaMalloc(&out, out_bytes));
    sets = rotation.sets();
    const Timing t = time_runs(stream, [&](std::size_t run) { launch(rotation.set(run), out); }, o);
    CHECK(cudaFree(out));
    return t;
}

}  // namespace roofplan::bench

// kernels/common/random.hpp — the random numbers of the validation programs: SplitMix64 (Steele, Lea, Flood 2014;
// small, fast, the same sequence on every platform and on the GPU), per-case seeds, and the output positions a
// check samples.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace roofplan::bench {

inline constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;

// SplitMix64's output function.
__host__ __device__ inline std::uint64_t mix64(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

struct SplitMix64 {
    std::uint64_t state;
    std::uint64_t next() { return mix64(state += kGolden); }
};

// The seed of case `index`: one SplitMix64 step away from the run's seed, so cases draw unrelated data and a
// timing pass can regenerate exactly the inputs its verification pass checked.
inline std::uint64_t case_seed(std::uint64_t seed, std::size_t index) {
    SplitMix64 g{seed ^ (0xD1B54A32D192ED03ull * (std::uint64_t(index) + 1))};
    return g.next();
}

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

}  // namespace roofplan::bench

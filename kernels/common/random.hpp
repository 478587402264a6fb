// kernels/common/random.hpp — the random numbers of the validation programs: SplitMix64 (Steele, Lea, Flood 2014;
// small, fast, the same sequence on every platform and on the GPU) and per-case seeds.
#pragma once

#include <cstdint>

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

}  // namespace roofplan::bench

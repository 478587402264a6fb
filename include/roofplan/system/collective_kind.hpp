// roofplan/system/collective_kind.hpp — the NCCL collectives roofplan models, their names and nccl-tests'
// bus-bandwidth factor.  No dependencies: the CUDA NCCL benchmark (kernels/nccl) includes it under nvcc.
#pragma once

#include <string_view>

namespace roofplan {

enum class Collective { allreduce, broadcast, reduce, reducescatter, allgather };

inline constexpr Collective all_collectives[] = {Collective::allreduce, Collective::broadcast, Collective::reduce,
                                                 Collective::reducescatter, Collective::allgather};

constexpr std::string_view to_string(Collective c) {
    switch (c) {
        case Collective::allreduce: return "allreduce";
        case Collective::broadcast: return "broadcast";
        case Collective::reduce: return "reduce";
        case Collective::reducescatter: return "reducescatter";
        case Collective::allgather: return "allgather";
    }
    return "unknown";
}

/// nccl-tests' bus-bandwidth factor: busbw = algbw × factor (0 for the ring collectives on one rank).
constexpr double busbw_factor(Collective c, int ranks) {
    const double n = ranks;
    switch (c) {
        case Collective::allreduce: return ranks > 1 ? 2.0 * (n - 1) / n : 0.0;
        case Collective::reducescatter:
        case Collective::allgather: return ranks > 1 ? (n - 1) / n : 0.0;
        case Collective::broadcast:
        case Collective::reduce: return 1.0;
    }
    return 1.0;
}

/// busbw_factor as a formula of the rank count n, for reports.
constexpr std::string_view busbw_factor_formula(Collective c) {
    switch (c) {
        case Collective::allreduce: return "2(n-1)/n";
        case Collective::reducescatter:
        case Collective::allgather: return "(n-1)/n";
        case Collective::broadcast:
        case Collective::reduce: return "1";
    }
    return "?";
}

}  // namespace roofplan

// roofplan/system/collective_kind.hpp — the NCCL collectives roofplan models, their names and nccl-tests'
// bus-bandwidth factor.  No dependencies beyond detail/enum_array.hpp (the standard library only): the CUDA NCCL
// benchmark (kernels/nccl) includes it under nvcc.
#pragma once

#include <roofplan/detail/enum_array.hpp>

#include <array>
#include <string_view>

namespace roofplan {

enum class Collective { allreduce, broadcast, reduce, reducescatter, allgather };

inline constexpr Collective all_collectives[] = {Collective::allreduce, Collective::broadcast, Collective::reduce,
                                                 Collective::reducescatter, Collective::allgather};

/// Its names (to_string, and parse_collective in system/collective.hpp) and the aliases it is parsed from.
template <>
struct EnumNames<Collective> {
    static constexpr std::string_view field = "collective";
    static constexpr std::array<std::string_view, 5> names{"allreduce", "broadcast", "reduce", "reducescatter",
                                                           "allgather"};
    static constexpr std::array<EnumAlias<Collective>, 6> aliases{
        {{"all-reduce", Collective::allreduce}, {"all_reduce", Collective::allreduce},
         {"reduce-scatter", Collective::reducescatter}, {"reduce_scatter", Collective::reducescatter},
         {"all-gather", Collective::allgather}, {"all_gather", Collective::allgather}}};
};

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

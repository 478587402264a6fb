// roofplan/system/collective.hpp — NCCL-style collective time on a system, with nccl-tests' algbw and busbw.
//
// A ring collective over n ranks moves, per rank, a fraction of the message in a fixed number of steps:
//   all-reduce      2(n-1) steps, 2(n-1)/n · S per rank      busbw factor 2(n-1)/n
//   reduce-scatter  (n-1) steps,  (n-1)/n · S                busbw factor (n-1)/n
//   all-gather      (n-1) steps,  (n-1)/n · S                busbw factor (n-1)/n
//   broadcast       pipelined chain: n-1 hops (latency), S   busbw factor 1
//   reduce          pipelined chain: n-1 hops (latency), S   busbw factor 1
// so   time = base + steps · latency(limiting link) + bytes per rank / (ring bandwidth · protocol efficiency),
// small messages are latency-bound and large ones bandwidth-bound.  A tree all-reduce (NCCL's double binary
// tree) takes 2·⌈log2 n⌉ steps and moves 2·S per rank at the tree's bandwidth — fewer steps, same asymptote.
// Across nodes the ring leaves each node through the network: its bandwidth is min(intra-node ring, network
// per node), and the network's latency applies to every step.  S is the message size in bytes (for
// reduce-scatter and all-gather the total across ranks, as nccl-tests counts it).
#pragma once

#include <roofplan/calibration/profile.hpp>
#include <roofplan/enum_names.hpp>
#include <roofplan/system/collective_kind.hpp>
#include <roofplan/system/topology.hpp>

#include <cmath>
#include <string_view>

namespace roofplan {

inline Collective parse_collective(std::string_view name) { return parse_enum<Collective>(name); }

enum class Algorithm { ring, tree };

template <>
struct EnumNames<Algorithm> {
    static constexpr std::string_view field = "algorithm";
    static constexpr std::array<std::string_view, 2> names{"ring", "tree"};
};

/// The steps and the bytes per rank of a collective of S bytes over n ranks (see the table above).
struct CollectiveTerms {
    double steps = 0;
    double moved = 0;
};
constexpr CollectiveTerms collective_terms(Collective op, int ranks, std::int64_t bytes, Algorithm algorithm) {
    const double n = ranks;
    const double S = static_cast<double>(bytes);
    if (ranks < 2) return {};
    if (algorithm == Algorithm::tree && op == Collective::allreduce) {
        int levels = 0;
        while ((1 << levels) < ranks) ++levels;
        return {2.0 * levels, 2.0 * S};
    }
    switch (op) {
        case Collective::allreduce: return {2 * (n - 1), 2 * (n - 1) / n * S};
        case Collective::reducescatter:
        case Collective::allgather: return {n - 1, (n - 1) / n * S};
        case Collective::broadcast:
        case Collective::reduce: return {n - 1, S};
    }
    return {};
}

/// Where a collective runs: GPUs of one node (a GpuSet), repeated on `nodes` nodes.
struct CollectivePlace {
    GpuSet gpus;
    int nodes = 1;
    bool single_flow = false;  ///< the network carries one TCP flow per node (AWS p3dn without tuning)
};

struct CollectiveTime {
    units::seconds time{};
    double algbw_gb_s = 0;   ///< S / time
    double busbw_gb_s = 0;   ///< algbw × factor
    double bandwidth_gb_s = 0;  ///< the effective ring/tree bandwidth used
    LinkKind limit = LinkKind::nvlink;
    int ranks = 0;
};

/// The time of one collective of `bytes` (S) at a place on a system.
inline CollectiveTime collective_time(const System& s, Collective op, std::int64_t bytes, const CollectivePlace& at,
                                      Algorithm algorithm = Algorithm::ring, const LinkParameters& lp = {}) {
    if (bytes <= 0) detail::fail("collective size must be a positive number of bytes, got ", bytes);
    if (at.nodes < 1 || at.nodes > s.max_nodes)
        detail::fail("system '", s.id.view(), "' allows 1 to ", s.max_nodes, " nodes; asked for ", at.nodes);
    const int ranks = static_cast<int>(at.gpus.size()) * at.nodes;
    CollectiveTime out;
    out.ranks = ranks;
    if (ranks == 1) {  // nothing to exchange (nccl-tests reports 0 bus bandwidth)
        out.time = units::in_seconds(0);
        return out;
    }
    RingBandwidth ring = ring_bandwidth(s, at.gpus);
    double bw = ring.gb_s * lp.eff(ring.kind);
    LinkKind limit = ring.kind;
    double latency = lp.latency(ring.kind);
    if (at.gpus.size() == 1) {  // one GPU per node: only the network
        bw = 1e300;
        latency = 0;
    }
    if (at.nodes > 1) {
        const double net = (at.single_flow && s.network.gb_s_single_flow > 0 ? s.network.gb_s_single_flow
                                                                             : s.network.gb_s_multi_flow) *
                           lp.eff(LinkKind::network);
        if (net < bw) {
            bw = net;
            limit = LinkKind::network;
        }
        latency = std::max(latency, s.network.latency_s);
    }
    const CollectiveTerms terms = collective_terms(op, ranks, bytes, algorithm);
    const double S = static_cast<double>(bytes);
    bw *= lp.factor(op, ranks);
    const double t = lp.base_s + terms.steps * latency + terms.moved / (bw * 1e9);
    out.time = units::in_seconds(t);
    out.algbw_gb_s = S / t / 1e9;
    out.busbw_gb_s = out.algbw_gb_s * busbw_factor(op, ranks);
    out.bandwidth_gb_s = bw;
    out.limit = limit;
    return out;
}

}  // namespace roofplan

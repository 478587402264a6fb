// roofplan/system/topology.hpp — a multi-GPU system: GPUs, sockets, the links between them, and the network.
//
// One node is described by a matrix over its GPUs (LinkMatrix):
//   nvlinks(i, j)   number of direct GPU-GPU links (NVLink, or an NVLink bridge), each `nvlink_gb_s` per direction
// and by the host path every GPU pair without a direct link falls back to:
//   GPU i ─(host link of i)─ socket(i) ─[socket bus, if the sockets differ]─ socket(j) ─(host link of j)─ GPU j
// where a GPU's host link is PCIe, or NVLink to the CPU (IBM AC922).  A switch fabric (NVSwitch) instead gives
// every GPU `switch_gb_s` per direction to every other GPU of the node.  Nodes are joined by a network with a
// per-node bandwidth when NCCL opens many flows and a (lower) per-flow bandwidth when it opens one.
// Bandwidths are GB/s (1e9 B/s) per direction; latencies are per step, in seconds.
#pragma once

#include <roofplan/detail/checked.hpp>
#include <roofplan/detail/fixed_string.hpp>
#include <roofplan/detail/suggest.hpp>
#include <roofplan/enum_names.hpp>
#include <roofplan/units.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace roofplan {

/// The kinds of link a collective step can be limited by (each has its own per-step latency).
enum class LinkKind { nvlink, nvswitch, pcie, socket_bus, network };

template <>
struct EnumNames<LinkKind> {
    static constexpr std::string_view field = "link";
    static constexpr std::string_view what = "link kind";
    static constexpr std::array<std::string_view, 5> names{"nvlink", "nvswitch", "pcie", "socket-bus", "network"};
};

inline constexpr LinkKind all_link_kinds[] = {LinkKind::nvlink, LinkKind::nvswitch, LinkKind::pcie,
                                              LinkKind::socket_bus, LinkKind::network};

/// A square matrix of link counts between the GPUs of a node: counts(i, j) links from GPU i to GPU j.
class LinkMatrix {
public:
    LinkMatrix() = default;
    /// n × n, every count 0.
    explicit LinkMatrix(int n) : n_(n), counts_(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), 0) {}

    [[nodiscard]] int size() const { return n_; }
    [[nodiscard]] int& operator()(int i, int j) { return counts_[at(i, j)]; }
    [[nodiscard]] int operator()(int i, int j) const { return counts_[at(i, j)]; }
    /// Whether any pair of GPUs has a link.
    [[nodiscard]] bool any() const {
        return std::any_of(counts_.begin(), counts_.end(), [](int c) { return c != 0; });
    }
    [[nodiscard]] bool symmetric() const {
        for (int i = 0; i < n_; ++i)
            for (int j = 0; j < i; ++j)
                if ((*this)(i, j) != (*this)(j, i)) return false;
        return true;
    }
    friend bool operator==(const LinkMatrix&, const LinkMatrix&) = default;

private:
    [[nodiscard]] std::size_t at(int i, int j) const {
        return static_cast<std::size_t>(i) * static_cast<std::size_t>(n_) + static_cast<std::size_t>(j);
    }
    int n_ = 0;
    std::vector<int> counts_;
};

/// How a GPU reaches its CPU socket when it has no direct link to a peer.
struct HostLink {
    LinkKind kind = LinkKind::pcie;
    double gb_s = 0;  ///< per direction
};

/// The inter-node network.
struct Network {
    FixedString<63> name;
    double gb_s_multi_flow = 0;   ///< per node, per direction, with many flows (NCCL's default on RDMA)
    double gb_s_single_flow = 0;  ///< per node, per direction, with one TCP flow (0: same as multi-flow)
    double latency_s = 10e-6;
};

/// A node's host CPUs, for the data-loader workers and the processes that drive the GPUs.  Zero sockets: the
/// system does not describe them (input pipelines on the CPU then need the worker count).
struct HostCpu {
    FixedString<63> name;   ///< "Intel Xeon Gold 6150"
    int sockets = 0;
    int cores_per_socket = 0;  ///< physical cores
    double base_ghz = 0;
    [[nodiscard]] constexpr int cores() const { return sockets * cores_per_socket; }
};

/// A system: one node's GPUs and links, how many nodes can be joined, and the network between them.
struct System {
    /// Whether `wanted` (case-insensitive) is this system's id.
    [[nodiscard]] bool answers_to(std::string_view wanted) const { return detail::iequals(id.view(), wanted); }

    FixedString<31> id;
    FixedString<127> name;
    FixedString<31> device;  ///< the GPU, a device id of the catalog
    int gpus_per_node = 0;
    int max_nodes = 1;
    std::vector<int> socket;          ///< CPU socket of each GPU
    LinkMatrix nvlinks;               ///< direct links between GPUs (symmetric, zero diagonal)
    double nvlink_gb_s = 0;           ///< per link per direction
    LinkKind direct_kind = LinkKind::nvlink;
    double switch_gb_s = 0;           ///< NVSwitch fabric: per GPU per direction to any peer (0: none)
    std::vector<HostLink> host;       ///< per GPU
    double socket_bus_gb_s = 0;       ///< between sockets, per direction (UPI, X-bus)
    Network network{};
    HostCpu cpu{};                    ///< the node's CPUs
    FixedString<255> source;          ///< where the topology comes from
    FixedString<127> cpu_source;      ///< where the CPUs come from

    /// The bottleneck bandwidth (GB/s per direction) and its link kind of the best path from GPU i to GPU j
    /// on one node: the direct links if any, else the fabric, else the host path.
    [[nodiscard]] std::pair<double, LinkKind> path(int i, int j) const {
        if (switch_gb_s > 0) return {switch_gb_s, LinkKind::nvswitch};
        if (nvlinks(i, j) > 0) return {nvlinks(i, j) * nvlink_gb_s, direct_kind};
        double bw = std::min(host[static_cast<std::size_t>(i)].gb_s, host[static_cast<std::size_t>(j)].gb_s);
        LinkKind kind = host[static_cast<std::size_t>(i)].kind;
        if (host[static_cast<std::size_t>(j)].gb_s < host[static_cast<std::size_t>(i)].gb_s)
            kind = host[static_cast<std::size_t>(j)].kind;
        if (socket[static_cast<std::size_t>(i)] != socket[static_cast<std::size_t>(j)] && socket_bus_gb_s < bw) {
            bw = socket_bus_gb_s;
            kind = LinkKind::socket_bus;
        }
        return {bw, kind};
    }

    /// Checks the description (sizes agree, bandwidths positive where a path needs them).
    void validate() const {
        const auto where = [&] { return detail::cat("system '", id.view(), "'"); };
        if (gpus_per_node < 1 || gpus_per_node > 64) detail::fail(where(), ": gpus_per_node must be in [1, 64]");
        if (max_nodes < 1 || max_nodes > 4096) detail::fail(where(), ": max_nodes must be in [1, 4096]");
        const int n = gpus_per_node;
        if (nvlinks.size() != n) detail::fail(where(), ": the link matrix must be ", n, "x", n);
        if (!nvlinks.symmetric()) detail::fail(where(), ": the link matrix must be symmetric");
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j)
                if (nvlinks(i, j) < 0 || (i == j && nvlinks(i, j) != 0))
                    detail::fail(where(), ": link counts must be >= 0 with a zero diagonal");
        if (static_cast<int>(socket.size()) != gpus_per_node || static_cast<int>(host.size()) != gpus_per_node)
            detail::fail(where(), ": one socket and one host link per GPU are needed");
        if (nvlinks.any() && !(nvlink_gb_s > 0)) detail::fail(where(), ": nvlink_gb_s must be > 0 when GPUs have links");
        for (const HostLink& h : host)
            if (!(h.gb_s > 0) && switch_gb_s <= 0) detail::fail(where(), ": every GPU needs a host link bandwidth > 0");
        const bool two_sockets = std::adjacent_find(socket.begin(), socket.end(), std::not_equal_to<>()) != socket.end();
        if (two_sockets && !(socket_bus_gb_s > 0)) detail::fail(where(), ": socket_bus_gb_s must be > 0 with GPUs on two sockets");
        if (max_nodes > 1 && !(network.gb_s_multi_flow > 0)) detail::fail(where(), ": a multi-node system needs a network bandwidth");
        if (cpu.sockets < 0 || cpu.sockets > 16 || cpu.cores_per_socket < 0 || cpu.cores_per_socket > 1024 ||
            (cpu.sockets > 0) != (cpu.cores_per_socket > 0) || !(cpu.base_ghz >= 0 && cpu.base_ghz <= 10))
            detail::fail(where(), ": host CPUs: sockets in [0, 16] and cores per socket in [0, 1024], both 0 (not "
                         "described) or both positive; base clock in [0, 10] GHz");
    }
};

/// The GPUs of one node a collective runs on: device indices, e.g. {0, 1, 2, 3}.
using GpuSet = std::vector<int>;

/// The first `n` GPUs of a node (NCCL's order when CUDA_VISIBLE_DEVICES is 0..n-1).
inline GpuSet first_gpus(const System& s, int n) {
    if (n < 1) detail::fail("the number of GPUs must be >= 1, got ", n);
    if (n > s.gpus_per_node)
        detail::fail("system '", s.id.view(), "' has ", s.gpus_per_node, " GPUs per node; asked for ", n,
                     " (use ", field_ref("nodes"), " for more)");
    GpuSet g(static_cast<std::size_t>(n));
    std::iota(g.begin(), g.end(), 0);
    return g;
}

/// The ring bandwidth a set of GPUs on one node reaches, as NCCL builds rings: the number of edge-disjoint
/// directed rings that fit in the direct links (each link carries one ring per direction) times the link
/// bandwidth — or, when the direct links hold no ring through all the GPUs, the best single ring over
/// paths (its slowest hop).  Returns the bandwidth per direction and the kind of the limiting link.
struct RingBandwidth {
    double gb_s = 0;
    LinkKind kind = LinkKind::nvlink;
    int rings = 0;          ///< direct-link rings packed (0: a path ring)
    std::vector<int> order; ///< the ring order used (the first ring)
};

namespace detail {
/// The most directed rings through all of `g` that fit in the links: each link carries one ring per direction,
/// so rings come in pairs (a cycle and its reverse) and the answer is twice the largest packing of undirected
/// Hamiltonian cycles within the link counts (two GPUs: one ring per link).  Exhaustive search with pruning
/// (n ≤ 9 GPUs: at most 20,160 cycles); `first` receives the order of one ring.
inline int pack_rings(const LinkMatrix& links, const GpuSet& g, std::vector<int>& first) {
    const int n = static_cast<int>(g.size());
    if (n == 2) {
        first = g;
        return links(g[0], g[1]);
    }
    // every undirected Hamiltonian cycle through g, as its list of edges
    std::vector<std::vector<std::pair<int, int>>> cycles;
    std::vector<std::vector<int>> orders;
    std::vector<int> order(g.begin() + 1, g.end());
    std::sort(order.begin(), order.end());
    do {
        if (order.front() > order.back()) continue;  // each cycle once, not also reversed
        std::vector<std::pair<int, int>> edges;
        int prev = g[0];
        bool ok = true;
        for (int v : order) {
            if (links(prev, v) <= 0) { ok = false; break; }
            edges.emplace_back(std::min(prev, v), std::max(prev, v));
            prev = v;
        }
        if (!ok || links(prev, g[0]) <= 0) continue;
        edges.emplace_back(std::min(prev, g[0]), std::max(prev, g[0]));
        cycles.push_back(std::move(edges));
        std::vector<int> o{g[0]};
        o.insert(o.end(), order.begin(), order.end());
        orders.push_back(std::move(o));
    } while (std::next_permutation(order.begin(), order.end()));
    if (cycles.empty()) return 0;
    first = orders.front();
    // an upper bound: every cycle uses two link ends at every GPU
    int bound = 1 << 20;
    for (int v : g) {
        int degree = 0;
        for (int u : g) degree += links(v, u);
        bound = std::min(bound, degree / 2);
    }
    LinkMatrix left = links;
    int best = 0;
    long budget = 2'000'000;  // search steps; the best packing found so far is kept when it runs out
    auto search = [&](auto&& self, std::size_t from, int depth) -> void {
        best = std::max(best, depth);
        if (best >= bound || --budget <= 0) return;
        for (std::size_t c = from; c < cycles.size(); ++c) {
            bool fits = true;
            for (auto [a, b] : cycles[c])
                if (left(a, b) <= 0) { fits = false; break; }
            if (!fits) continue;
            for (auto [a, b] : cycles[c]) { --left(a, b); --left(b, a); }
            self(self, c, depth + 1);  // a cycle may be used again while links remain
            for (auto [a, b] : cycles[c]) { ++left(a, b); ++left(b, a); }
            if (best >= bound || budget <= 0) return;
        }
    };
    search(search, 0, 0);
    return 2 * best;
}
}  // namespace detail

/// The ring bandwidth of a set of GPUs on one node (see RingBandwidth).
inline RingBandwidth ring_bandwidth(const System& s, const GpuSet& g) {
    RingBandwidth out;
    const int n = static_cast<int>(g.size());
    for (int v : g)
        if (v < 0 || v >= s.gpus_per_node)
            detail::fail("GPU ", v, " is not on system '", s.id.view(), "' (GPUs 0..", s.gpus_per_node - 1, ")");
    if (n == 1) return {0, LinkKind::nvlink, 0, g};
    if (s.switch_gb_s > 0) return {s.switch_gb_s, LinkKind::nvswitch, 1, g};
    if (n > 9) detail::fail("rings over more than 9 GPUs without a switch are not modelled (system '", s.id.view(), "')");
    // 1. rings in the direct links
    if (s.nvlinks.any()) {
        std::vector<int> first;
        const int rings = detail::pack_rings(s.nvlinks, g, first);
        if (rings > 0) {
            out = {rings * s.nvlink_gb_s, s.direct_kind, rings, first};
        }
    }
    // 2. the best ring over paths (host paths for non-adjacent pairs)
    std::vector<int> order(g.begin() + 1, g.end());
    std::sort(order.begin(), order.end());
    double best = 0;
    LinkKind best_kind = LinkKind::pcie;
    std::vector<int> best_order;
    do {
        double bottleneck = 1e300;
        LinkKind kind = LinkKind::pcie;
        int prev = g[0];
        auto hop = [&](int a, int b) {
            const auto [bw, k] = s.path(a, b);
            if (bw < bottleneck) {
                bottleneck = bw;
                kind = k;
            }
        };
        for (int v : order) {
            hop(prev, v);
            prev = v;
        }
        hop(prev, g[0]);
        if (bottleneck > best) {
            best = bottleneck;
            best_kind = kind;
            best_order = {g[0]};
            best_order.insert(best_order.end(), order.begin(), order.end());
        }
    } while (std::next_permutation(order.begin(), order.end()));
    if (best > out.gb_s) out = {best, best_kind, 0, best_order};
    return out;
}

}  // namespace roofplan

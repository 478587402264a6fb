// tools/roofplan/collective.cpp — `roofplan collective`: NCCL collective time, algbw and busbw on a system.
#include "commands.hpp"
#include "options.hpp"
#include "progress.hpp"

#include <roofplan/system/parallel.hpp>

#include <iostream>

namespace roofplan::cli {
namespace {

struct CollectiveOptions {
    std::string op = "allreduce";
    std::string system;
    std::string system_file;
    int gpus = 0;           ///< in total (0: every GPU of the nodes)
    int gpus_per_node = 0;  ///< instead of gpus (0: all of a node)
    int nodes = 0;          ///< (0: as few as the GPUs need, else 1)
    std::string bytes;
    std::string sweep;
    std::string algorithm = "ring";
    std::string profile;
    bool single_flow = false;
    bool json = false;
    bool csv = false;
};

/// The message sizes: --bytes SIZE, or --sweep FROM:TO doubling.
std::vector<std::int64_t> message_sizes(const CollectiveOptions& o) {
    if (!o.bytes.empty() && !o.sweep.empty()) fail("give --bytes or --sweep, not both");
    if (!o.bytes.empty()) return {parse_bytes(o.bytes)};
    if (o.sweep.empty()) fail("give --bytes SIZE or --sweep FROM:TO");
    const auto colon = o.sweep.find(':');
    if (colon == std::string::npos) fail("--sweep takes FROM:TO, e.g. 1MB:1GB");
    const std::int64_t from = parse_bytes(o.sweep.substr(0, colon));
    const std::int64_t to = parse_bytes(o.sweep.substr(colon + 1));
    if (to < from) fail("--sweep: TO must be >= FROM");
    std::vector<std::int64_t> sizes;
    for (std::int64_t b = from; b <= to; b *= 2) sizes.push_back(b);
    return sizes;
}

/// Where the collective runs, as predict --system places GPUs: --gpus in total (on --nodes, default as few as they
/// need), or --gpus-per-node on each of --nodes (default 1); by default every GPU of the nodes.
CollectivePlace where(const System& s, const CollectiveOptions& o) {
    if (o.gpus != 0 && o.gpus_per_node != 0) fail("give --gpus (in total) or --gpus-per-node, not both");
    if (o.gpus_per_node < 0) fail("--gpus-per-node must be >= 1, got ", o.gpus_per_node);
    ParallelRequest request;
    request.single_flow = o.single_flow;
    request.nodes = o.nodes;
    if (o.gpus != 0) {
        request.gpus = o.gpus;
    } else {
        request.nodes = o.nodes == 0 ? 1 : o.nodes;
        request.gpus = (o.gpus_per_node != 0 ? o.gpus_per_node : s.gpus_per_node) * request.nodes;
    }
    return placement(s, request);
}

Table result_table(const System& s, Collective op, Algorithm algorithm, const CollectivePlace& place,
                   const std::vector<std::int64_t>& sizes, const CollectiveOptions& o) {
    const LinkParameters links = profile_links(o.profile);
    Table t({{"bytes", "bytes", "bytes", true},
             {"time", "time_s", "time_s", true},
             {"algbw GB/s", "algbw_GBps", "algbw_GBps", true},
             {"busbw GB/s", "busbw_GBps", "busbw_GBps", true},
             {"limit", "limit", ""}});
    Progress progress = Progress::for_terminal("collective " + o.op, sizes.size(), o.json || o.csv);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        const std::int64_t b = sizes[i];
        progress.step(i, grouped(b) + " bytes");
        const CollectiveTime c = collective_time(s, op, b, place, algorithm, links);
        t.add({{grouped(b), b}, {seconds_text(c.time.value()), c.time.value()}, {fixed(c.algbw_gb_s, 2), c.algbw_gb_s},
               {fixed(c.busbw_gb_s, 2), c.busbw_gb_s}, std::string(to_string(c.limit))});
    }
    return t;
}

int run_collective(const CollectiveOptions& o) {
    const System& s = pick_system(o.system, o.system_file);
    const Collective op = parse_collective(o.op);
    const Algorithm algorithm = parse_enum<Algorithm>(o.algorithm);
    const CollectivePlace place = where(s, o);
    const Table t = result_table(s, op, algorithm, place, message_sizes(o), o);
    const RingBandwidth ring = ring_bandwidth(s, place.gpus);
    const int per_node = static_cast<int>(place.gpus.size());
    const int ranks = per_node * place.nodes;
    const auto document = [&] {
        return json{{"op", to_string(op)},        {"system", s.id.view()},
                    {"gpus", ranks},              {"nodes", place.nodes},
                    {"algorithm", o.algorithm},   {"busbw_factor", busbw_factor(op, ranks)},
                    {"ring_gb_s", ring.gb_s},     {"results", t.json()}};
    };
    if (print_machine(o.json, o.csv, t, document)) return 0;
    std::cout << to_string(op) << " on " << s.name.view() << ": " << ranks << " GPUs (" << per_node << " per node x "
              << place.nodes << " node" << (place.nodes > 1 ? "s" : "") << "), " << o.algorithm << "; ring "
              << fixed(ring.gb_s, 1) << " GB/s per direction over " << to_string(ring.kind)
              << "; busbw = algbw x " << fixed(busbw_factor(op, ranks), 3) << " (nccl-tests)\n\n"
              << t.render();
    return 0;
}

void add_collective_options(CLI::App* app, CollectiveOptions& o) {
    app->add_option("--op", o.op, "allreduce, broadcast, reduce, reducescatter or allgather")->check(one_of<Collective>());
    app->add_option("--system", o.system, "System id (see `roofplan systems`)")->required();
    app->add_option("--system-file", o.system_file, "JSON file with extra systems (schema of data/systems.json)");
    app->add_option("--gpus", o.gpus, "GPUs taking part, in total (default: every GPU of the nodes)")
        ->check(integer_in(1, OptionLimits::max_gpus));
    app->add_option("--gpus-per-node", o.gpus_per_node, "GPUs taking part on each node, instead of --gpus")
        ->check(integer_in(1, 64));
    app->add_option("--nodes", o.nodes, "Nodes (default: as few as --gpus need, else 1)")
        ->check(integer_in(1, OptionLimits::max_nodes));
    app->add_option("--bytes", o.bytes, "Message size S, e.g. 64MB (nccl-tests' size)");
    app->add_option("--sweep", o.sweep, "Sizes FROM:TO, doubling, e.g. 1MB:1GB");
    app->add_option("--algorithm", o.algorithm, "ring or tree (tree: all-reduce only)")->check(one_of<Algorithm>());
    app->add_flag("--single-flow", o.single_flow, "Inter-node traffic on one TCP flow per node");
    app->add_option("--profile", o.profile, "Profile with calibrated collective parameters (roofplan calibrate)");
    add_output_flags(app, o.json, o.csv);
}

}  // namespace

const Command collective_command = command<CollectiveOptions>(
    "collective", "Predict NCCL collective time, algbw and busbw on a system",
    add_collective_options, run_collective);

}  // namespace roofplan::cli

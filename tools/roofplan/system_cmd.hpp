// tools/roofplan/system_cmd.hpp — `roofplan systems`, `roofplan collective`, and predict's --system options.
#pragma once

#include "predict_cmd.hpp"
#include "report.hpp"

#include <roofplan/system/parallel.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <charconv>
#include <iostream>
#include <string>
#include <vector>

namespace roofplan::cli {

/// The systems a command sees: the built-ins plus those of --system-file (same id: replaces).
inline const std::vector<System>& system_catalog(const std::string& file) {
    static std::vector<System> all;
    all = file.empty() ? builtin_systems() : io::load_systems(file);
    return all;
}

inline const System& pick_system(const std::string& id, const std::string& file) {
    if (file.empty()) return find_system(id);
    for (const System& s : system_catalog(file))
        if (roofplan::detail::iequals(s.id.view(), id)) return s;
    (void)find_system(id);  // the error with suggestions from the built-ins
    roofplan::detail::fail("unknown system '", id, "'");
}

inline int run_systems(bool as_json, const std::string& file) {
    const std::vector<System>& systems = system_catalog(file);
    if (as_json) {
        json out = json::array();
        for (const System& s : systems) {
            json links = json::array();
            for (int i = 0; i < s.gpus_per_node; ++i) {
                json row = json::array();
                for (int j = 0; j < s.gpus_per_node; ++j) row.push_back(s.nvlinks(i, j));
                links.push_back(row);
            }
            out.push_back({{"id", s.id.view()},
                           {"name", s.name.view()},
                           {"device", s.device.view()},
                           {"gpus_per_node", s.gpus_per_node},
                           {"max_nodes", s.max_nodes},
                           {"nvlinks", links},
                           {"nvlink_gb_s_per_link", s.nvlink_gb_s},
                           {"switch_gb_s", s.switch_gb_s},
                           {"socket_bus_gb_s", s.socket_bus_gb_s},
                           {"network", {{"name", s.network.name.view()},
                                        {"gb_s_multi_flow", s.network.gb_s_multi_flow},
                                        {"gb_s_single_flow", s.network.gb_s_single_flow}}},
                           {"allreduce_ring_gb_s", ring_bandwidth(s, first_gpus(s, s.gpus_per_node)).gb_s},
                           {"source", s.source.view()}});
        }
        std::cout << out.dump(2) << '\n';
        return 0;
    }
    Table t({"id", "GPUs", "device", "fabric", "ring GB/s", "nodes", "network", "name"},
            {false, true, false, false, true, true, false, false});
    for (const System& s : systems) {
        const RingBandwidth r = ring_bandwidth(s, first_gpus(s, s.gpus_per_node));
        std::string fabric = s.switch_gb_s > 0 ? "NVSwitch" : s.nvlinks.any() ? "NVLink" : "PCIe";
        t.add({std::string(s.id.view()), std::to_string(s.gpus_per_node), std::string(s.device.view()), fabric,
               fixed(r.gb_s, 1) + " (" + std::string(to_string(r.kind)) + ")", std::to_string(s.max_nodes),
               s.max_nodes > 1 ? std::string(s.network.name.view()) : "-", std::string(s.name.view())});
    }
    std::cout << "ring GB/s: the all-reduce ring bandwidth per direction over all GPUs of one node (link rate, "
                 "before protocol efficiency)\n\n"
              << t.render();
    return 0;
}

/// Parses "64MB", "1GiB", "4096", "1.5GB" (decimal k/M/G, binary Ki/Mi/Gi; B optional).
inline std::int64_t parse_bytes(const std::string& text) {
    double value = 0;
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ec != std::errc() || !(value > 0))
        roofplan::detail::fail("'", text, "' is not a size; use e.g. 4096, 64KB, 1MiB, 1GB");
    std::string unit(ptr, end);
    for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!unit.empty() && unit.back() == 'b') unit.pop_back();
    double scale = 1;
    if (unit.empty()) scale = 1;
    else if (unit == "k") scale = 1e3;
    else if (unit == "m") scale = 1e6;
    else if (unit == "g") scale = 1e9;
    else if (unit == "ki") scale = 1024.0;
    else if (unit == "mi") scale = 1024.0 * 1024;
    else if (unit == "gi") scale = 1024.0 * 1024 * 1024;
    else roofplan::detail::fail("'", text, "': unknown size unit; accepted: B, KB, MB, GB, KiB, MiB, GiB");
    const double bytes = value * scale;
    if (bytes > 1e15) roofplan::detail::fail("'", text, "' is too large (at most 1 PB)");
    return static_cast<std::int64_t>(bytes);
}

struct CollectiveOptions {
    std::string op = "allreduce";
    std::string system;
    std::string system_file;
    int gpus = 0;
    int nodes = 1;
    std::string bytes;
    std::string sweep;
    std::string algorithm = "ring";
    bool single_flow = false;
    bool json = false;
};

inline void add_collective_options(CLI::App* app, CollectiveOptions& o) {
    app->add_option("--op", o.op, "allreduce, broadcast, reduce, reducescatter or allgather");
    app->add_option("--system", o.system, "System id (see `roofplan systems`)")->required();
    app->add_option("--system-file", o.system_file, "JSON file with extra systems (schema of data/systems.json)");
    app->add_option("--gpus", o.gpus, "GPUs per node taking part (default: all of the node)");
    app->add_option("--nodes", o.nodes, "Nodes (default 1)");
    app->add_option("--bytes", o.bytes, "Message size S, e.g. 64MB (nccl-tests' size)");
    app->add_option("--sweep", o.sweep, "Sizes FROM:TO, doubling, e.g. 1MB:1GB");
    app->add_option("--algorithm", o.algorithm, "ring or tree (tree: all-reduce only)");
    app->add_flag("--single-flow", o.single_flow, "Inter-node traffic on one TCP flow per node");
    app->add_flag("--json", o.json, "Print JSON");
}

inline int run_collective(const CollectiveOptions& o) {
    const System& s = pick_system(o.system, o.system_file);
    const Collective op = parse_collective(o.op);
    Algorithm algorithm = Algorithm::ring;
    if (o.algorithm == "tree") algorithm = Algorithm::tree;
    else if (o.algorithm != "ring") roofplan::detail::fail("unknown algorithm '", o.algorithm, "'; accepted: ring, tree");
    const int per_node = o.gpus == 0 ? s.gpus_per_node : o.gpus;
    const CollectivePlace place{first_gpus(s, per_node), o.nodes, o.single_flow};
    std::vector<std::int64_t> sizes;
    if (!o.bytes.empty() && !o.sweep.empty()) roofplan::detail::fail("give --bytes or --sweep, not both");
    if (!o.bytes.empty()) {
        sizes.push_back(parse_bytes(o.bytes));
    } else if (!o.sweep.empty()) {
        const auto colon = o.sweep.find(':');
        if (colon == std::string::npos) roofplan::detail::fail("--sweep takes FROM:TO, e.g. 1MB:1GB");
        const std::int64_t from = parse_bytes(o.sweep.substr(0, colon));
        const std::int64_t to = parse_bytes(o.sweep.substr(colon + 1));
        if (to < from) roofplan::detail::fail("--sweep: TO must be >= FROM");
        for (std::int64_t b = from; b <= to; b *= 2) sizes.push_back(b);
    } else {
        roofplan::detail::fail("give --bytes SIZE or --sweep FROM:TO");
    }
    const RingBandwidth ring = ring_bandwidth(s, place.gpus);
    json rows = json::array();
    Table t({"bytes", "time", "algbw GB/s", "busbw GB/s", "limit"}, {true, true, true, true, false});
    for (std::int64_t b : sizes) {
        const CollectiveTime c = collective_time(s, op, b, place, algorithm);
        rows.push_back({{"bytes", b}, {"time_s", c.time.value()}, {"algbw_GBps", c.algbw_gb_s},
                        {"busbw_GBps", c.busbw_gb_s}});
        t.add({grouped(b), seconds_text(c.time.value()), fixed(c.algbw_gb_s, 2), fixed(c.busbw_gb_s, 2),
               std::string(to_string(c.limit))});
    }
    const int ranks = per_node * o.nodes;
    if (o.json) {
        std::cout << json{{"op", to_string(op)}, {"system", s.id.view()}, {"gpus", ranks}, {"nodes", o.nodes},
                          {"algorithm", o.algorithm}, {"busbw_factor", busbw_factor(op, ranks)},
                          {"ring_gb_s", ring.gb_s}, {"results", rows}}
                         .dump(2)
                  << '\n';
        return 0;
    }
    std::cout << to_string(op) << " on " << s.name.view() << ": " << ranks << " GPUs (" << per_node << " per node x "
              << o.nodes << " node" << (o.nodes > 1 ? "s" : "") << "), " << o.algorithm << "; ring "
              << fixed(ring.gb_s, 1) << " GB/s per direction over " << to_string(ring.kind)
              << "; busbw = algbw x " << fixed(busbw_factor(op, ranks), 3) << " (nccl-tests)\n\n"
              << t.render();
    return 0;
}

/// predict --system: the data-parallel options.
struct SystemPredictOptions {
    std::string system;
    std::string system_file;
    int gpus = 0;
    int nodes = 0;
    std::string data_parallel = "ddp";
    bool no_overlap = false;
    bool single_flow = false;
    double dataset = 0;
    double epochs = 0;
    double price = 0;
};

inline void add_system_predict_options(CLI::App* app, SystemPredictOptions& o) {
    app->add_option("--system", o.system, "Predict data-parallel training on this system (see `roofplan systems`)");
    app->add_option("--system-file", o.system_file, "JSON file with extra systems (schema of data/systems.json)");
    app->add_option("--gpus", o.gpus, "GPUs in total (with --system; default 1)");
    app->add_option("--nodes", o.nodes, "Nodes (with --system; default: as few as the GPUs need)");
    app->add_option("--data-parallel", o.data_parallel, "ddp (DistributedDataParallel) or dp (nn.DataParallel)");
    app->add_flag("--no-overlap", o.no_overlap, "DDP without overlapping all-reduce and backward");
    app->add_flag("--single-flow", o.single_flow, "Inter-node traffic on one TCP flow per node");
    app->add_option("--dataset", o.dataset, "Samples per epoch (for time-to-train)");
    app->add_option("--epochs", o.epochs, "Epochs (for time-to-train)");
    app->add_option("--price", o.price, "Price per GPU-hour (for cost)");
}

inline int run_predict_system(const PredictOptions& po, const SystemPredictOptions& so) {
    const System& s = pick_system(so.system, so.system_file);
    PredictOptions with_device = po;
    if (with_device.device.empty()) with_device.device = std::string(s.device.view());
    const Resolved r = resolve(with_device);
    ParallelRequest pr;
    pr.gpus = so.gpus == 0 ? 1 : so.gpus;
    pr.nodes = so.nodes;
    pr.mode = parse_data_parallel(so.data_parallel);
    pr.overlap = !so.no_overlap;
    pr.single_flow = so.single_flow;
    const Predictor predictor(r.model);
    const ParallelPrediction p = predict_parallel(predictor, r.device, r.profile, r.request, s, pr);
    json out = prediction_json(r, p.gpu);
    out["system"] = s.id.view();
    out["gpus"] = p.gpus;
    out["nodes"] = p.nodes;
    out["data_parallel"] = to_string(pr.mode);
    out["step_time_s"] = p.step_time.value();
    out["compute_time_s"] = p.compute_time.value();
    out["comm_time_s"] = p.comm_time.value();
    out["exposed_comm_time_s"] = p.exposed_comm.value();
    out["comm_fraction"] = p.comm_fraction;
    out["comm_hidden"] = p.comm_hidden;
    out["scaling_efficiency"] = p.scaling_efficiency;
    out["throughput_samples_per_s"] = p.throughput_samples_per_s;
    out["throughput_per_gpu_alone"] = p.gpu.throughput_samples_per_s;
    out["samples_per_joule"] = p.throughput_samples_per_s / (p.gpus * p.gpu.power.value());
    std::optional<TrainingRun> run;
    if (so.dataset > 0 || so.epochs > 0) {
        run = time_to_train(p, r.request.batch, so.dataset, so.epochs, so.price);
        out["time_to_train_s"] = run->time.value();
        out["gpu_hours"] = run->gpu_hours;
        out["cost"] = run->cost;
    }
    if (po.json) {
        std::cout << out.dump(2) << '\n';
        return 0;
    }
    std::cout << r.model_id << " on " << s.name.view() << ": " << p.gpus << " GPU" << (p.gpus > 1 ? "s" : "") << " ("
              << p.nodes << " node" << (p.nodes > 1 ? "s" : "") << "), " << to_string(pr.mode) << ", batch "
              << r.request.batch << " per GPU, " << to_string(r.request.precision) << "\n\n"
              << "  throughput        " << fixed(p.throughput_samples_per_s, 1) << " samples/s (one GPU alone: "
              << fixed(p.gpu.throughput_samples_per_s, 1) << ")\n"
              << "  scaling           " << fixed(100 * p.scaling_efficiency, 1) << "% efficiency\n"
              << "  step time         " << seconds_text(p.step_time.value()) << " = compute "
              << seconds_text(p.compute_time.value()) << " + exposed communication "
              << seconds_text(p.exposed_comm.value()) << " (" << fixed(100 * p.comm_fraction, 1) << "%)\n"
              << "  communication     " << seconds_text(p.comm_time.value()) << " per step in all, "
              << (p.comm_hidden ? "hidden behind the backward pass" : "partly exposed") << "\n"
              << "  memory per GPU    " << gib(p.gpu.memory.total().value()) << " of " << gib(p.gpu.capacity.value())
              << (p.gpu.fits ? " (fits)" : " (DOES NOT FIT)") << "\n";
    if (run)
        std::cout << "  time to train     " << fixed(run->time.value() / 3600.0, 2) << " h (" << fixed(run->steps, 0)
                  << " steps), " << fixed(run->gpu_hours, 1) << " GPU-hours"
                  << (so.price > 0 ? ", cost " + fixed(run->cost, 2) : std::string()) << "\n";
    return 0;
}

}  // namespace roofplan::cli

// tools/roofplan/system_cmd.hpp — `roofplan systems`, `roofplan collective`, and predict's --system options.
#pragma once

#include "predict_cmd.hpp"
#include "progress.hpp"
#include "report.hpp"

#include <roofplan/io/calibrate.hpp>
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

inline int run_systems(bool as_json, const std::string& file, bool as_csv = false) {
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
        t.add({std::string(s.id.view()), {std::to_string(s.gpus_per_node), s.gpus_per_node}, std::string(s.device.view()),
               fabric, {fixed(r.gb_s, 1) + " (" + std::string(to_string(r.kind)) + ")", r.gb_s},
               {std::to_string(s.max_nodes), s.max_nodes},
               s.max_nodes > 1 ? std::string(s.network.name.view()) : "-", std::string(s.name.view())});
    }
    if (as_csv) {
        t.csv_names({"id", "gpus_per_node", "device", "fabric", "allreduce_ring_gb_s", "max_nodes", "network", "name"});
        std::cout << t.csv();
        return 0;
    }
    std::cout << "ring GB/s: the all-reduce ring bandwidth per direction over all GPUs of one node (link rate, "
                 "before protocol efficiency)\n\n"
              << t.render();
    return 0;
}

/// Parses "64MB", "1GiB", "4096", "1.5GB" (decimal k/M/G, binary Ki/Mi/Gi; B optional).
/// The link parameters of a calibrated profile file (roofplan calibrate with roofplan-nccl reports), or the
/// defaults when no profile is given or it carries none.
inline LinkParameters profile_links(const std::string& profile) {
    return profile.empty() ? LinkParameters{} : io::links_from_json(io::parse(io::read_text(profile), profile), profile);
}

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
    std::string profile;
    bool single_flow = false;
    bool json = false;
    bool csv = false;
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
    app->add_option("--profile", o.profile, "Profile with calibrated collective parameters (roofplan calibrate)");
    app->add_flag("--json", o.json, "Print JSON");
    app->add_flag("--csv", o.csv, "Print CSV (RFC 4180, raw numbers)");
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
    const LinkParameters links = profile_links(o.profile);
    json rows = json::array();
    Table t({"bytes", "time", "algbw GB/s", "busbw GB/s", "limit"}, {true, true, true, true, false});
    Progress progress = Progress::for_terminal("collective " + o.op, sizes.size(), o.json || o.csv);
    for (std::int64_t b : sizes) {
        progress.step(static_cast<std::size_t>(rows.size()), grouped(b) + " bytes");
        const CollectiveTime c = collective_time(s, op, b, place, algorithm, links);
        rows.push_back({{"bytes", b}, {"time_s", c.time.value()}, {"algbw_GBps", c.algbw_gb_s},
                        {"busbw_GBps", c.busbw_gb_s}});
        t.add({{grouped(b), b}, {seconds_text(c.time.value()), c.time.value()}, {fixed(c.algbw_gb_s, 2), c.algbw_gb_s},
               {fixed(c.busbw_gb_s, 2), c.busbw_gb_s}, std::string(to_string(c.limit))});
    }
    progress.finish();
    const int ranks = per_node * o.nodes;
    if (o.json) {
        std::cout << json{{"op", to_string(op)}, {"system", s.id.view()}, {"gpus", ranks}, {"nodes", o.nodes},
                          {"algorithm", o.algorithm}, {"busbw_factor", busbw_factor(op, ranks)},
                          {"ring_gb_s", ring.gb_s}, {"results", rows}}
                         .dump(2)
                  << '\n';
        return 0;
    }
    if (o.csv) {
        t.csv_names({"bytes", "time_s", "algbw_GBps", "busbw_GBps", "limit"});
        std::cout << t.csv();
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
    pr.links = profile_links(po.profile);
    const Predictor predictor(r.model);
    const ParallelPrediction p = predict_parallel(predictor, r.device, r.profile, r.request, s, pr);
    if (!po.svg.empty()) write_breakdown_svg(po.svg, r.model, r.device, p.gpu, r.model_id, po.top);
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
    if (po.csv) {  // one row: the JSON's scalar figures
        std::vector<std::string> names;
        std::vector<Cell> row;
        for (const char* key : {"model", "system", "device", "gpus", "nodes", "data_parallel", "batch", "precision",
                                "throughput_samples_per_s", "throughput_per_gpu_alone", "scaling_efficiency",
                                "step_time_s", "compute_time_s", "comm_time_s", "exposed_comm_time_s", "comm_fraction",
                                "comm_hidden", "memory_bytes", "fits", "samples_per_joule", "time_to_train_s",
                                "gpu_hours", "cost"}) {
            if (!out.contains(key)) continue;
            const json& v = out.at(key);
            names.emplace_back(key);
            if (v.is_number_integer()) row.emplace_back("", v.get<std::int64_t>());
            else if (v.is_number()) row.emplace_back("", v.get<double>());
            else if (v.is_boolean()) row.emplace_back(v.get<bool>() ? "true" : "false");
            else row.emplace_back(v.get<std::string>());
        }
        Table t(names, {});
        t.add(row);
        std::cout << t.csv();
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

namespace roofplan::cli {

/// Parses "1,2,4,8" into positive integers.
inline std::vector<int> parse_int_list(const std::string& text, std::string_view what) {
    std::vector<int> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = text.find(',', start);
        const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        int v = 0;
        const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
        if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || v < 1)
            roofplan::detail::fail(what, ": '", item, "' is not a positive integer (expected e.g. 1,2,4,8)");
        out.push_back(v);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

inline std::vector<std::string> parse_list(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        const std::size_t comma = text.find(',', start);
        out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

struct ScalingOptions {
    PredictOptions predict;
    std::string systems;  // compare: A,B,...; scaling: one
    std::string system_file;
    std::string gpus = "1,2,4,8,16";
    std::string batches;  // compare: per system
    std::string data_parallel = "ddp";
    bool single_flow = false;
    std::string svg;
};

inline void add_scaling_options(CLI::App* app, ScalingOptions& o, bool compare) {
    add_device_options(app, o.predict.devices);
    add_model_source(app, o.predict.model, o.predict.model_file, o.predict.strict, o.predict.inputs);
    app->add_option(compare ? "--systems" : "--system", o.systems,
                    compare ? "Systems to compare, comma-separated (the first is the reference)" : "System id")
        ->required();
    app->add_option("--system-file", o.system_file, "JSON file with extra systems");
    app->add_option("--gpus", o.gpus, "GPU counts, comma-separated (default 1,2,4,8,16)");
    app->add_option("--batch,-b", o.predict.batch, "Batch per GPU (default 32)")
        ->check(positive_count());
    if (compare) app->add_option("--batch-per-system", o.batches, "Batch per GPU for each system, comma-separated");
    app->add_option("--seq,-s", o.predict.seq, "Sequence length");
    app->add_option("--image-size", o.predict.image_size, "Square input resolution (CNNs)");
    app->add_option("--precision,-p", o.predict.precision, "fp32, tf32, amp-fp16, amp-bf16");
    app->add_option("--optimizer", o.predict.optimizer, "sgd or adam");
    app->add_option("--runtime", o.predict.runtime, "eager (default), compiled or ideal (see predict --help)");
    app->add_option("--profile", o.predict.profile, "Calibrated efficiency profile (JSON)");
    app->add_option("--data-parallel", o.data_parallel, "ddp or dp");
    app->add_flag("--single-flow", o.single_flow, "Inter-node traffic on one TCP flow per node");
    app->add_flag("--json", o.predict.json, "Print JSON");
    app->add_flag("--csv", o.predict.csv, "Print CSV (RFC 4180, raw numbers; one row per system and GPU count)");
    if (!compare) app->add_option("--svg", o.svg, "Write throughput vs GPUs (log-log) to this SVG file");
}

/// One (system, GPU count) point; `error` says why it is infeasible.
struct ScalingPoint {
    int gpus = 0;
    double throughput = 0;
    double efficiency = 0;
    double comm_fraction = 0;
    bool fits = true;
    std::string error;
};

inline std::vector<ScalingPoint> scaling_points(const ScalingOptions& o, const System& s, std::int64_t batch,
                                                const std::vector<int>& counts, Resolved& resolved) {
    PredictOptions po = o.predict;
    po.device = std::string(s.device.view());
    po.batch = batch;
    po.mode = "train";
    resolved = resolve(po);
    const Predictor predictor(resolved.model);
    const LinkParameters links = profile_links(po.profile);
    std::vector<ScalingPoint> out;
    for (int n : counts) {
        ScalingPoint pt;
        pt.gpus = n;
        try {
            ParallelRequest pr;
            pr.links = links;
            pr.gpus = n;
            pr.mode = parse_data_parallel(o.data_parallel);
            pr.single_flow = o.single_flow;
            const ParallelPrediction p = predict_parallel(predictor, resolved.device, resolved.profile, resolved.request, s, pr);
            pt.throughput = p.throughput_samples_per_s;
            pt.efficiency = p.scaling_efficiency;
            pt.comm_fraction = p.comm_fraction;
            pt.fits = p.gpu.fits;
        } catch (const invalid_argument& e) {
            pt.error = e.what();
        }
        out.push_back(pt);
    }
    return out;
}

inline int run_compare(const ScalingOptions& o) {
    const std::vector<std::string> ids = parse_list(o.systems);
    const std::vector<int> counts = parse_int_list(o.gpus, "--gpus");
    std::vector<std::int64_t> batches;
    if (!o.batches.empty()) {
        for (int b : parse_int_list(o.batches, "--batch-per-system")) batches.push_back(b);
        if (batches.size() != ids.size())
            roofplan::detail::fail("--batch-per-system has ", static_cast<std::int64_t>(batches.size()),
                                   " values for ", static_cast<std::int64_t>(ids.size()), " systems");
    }
    std::vector<const System*> systems;
    for (const std::string& id : ids) systems.push_back(&pick_system(id, o.system_file));
    std::vector<std::vector<ScalingPoint>> results;
    std::vector<std::int64_t> used_batch;
    Resolved resolved;
    Progress progress = Progress::for_terminal("compare", systems.size(), o.predict.json || o.predict.csv);
    for (std::size_t i = 0; i < systems.size(); ++i) {
        progress.step(i, std::string(systems[i]->id.view()));
        const std::int64_t b = !batches.empty() ? batches[i] : (o.predict.batch ? o.predict.batch : 32);
        used_batch.push_back(b);
        results.push_back(scaling_points(o, *systems[i], b, counts, resolved));
    }
    progress.finish();
    if (o.predict.json) {
        json out = {{"model", resolved.model_id}, {"precision", o.predict.precision}, {"data_parallel", o.data_parallel}};
        json rows = json::array();
        for (std::size_t i = 0; i < systems.size(); ++i)
            for (std::size_t k = 0; k < counts.size(); ++k) {
                const ScalingPoint& pt = results[i][k];
                const ScalingPoint& ref = results[0][k];
                json row = {{"system", systems[i]->id.view()}, {"gpus", pt.gpus}, {"batch_per_gpu", used_batch[i]}};
                if (pt.error.empty()) {
                    row["throughput_samples_per_s"] = pt.throughput;
                    row["scaling_efficiency"] = pt.efficiency;
                    row["comm_fraction"] = pt.comm_fraction;
                    row["fits"] = pt.fits;
                    row["ratio_to_first"] = ref.error.empty() ? json(pt.throughput / ref.throughput) : json(nullptr);
                } else {
                    row["error"] = pt.error;
                }
                rows.push_back(row);
            }
        out["results"] = rows;
        std::cout << out.dump(2) << '\n';
        return 0;
    }
    if (o.predict.csv) {
        Table t({"system", "gpus", "batch_per_gpu", "throughput", "efficiency", "comm", "fits", "ratio", "error"}, {});
        t.csv_names({"system", "gpus", "batch_per_gpu", "throughput_samples_per_s", "scaling_efficiency",
                     "comm_fraction", "fits", "ratio_to_first", "error"});
        for (std::size_t i = 0; i < systems.size(); ++i)
            for (std::size_t k = 0; k < counts.size(); ++k) {
                const ScalingPoint& pt = results[i][k];
                const ScalingPoint& ref = results[0][k];
                const bool ok = pt.error.empty();
                t.add({std::string(systems[i]->id.view()), {"", pt.gpus}, {"", used_batch[i]},
                       ok ? Cell("", pt.throughput) : Cell::missing(), ok ? Cell("", pt.efficiency) : Cell::missing(),
                       ok ? Cell("", pt.comm_fraction) : Cell::missing(),
                       ok ? Cell(pt.fits ? "true" : "false") : Cell::missing(),
                       ok && ref.error.empty() ? Cell("", pt.throughput / ref.throughput) : Cell::missing(), pt.error});
            }
        std::cout << t.csv();
        return 0;
    }
    std::vector<std::string> head{"GPUs"};
    std::vector<bool> right{true};
    for (std::size_t i = 0; i < systems.size(); ++i) {
        head.push_back(std::string(systems[i]->id.view()) + " (b" + std::to_string(used_batch[i]) + ")");
        right.push_back(true);
        if (i > 0) {
            head.push_back("x " + std::string(systems[0]->id.view()));
            right.push_back(true);
        }
    }
    Table t(head, right);
    for (std::size_t k = 0; k < counts.size(); ++k) {
        std::vector<std::string> row{std::to_string(counts[k])};
        for (std::size_t i = 0; i < systems.size(); ++i) {
            const ScalingPoint& pt = results[i][k];
            row.push_back(pt.error.empty() ? fixed(pt.throughput, 1) + (pt.fits ? "" : " (OOM)") : "-");
            if (i > 0)
                row.push_back(pt.error.empty() && results[0][k].error.empty()
                                  ? fixed(pt.throughput / results[0][k].throughput, 2)
                                  : "-");
        }
        t.add(row);
    }
    std::cout << resolved.model_id << ", " << o.predict.precision << ", " << o.data_parallel
              << ": training throughput (samples/s, all GPUs) and the ratio to " << systems[0]->id.view()
              << "; '-': not possible on that system, (OOM): the batch does not fit\n\n"
              << t.render();
    return 0;
}

inline std::string scaling_svg(const std::string& title, const std::vector<ScalingPoint>& pts) {
    const double width = 720, height = 480, left = 80, right = 60, top = 60, bottom = 60;
    const double pw = width - left - right, ph = height - top - bottom;
    double gmax = 1, tmin = 1e300, tmax = 0, base = 0;
    for (const auto& p : pts)
        if (p.error.empty()) {
            gmax = std::max(gmax, static_cast<double>(p.gpus));
            tmin = std::min(tmin, p.throughput);
            tmax = std::max(tmax, p.throughput);
            if (base == 0) base = p.throughput / p.gpus;
        }
    if (tmax <= 0) roofplan::detail::fail("scaling: no feasible GPU count to plot");
    tmax = std::max(tmax, base * gmax);
    const double x0 = 1, x1 = std::pow(2.0, std::ceil(std::log2(gmax)));
    const double y0 = std::pow(10.0, std::floor(std::log10(tmin / 1.2))), y1 = std::pow(10.0, std::ceil(std::log10(tmax * 1.2)));
    const auto X = [&](double g) { return left + pw * std::log2(g / x0) / std::log2(x1 / x0 > 1 ? x1 / x0 : 2); };
    const auto Y = [&](double t) { return top + ph * (1 - std::log10(t / y0) / std::log10(y1 / y0)); };
    const auto num = [](double v) { return fixed(v, 1); };
    std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"720\" height=\"480\" viewBox=\"0 0 720 480\" "
                    "font-family=\"DejaVu Sans, Arial, sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    s += "<text x=\"" + num(left) + "\" y=\"30\" font-size=\"16\" font-weight=\"bold\">" + svg_detail::escape(title) + "</text>\n";
    s += "<g stroke=\"#e4e4e4\">\n";
    for (double g = x0; g <= x1; g *= 2)
        s += "<line x1=\"" + num(X(g)) + "\" y1=\"" + num(top) + "\" x2=\"" + num(X(g)) + "\" y2=\"" + num(top + ph) + "\"/>\n";
    for (double v = y0; v <= y1 * 1.0001; v *= 10)
        s += "<line x1=\"" + num(left) + "\" y1=\"" + num(Y(v)) + "\" x2=\"" + num(left + pw) + "\" y2=\"" + num(Y(v)) + "\"/>\n";
    s += "</g>\n<g font-size=\"12\">\n";
    for (double g = x0; g <= x1; g *= 2)
        s += "<text x=\"" + num(X(g)) + "\" y=\"" + num(top + ph + 18) + "\" text-anchor=\"middle\">" + fixed(g, 0) + "</text>\n";
    for (double v = y0; v <= y1 * 1.0001; v *= 10)
        s += "<text x=\"" + num(left - 6) + "\" y=\"" + num(Y(v) + 4) + "\" text-anchor=\"end\">" + svg_detail::decade_label(v, "") + "</text>\n";
    s += "</g>\n<rect x=\"" + num(left) + "\" y=\"" + num(top) + "\" width=\"" + num(pw) + "\" height=\"" + num(ph) +
         "\" fill=\"none\" stroke=\"#222\"/>\n";
    s += "<text x=\"" + num(left + pw / 2) + "\" y=\"" + num(height - 15) + "\" text-anchor=\"middle\" font-size=\"14\">GPUs</text>\n";
    s += "<text transform=\"translate(20," + num(top + ph / 2) + ") rotate(-90)\" text-anchor=\"middle\" font-size=\"14\">throughput (samples/s)</text>\n";
    s += "<line x1=\"" + num(X(1)) + "\" y1=\"" + num(Y(base)) + "\" x2=\"" + num(X(x1)) + "\" y2=\"" + num(Y(base * x1)) +
         "\" stroke=\"#888\" stroke-dasharray=\"6,4\"/>\n";
    std::string path;
    for (const auto& p : pts)
        if (p.error.empty()) path += (path.empty() ? "M" : " L") + num(X(p.gpus)) + "," + num(Y(p.throughput));
    s += "<path d=\"" + path + "\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2.5\"/>\n";
    for (const auto& p : pts)
        if (p.error.empty())
            s += "<circle cx=\"" + num(X(p.gpus)) + "\" cy=\"" + num(Y(p.throughput)) + "\" r=\"4\" fill=\"#d62728\"/>\n<text x=\"" +
                 num(X(p.gpus) + 6) + "\" y=\"" + num(Y(p.throughput) + 16) + "\" font-size=\"11\">" + fixed(100 * p.efficiency, 0) + "%</text>\n";
    s += "<g font-size=\"12\"><line x1=\"" + num(left + 12) + "\" y1=\"" + num(top + 16) + "\" x2=\"" + num(left + 40) + "\" y2=\"" +
         num(top + 16) + "\" stroke=\"#d62728\" stroke-width=\"2.5\"/><text x=\"" + num(left + 46) + "\" y=\"" + num(top + 20) +
         "\">predicted (labels: scaling efficiency)</text><line x1=\"" + num(left + 12) + "\" y1=\"" + num(top + 36) + "\" x2=\"" +
         num(left + 40) + "\" y2=\"" + num(top + 36) + "\" stroke=\"#888\" stroke-dasharray=\"6,4\"/><text x=\"" + num(left + 46) +
         "\" y=\"" + num(top + 40) + "\">linear scaling</text></g>\n</svg>\n";
    return s;
}

inline int run_scaling(const ScalingOptions& o) {
    const System& s = pick_system(o.systems, o.system_file);
    const std::vector<int> counts = parse_int_list(o.gpus, "--gpus");
    Resolved resolved;
    const std::int64_t batch = o.predict.batch ? o.predict.batch : 32;
    const std::vector<ScalingPoint> pts = scaling_points(o, s, batch, counts, resolved);
    if (!o.svg.empty()) {
        std::ofstream out(o.svg);
        out << scaling_svg(resolved.model_id + " on " + std::string(s.id.view()) + ": batch " + std::to_string(batch) +
                               " per GPU, " + o.predict.precision + ", " + o.data_parallel,
                           pts);
        if (!out) roofplan::detail::fail("cannot write '", o.svg, "'");
    }
    if (o.predict.json) {
        json rows = json::array();
        for (const auto& p : pts)
            rows.push_back(p.error.empty() ? json{{"gpus", p.gpus}, {"throughput_samples_per_s", p.throughput},
                                                  {"scaling_efficiency", p.efficiency}, {"comm_fraction", p.comm_fraction},
                                                  {"fits", p.fits}}
                                           : json{{"gpus", p.gpus}, {"error", p.error}});
        std::cout << json{{"model", resolved.model_id}, {"system", s.id.view()}, {"batch_per_gpu", batch},
                          {"results", rows}}
                         .dump(2)
                  << '\n';
        return 0;
    }
    if (o.predict.csv) {
        Table t({"gpus", "throughput", "efficiency", "comm", "fits", "error"}, {});
        t.csv_names({"gpus", "throughput_samples_per_s", "scaling_efficiency", "comm_fraction", "fits", "error"});
        for (const auto& p : pts)
            t.add(p.error.empty() ? std::vector<Cell>{{"", p.gpus}, {"", p.throughput}, {"", p.efficiency},
                                                      {"", p.comm_fraction}, p.fits ? "true" : "false", ""}
                                  : std::vector<Cell>{{"", p.gpus}, Cell::missing(), Cell::missing(), Cell::missing(),
                                                      Cell::missing(), p.error});
        std::cout << t.csv();
        return 0;
    }
    Table t({"GPUs", "samples/s", "efficiency", "exposed comm", "note"}, {true, true, true, true, false});
    for (const auto& p : pts)
        t.add(p.error.empty() ? std::vector<std::string>{std::to_string(p.gpus), fixed(p.throughput, 1),
                                                         fixed(100 * p.efficiency, 1) + "%",
                                                         fixed(100 * p.comm_fraction, 1) + "%", p.fits ? "" : "OOM"}
                              : std::vector<std::string>{std::to_string(p.gpus), "-", "-", "-", p.error});
    std::cout << resolved.model_id << " on " << s.name.view() << ", batch " << batch << " per GPU\n\n" << t.render();
    if (!o.svg.empty()) std::cout << "wrote " << o.svg << "\n";
    return 0;
}

}  // namespace roofplan::cli

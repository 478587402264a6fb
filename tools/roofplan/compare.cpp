// tools/roofplan/compare.cpp — `roofplan compare`: systems' data-parallel training throughput side by side.
#include "commands.hpp"
#include "progress.hpp"
#include "sweep_options.hpp"

#include <iostream>

namespace roofplan::cli {
namespace {

void add_compare_options(CLI::App* app, SweepOptions& o) { add_sweep_options(app, o, true); }

/// Every system's sweep, and the batch per GPU each used.
struct Comparison {
    std::vector<const System*> systems;
    std::vector<std::int64_t> batch;
    std::vector<std::vector<ScalingPoint>> points;  ///< per system, per GPU count
    std::vector<int> counts;
    std::string model_id;
};

Comparison compare_systems(const SweepOptions& o) {
    Comparison c;
    const std::vector<std::string> ids = parse_list(o.systems);
    c.counts = parse_int_list(o.gpus, "--gpus");
    std::vector<std::int64_t> batches;
    if (!o.batches.empty()) {
        for (int b : parse_int_list(o.batches, "--batch-per-system")) batches.push_back(b);
        if (batches.size() != ids.size())
            fail("--batch-per-system has ", batches.size(), " values for ", ids.size(), " systems");
    }
    for (const std::string& id : ids) c.systems.push_back(&pick_system(id, o.system_file));
    Resolved resolved;
    Progress progress = Progress::for_terminal("compare", c.systems.size(), o.predict.json || o.predict.csv);
    for (std::size_t i = 0; i < c.systems.size(); ++i) {
        progress.step(i, std::string(c.systems[i]->id.view()));
        c.batch.push_back(!batches.empty() ? batches[i] : (o.predict.batch ? o.predict.batch : 32));
        c.points.push_back(sweep(o, *c.systems[i], c.batch.back(), c.counts, resolved));
    }
    c.model_id = resolved.model_id();
    return c;
}

/// One row per system and GPU count (CSV and JSON).
Table result_table(const Comparison& c) {
    Table t(machine_columns({"system", "gpus", "batch_per_gpu", "throughput_samples_per_s", "scaling_efficiency",
                             "comm_fraction", "fits", "ratio_to_first", "error"}));
    for (std::size_t i = 0; i < c.systems.size(); ++i)
        for (std::size_t k = 0; k < c.counts.size(); ++k) {
            const ScalingPoint& pt = c.points[i][k];
            const ScalingPoint& ref = c.points[0][k];
            const bool ok = !pt.error;
            const auto figure = [&](double v) { return ok ? Cell("", v) : Cell::absent(); };
            t.add({std::string(c.systems[i]->id.view()), {"", pt.gpus}, {"", c.batch[i]}, figure(pt.throughput),
                   figure(pt.efficiency), figure(pt.comm_fraction), ok ? Cell("", pt.fits) : Cell::absent(),
                   !ok ? Cell::absent() : !ref.error ? Cell("", pt.throughput / ref.throughput) : Cell::missing(),
                   ok ? Cell::absent() : Cell(message_of(*pt.error))});
        }
    return t;
}

/// The terminal's view: GPU counts down, systems across, with the ratio to the first.
Table pivot_table(const Comparison& c) {
    std::vector<std::string> head{"GPUs"};
    std::vector<bool> right{true};
    for (std::size_t i = 0; i < c.systems.size(); ++i) {
        head.push_back(std::string(c.systems[i]->id.view()) + " (b" + std::to_string(c.batch[i]) + ")");
        right.push_back(true);
        if (i > 0) {
            head.push_back("x " + std::string(c.systems[0]->id.view()));
            right.push_back(true);
        }
    }
    Table t(head, right);
    for (std::size_t k = 0; k < c.counts.size(); ++k) {
        std::vector<std::string> row{std::to_string(c.counts[k])};
        for (std::size_t i = 0; i < c.systems.size(); ++i) {
            const ScalingPoint& pt = c.points[i][k];
            const ScalingPoint& ref = c.points[0][k];
            row.push_back(!pt.error ? fixed(pt.throughput, 1) + (pt.fits ? "" : " (OOM)") : "-");
            if (i > 0) row.push_back(!pt.error && !ref.error ? fixed(pt.throughput / ref.throughput, 2) : "-");
        }
        t.add(row);
    }
    return t;
}

int run_compare(const SweepOptions& o) {
    const Comparison c = compare_systems(o);
    const Table results = result_table(c);
    const auto document = [&] {
        return json{{"model", c.model_id}, {"precision", o.predict.precision}, {"data_parallel", o.data_parallel},
                    {"results", results.json()}};
    };
    if (print_machine(o.predict.json, o.predict.csv, results, document)) return 0;
    std::cout << c.model_id << ", " << o.predict.precision << ", " << o.data_parallel
              << ": training throughput (samples/s, all GPUs) and the ratio to " << c.systems[0]->id.view()
              << "; '-': not possible on that system, (OOM): the batch does not fit\n\n"
              << pivot_table(c).render();
    return 0;
}

}  // namespace

const Command compare_command = command<SweepOptions>(
    "compare", "Compare systems' data-parallel training throughput side by side", add_compare_options, run_compare);

}  // namespace roofplan::cli

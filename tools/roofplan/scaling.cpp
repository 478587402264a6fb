// tools/roofplan/scaling.cpp — `roofplan scaling`: throughput and scaling efficiency vs GPU count on a system.
#include "commands.hpp"
#include "scaling_svg.hpp"
#include "sweep_options.hpp"

#include <iostream>

namespace roofplan::cli {
namespace {

/// One row per GPU count: the terminal, CSV and JSON views.
Table point_table(const std::vector<ScalingPoint>& points) {
    Table t({{"GPUs", "gpus", "gpus", true},
             {"samples/s", "throughput_samples_per_s", "throughput_samples_per_s", true},
             {"efficiency", "scaling_efficiency", "scaling_efficiency", true},
             {"exposed comm", "comm_fraction", "comm_fraction", true},
             {"", "fits", "fits"},
             {"note", "error", "error"}});
    for (const ScalingPoint& p : points) {
        const bool ok = !p.error;
        t.add({{std::to_string(p.gpus), p.gpus},
               ok ? Cell(fixed(p.throughput, 1), p.throughput) : Cell::absent("-"),
               ok ? Cell(fixed(100 * p.efficiency, 1) + "%", p.efficiency) : Cell::absent("-"),
               ok ? Cell(fixed(100 * p.comm_fraction, 1) + "%", p.comm_fraction) : Cell::absent("-"),
               ok ? Cell("", p.fits) : Cell::absent(), ok ? Cell::absent(p.fits ? "" : "OOM") : Cell(message_of(*p.error))});
    }
    return t;
}

int run_scaling(const SweepOptions& o) {
    const System& s = pick_system(o.systems, o.system_file);
    const std::vector<int> counts = parse_int_list(o.gpus, "--gpus");
    Resolved resolved;
    const std::int64_t batch = o.predict.batch ? o.predict.batch : 32;
    const std::vector<ScalingPoint> points = sweep(o, s, batch, counts, resolved);
    if (!o.svg.empty())
        write_file(o.svg, scaling_svg(resolved.model_id() + " on " + std::string(s.id.view()) + ": batch " +
                                          std::to_string(batch) + " per GPU, " + o.predict.precision + ", " +
                                          o.data_parallel,
                                      points));
    const Table t = point_table(points);
    const auto document = [&] {
        return json{{"model", resolved.model_id()}, {"system", s.id.view()}, {"batch_per_gpu", batch},
                    {"results", t.json()}};
    };
    if (print_machine(o.predict.json, o.predict.csv, t, document)) return 0;
    std::cout << resolved.model_id() << " on " << s.name.view() << ", batch " << batch << " per GPU\n\n" << t.render();
    if (!o.svg.empty()) std::cout << "wrote " << o.svg << "\n";
    return 0;
}

void add_scaling_options(CLI::App* app, SweepOptions& o) { add_sweep_options(app, o, false); }

}  // namespace

const Command scaling_command = command<SweepOptions>(
    "scaling", "Throughput and scaling efficiency vs GPU count on a system", add_scaling_options, run_scaling);

}  // namespace roofplan::cli

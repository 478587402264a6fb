// tools/roofplan/roofline.cpp — `roofplan roofline`: a model's layers on a device's roofline (SVG, JSON, CSV).
#include "commands.hpp"
#include "predict_options.hpp"
#include "roofline_svg.hpp"

#include <fstream>
#include <iostream>

namespace roofplan::cli {
namespace {

/// The chart's points: one per layer.
Table point_table(const RooflineChart& chart) {
    Table t(machine_columns({"name", "type", "arithmetic_intensity", "flops_per_s", "time_s", "bound"}));
    for (const auto& pt : chart.points)
        t.add({pt.name, pt.type, {"", pt.intensity}, {"", pt.performance}, {"", pt.time}, pt.bound});
    return t;
}

Table roof_table(const RooflineChart& chart) {
    Table t(machine_columns({"label", "peak_flops_per_s", "ridge_flops_per_byte"}));
    for (const auto& roof : chart.roofs) t.add({roof.label, {"", roof.peak}, {"", roof.peak / chart.bandwidth}});
    return t;
}

int run_roofline(const PredictOptions& o) {
    Resolved r = resolve(o);
    r.request.per_layer = true;
    const Prediction p = Predictor(r.model())(r.device, r.profile, r.request);
    const RooflineChart chart = roofline_chart(r.model(), r.device, r.profile, p, r.model_id());
    if (!o.svg.empty()) write_file(o.svg, render_svg(chart));
    const Table points = point_table(chart);
    const auto document = [&] {
        return json{{"model", r.model_id()}, {"device", r.device.id.view()}, {"precision", to_string(p.precision)},
                    {"mode", to_string(p.mode)}, {"batch", p.batch}, {"bandwidth_bytes_per_s", chart.bandwidth},
                    {"roofs", roof_table(chart).json()}, {"points", points.json()}, {"svg", o.svg}};
    };
    if (print_machine(o.json, o.csv, points, document)) return 0;
    if (o.svg.empty()) fail("roofline: give --svg FILE for the chart, or --json / --csv for its data");
    std::cout << "wrote " << o.svg << ": " << chart.points.size() << " layers of " << r.model_id() << " on "
              << r.device.id.view() << " (" << to_string(p.precision) << ", batch " << p.batch << ")\n";
    return 0;
}

void add_roofline_options(CLI::App* app, PredictOptions& o) {
    add_predict_options(app, o, true);
    app->add_option("--svg", o.svg, "Write the roofline chart to this SVG file");
}

}  // namespace

const Command roofline_command = command<PredictOptions>(
    "roofline", "Draw a model's layers on a device's roofline (SVG)", add_roofline_options, run_roofline);

}  // namespace roofplan::cli

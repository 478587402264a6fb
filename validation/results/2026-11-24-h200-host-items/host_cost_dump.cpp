// host_cost_dump.cpp — every kernel of an eager prediction with the fields that set its host cost (HostOp, HostCall,
// views, container calls, kernel-less backward nodes, autocast flags, host tensors, sync) and that cost, as
// engine/timeline.hpp's host_cost() computes it: what `roofplan predict --kernels --json` does not print.  A
// validation aid for validation/e2e/host_items.py compare (the library is header-only; built outside the tree):
//
//   g++-12 -std=c++20 -O1 -I include -I/usr/include/eigen3 host_cost_dump.cpp -o /tmp/host_cost_dump
//   /tmp/host_cost_dump MODEL SEQ BATCH PRECISION MODE OPTIMIZER PROFILE.json > predicted.json
//   (SEQ 0 for a CNN; OPTIMIZER sgd or adam; device h200; runtime eager)
#include <roofplan/roofplan.hpp>
#include <roofplan/io/model_file.hpp>
#include <roofplan/io/json.hpp>
#include <iostream>
using namespace roofplan;
int main(int argc, char** argv) {
    // model seq batch precision mode optimizer profile
    io::ModelSource s; s.model = argv[1]; s.seq = std::stoll(argv[2]);
    const io::LoadedModel lm = io::load_model(s);
    DeviceCatalog cat; Device dev = cat.find("h200");
    EfficiencyProfile prof = io::load_profile(argv[7], dev);
    PredictRequest r; r.batch = std::stoll(argv[3]); r.precision = parse_precision(argv[4]); r.mode = parse_mode(argv[5]);
    r.optimizer = parse_optimizer(argv[6]); r.runtime = Runtime::eager; r.kernels = true;
    Prediction p = Predictor(lm.model)(dev, prof, r);
    nlohmann::json out = nlohmann::json::array();
    double prev = 0;
    for (const TimedKernel& k : p.kernels) {
        const Kernel& kk = k.kernel;
        std::string layer = kk.step_level ? (kk.part == StepPart::optimizer ? "optimizer" : "loss")
                                          : std::string(lm.model.nodes()[kk.node].name.view());
        out.push_back({{"layer", layer}, {"what", std::string(kk.what)}, {"part", std::string(to_string(kk.part))},
                       {"class", std::string(to_string(kk.kind))}, {"host", (int)kk.host}, {"call", (int)kk.call},
                       {"views", kk.views}, {"containers", kk.containers}, {"silent", kk.silent_backward_nodes},
                       {"autocast_op", kk.autocast_op}, {"host_tensors", kk.host_tensors}, {"adam", kk.adam_op != 0},
                       {"sync_before", kk.sync_before}, {"launches", k.time.launches},
                       {"host_cost_s", host_cost(kk, prof.host) + (k.time.launches - 1) * prof.host.launch_s},
                       {"issue_s", k.issue_s}, {"dissue_s", k.issue_s - prev}});
        prev = k.issue_s;
    }
    nlohmann::json doc = {{"host_s", p.host_s}, {"kernel_count", p.kernel_count}, {"step_s", p.step_time.value()},
                          {"host_costs", {{"module_s", prof.host.module_s}, {"internal_s", prof.host.internal_s},
                          {"backward_s", prof.host.backward_s}, {"optimizer_s", prof.host.optimizer_s}, {"launch_s", prof.host.launch_s},
                          {"view_s", prof.host.view_s}, {"container_s", prof.host.container_s}, {"silent_node_s", prof.host.silent_node_s},
                          {"cast_s", prof.host.cast_s}, {"autocast_s", prof.host.autocast_s}, {"per_tensor_s", prof.host.per_tensor_s},
                          {"adam_per_tensor_s", prof.host.adam_per_tensor_s}, {"sync_s", prof.host.sync_s}}},
                          {"kernels", out}};
    std::cout << doc.dump(1) << "\n";
}

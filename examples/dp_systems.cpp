// SPEC.md §2 scenario 3, data-parallel PyTorch training on NVIDIA DGX-2, AWS p3dn.24xlarge, IBM Power AC922 and
// Exxact TS4, as roofplan predicts it for eager PyTorch (the eager runtime: the kernels it launches, its host):
//   - training throughput (images or sequences per second, all GPUs) on 1, 2, 4, 8, 16 GPUs with DDP, for the
//     source's models and per-GPU batches (V100 systems / RTX 2080 Ti system), FP32, plus ResNet-50 in mixed
//     precision at batch 128 and 256, and ResNet-50 under nn.DataParallel (one process on one node: its
//     replicas remade every step, their threads' turns at the interpreter lock, the loss, the gradients' reduction
//     and the optimizer on GPU 0; '1 node' where the GPUs span several);
//   - all-reduce and broadcast bus bandwidth (nccl-tests convention) for 1 MiB to 1 GiB on 2 to 16 GPUs.
// 16 GPUs on p3dn are two nodes over 100 Gbit/s Ethernet, on the AC922 four nodes over InfiniBand; the TS4 has 8.
// The source paper's figures (throughput vs GPUs per system, busbw vs message size) hold the measurements.
// Checks: one GPU under DDP is exactly the single-GPU prediction; scaling efficiency is in (0, 1]; busbw never
// exceeds the ring's link bandwidth (nor the network's across nodes).
// Writes dp_resnet50_fp32.svg, dp_bert_squad_efficiency.svg, dp_allreduce_busbw.svg and dp_broadcast_busbw.svg
// (current directory or argv[1]).
#include <roofplan/roofplan.hpp>

#include "common/chart.hpp"
#include "common/check.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using namespace roofplan;

roofplan_examples::Checks checks;

const char* const systems[] = {"dgx2", "aws-p3dn", "ibm-ac922", "exxact-ts4"};
const int gpu_counts[] = {1, 2, 4, 8, 16};

struct Workload {
    const char* model;
    std::int64_t batch_v100;
    std::int64_t batch_rtx;
    Precision precision;
};

struct Curves {
    std::vector<roofplan_examples::Series> throughput;
    std::vector<roofplan_examples::Series> efficiency;  ///< percent
};

/// One table: rows the systems, columns the GPU counts; returns each system's curves for the charts.
Curves throughput_table(const Workload& w, DataParallel mode) {
    const Model model = models::build(w.model);
    const Predictor predictor(model);
    std::printf("\n%s, %s, %s, batch/GPU %lld (V100) / %lld (RTX 2080 Ti): samples/s, all GPUs (scaling efficiency)\n",
                w.model, std::string(to_string(w.precision)).c_str(), std::string(to_string(mode)).c_str(),
                static_cast<long long>(w.batch_v100), static_cast<long long>(w.batch_rtx));
    std::printf("%-11s", "system");
    for (int g : gpu_counts) std::printf(" %17s", (std::to_string(g) + " GPU" + (g > 1 ? "s" : "")).c_str());
    std::printf("\n");
    Curves curves;
    for (const char* sid : systems) {
        const System& s = find_system(sid);
        const Device& d = find_device(s.device.view());
        const std::int64_t batch = std::string_view(sid) == "exxact-ts4" ? w.batch_rtx : w.batch_v100;
        roofplan_examples::Series curve{sid, {}, false}, efficiency{sid, {}, false};
        std::printf("%-11s", sid);
        for (int g : gpu_counts) {
            if (g > s.gpus_per_node * s.max_nodes) {
                std::printf(" %17s", "-");
                continue;
            }
            if (mode == DataParallel::dp && g > s.gpus_per_node) {
                std::printf(" %17s", "1 node");
                continue;
            }
            const PredictRequest request{.batch = batch, .precision = w.precision, .runtime = Runtime::eager};
            const ParallelPrediction p = predict_parallel(predictor, d, default_profile(d), request, s,
                                                          {.gpus = g, .mode = mode});
            checks.expect(p.scaling_efficiency > 0 && p.scaling_efficiency <= 1 + 1e-12,
                          std::string(sid) + ": scaling efficiency in (0, 1]");
            if (g == 1)
                checks.expect(roofplan_examples::close(p.throughput_samples_per_s,
                                                       predictor(d, default_profile(d), request).throughput_samples_per_s),
                              std::string(sid) + ": one GPU under DDP = the single-GPU prediction");
            char buf[40];
            if (!p.gpu.fits) std::snprintf(buf, sizeof buf, "OOM (max %lld)", static_cast<long long>(p.gpu.max_batch));
            else std::snprintf(buf, sizeof buf, "%8.0f (%5.1f%%)", p.throughput_samples_per_s, 100.0 * p.scaling_efficiency);
            std::printf(" %17s", buf);
            if (p.gpu.fits) {
                curve.points.emplace_back(g, p.throughput_samples_per_s);
                efficiency.points.emplace_back(g, 100.0 * p.scaling_efficiency);
            }
        }
        std::printf("\n");
        curves.throughput.push_back(curve);
        curves.efficiency.push_back(efficiency);
    }
    return curves;
}

std::vector<roofplan_examples::Series> busbw_tables(Collective op) {
    const std::int64_t sizes[] = {1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30};
    std::vector<roofplan_examples::Series> curves;
    for (const char* sid : systems) {
        const System& s = find_system(sid);
        std::printf("\n%s on %s: busbw GB/s (nccl-tests convention, ring)\n%-10s", std::string(to_string(op)).c_str(),
                    sid, "size");
        std::vector<int> counts;
        for (int g : gpu_counts)
            if (g >= 2 && g <= s.gpus_per_node * s.max_nodes) counts.push_back(g);
        for (int g : counts) std::printf(" %9s", (std::to_string(g) + " GPUs").c_str());
        std::printf("\n");
        roofplan_examples::Series curve{sid + std::string(" x") + std::to_string(counts.back()), {}, false};
        for (std::int64_t bytes : sizes) {
            std::printf("%-10s", (roofplan_examples::chart_detail::tick(static_cast<double>(bytes)) + "iB").c_str());
            for (int g : counts) {
                const CollectiveTime t = collective_time(s, op, bytes, placement(s, {.gpus = g}));
                const CollectivePlace place = placement(s, {.gpus = g});
                double limit = ring_bandwidth(s, place.gpus).gb_s;
                if (place.nodes > 1) limit = std::min(limit, s.network.gb_s_multi_flow);
                checks.expect(t.busbw_gb_s > 0 && t.busbw_gb_s <= limit,
                              std::string(sid) + ": busbw within the link bandwidth");
                std::printf(" %9.2f", t.busbw_gb_s);
                if (g == counts.back()) curve.points.emplace_back(static_cast<double>(bytes), t.busbw_gb_s);
            }
            std::printf("\n");
        }
        curves.push_back(curve);
    }
    return curves;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string dir = argc > 1 ? std::string(argv[1]) + "/" : "";
    std::printf("Data-parallel training on DGX-2 / p3dn.24xlarge / AC922 / TS4 (SPEC.md section 2, scenario 3):\n"
                "roofplan's predictions for eager PyTorch with the default efficiency profiles; '-': more GPUs than\n"
                "the system has; '1 node': nn.DataParallel drives the GPUs of one node.\n");
    const Workload workloads[] = {
        {"alexnet", 256, 64, Precision::fp32},     {"resnet18", 256, 64, Precision::fp32},
        {"resnet50", 256, 64, Precision::fp32},    {"resnet101", 128, 64, Precision::fp32},
        {"resnet152", 128, 64, Precision::fp32},   {"bert-swag", 64, 16, Precision::fp32},
        {"bert-squad", 32, 8, Precision::fp32},    {"resnet50", 128, 64, Precision::amp_fp16},
        {"resnet50", 256, 64, Precision::amp_fp16},
    };
    Curves resnet50, bert_squad;
    for (const Workload& w : workloads) {
        Curves curves = throughput_table(w, DataParallel::ddp);
        if (std::string_view(w.model) == "resnet50" && w.precision == Precision::fp32) resnet50 = curves;
        if (std::string_view(w.model) == "bert-squad") bert_squad = curves;
    }
    (void)throughput_table({"resnet50", 256, 64, Precision::fp32}, DataParallel::dp);

    roofplan_examples::write_svg(dir + "dp_resnet50_fp32.svg",
                                 {"ResNet-50 training, FP32, DDP (predicted)",
                                  "batch 256/GPU on V100 systems, 64 on the TS4 (RTX 2080 Ti)", "GPUs",
                                  "images/s (all GPUs)", true, true, resnet50.throughput});
    roofplan_examples::write_svg(dir + "dp_bert_squad_efficiency.svg",
                                 {"BERT-SQuAD training, FP32, DDP: scaling efficiency (predicted)",
                                  "batch 32/GPU on V100 systems, 8 on the TS4; throughput / (n x one GPU)", "GPUs",
                                  "scaling efficiency (%)", true, false, bert_squad.efficiency, 90});
    roofplan_examples::write_svg(dir + "dp_allreduce_busbw.svg",
                                 {"All-reduce bus bandwidth (predicted, ring)",
                                  "each system at its largest GPU count; nccl-tests busbw = algbw x 2(n-1)/n",
                                  "message size (bytes; K, M, G = 2^10, 2^20, 2^30)", "busbw (GB/s)", true, false,
                                  busbw_tables(Collective::allreduce)});
    roofplan_examples::write_svg(dir + "dp_broadcast_busbw.svg",
                                 {"Broadcast bus bandwidth (predicted, ring)",
                                  "each system at its largest GPU count; busbw = algbw for broadcast",
                                  "message size (bytes; K, M, G = 2^10, 2^20, 2^30)", "busbw (GB/s)", true, false,
                                  busbw_tables(Collective::broadcast)});
    return checks.finish();
}

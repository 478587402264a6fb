// The source paper's Table II beside roofplan's counts, under the paper's rule (a multiply-add counts one
// operation, a bias add one).  The CNN rows must agree within 2% on operations and 0.01 M on parameters; the
// BERT rows do not follow from the rule and are explained in docs/counting.md.
#include <roofplan/roofplan.hpp>

#include <cmath>
#include <cstdio>

int main() {
    struct Row {
        const char* label;
        const char* id;
        double paper_params_m;
        double paper_ops_g;
        bool cnn;
    };
    const Row rows[] = {{"AlexNet", "alexnet", 61.10, 0.72, true},
                        {"ResNet18", "resnet18", 11.69, 1.83, true},
                        {"ResNet50", "resnet50", 25.56, 4.14, true},
                        {"ResNet101", "resnet101", 44.55, 7.88, true},
                        {"ResNet152", "resnet152", 60.19, 11.62, true},
                        {"BERT-SWAG (seq 80)", "bert-swag", 109.5, 0.19, false},
                        {"BERT-SQuAD (seq 384)", "bert-squad", 109.5, 2.87, false}};
    std::printf("%-21s %12s %12s %9s %12s %12s %9s  %s\n", "model", "paper M", "ours M", "diff M", "paper Gops",
                "ours Gops", "diff", "verdict");
    bool all_ok = true;
    for (const Row& r : rows) {
        const roofplan::Model m = roofplan::models::build(r.id);
        const double params_m = static_cast<double>(m.params()) / 1e6;
        const double ops_g = static_cast<double>(m.paper_ops()) / 1e9;
        const double params_diff = params_m - r.paper_params_m;
        const double ops_diff = (ops_g - r.paper_ops_g) / r.paper_ops_g;
        const bool ok = std::fabs(params_diff) <= 0.01 && std::fabs(ops_diff) <= 0.02;
        if (r.cnn) all_ok = all_ok && ok;
        std::printf("%-21s %12.2f %12.2f %+9.3f %12.2f %12.2f %+8.1f%%  %s\n", r.label, r.paper_params_m, params_m,
                    params_diff, r.paper_ops_g, ops_g, 100.0 * ops_diff,
                    r.cnn ? (ok ? "agrees" : "DISAGREES") : "rule differs: see docs/counting.md");
    }
    std::printf("CNN rows %s within 2%% (ops) and 0.01 M (params)\n", all_ok ? "all agree" : "do NOT all agree");
    return all_ok ? 0 : 1;
}

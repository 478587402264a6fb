// A MAC table across the zoo: parameters, multiply-adds and FLOPs per sample, forward and for a training step.
#include <roofplan/roofplan.hpp>

#include <cstdio>

int main() {
    std::printf("%-11s %7s %15s %11s %11s %14s\n", "model", "input", "params", "fwd GMAC", "fwd GFLOP",
                "train GFLOP");
    for (const auto& entry : roofplan::models::zoo()) {
        const roofplan::Model m = entry.build();
        const auto step = m.training_work(1, roofplan::Precision::fp32);
        char input[16];
        std::snprintf(input, sizeof input, entry.uses_seq() ? "seq%lld" : "%lldpx",
                      static_cast<long long>(entry.default_size));
        std::printf("%-11s %7s %15lld %11.2f %11.2f %14.2f\n", std::string(entry.id).c_str(), input,
                    static_cast<long long>(m.params()), static_cast<double>(m.forward_macs().value()) / 1e9,
                    static_cast<double>(m.forward_flops().value()) / 1e9,
                    static_cast<double>(step.total().flops().value()) / 1e9);
    }
    std::printf("(MAC = multiply-accumulate; 1 MAC = 2 FLOP; FLOPs add bias, activation, normalisation and softmax "
                "arithmetic)\n");
    return 0;
}

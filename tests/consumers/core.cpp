// A consumer of roofplan's core alone (roofplan::core: Boost only) — counting and prediction.
#include <roofplan/roofplan.hpp>

#include <cstdio>
#include <string>

int main() {
    static_assert(roofplan::models::resnet50().params() == 25'557'032);
    const auto model = roofplan::models::build("bert-base", {.seq = 128});
    const roofplan::Device& h100 = roofplan::find_device("h100");
    const auto p = roofplan::Predictor(model)(h100, roofplan::default_profile(h100), {.batch = 32});
    std::printf("consumer ok (core): bert-base %lld params, %.0f samples/s on %s\n",
                static_cast<long long>(model.params()), p.throughput_samples_per_s, std::string(h100.name.view()).c_str());
    return model.params() == 109'482'240 && p.throughput_samples_per_s > 0 ? 0 : 1;
}

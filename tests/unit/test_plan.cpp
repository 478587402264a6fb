// Planning: candidate GPU counts, constraints that exclude (deadline, budget, power cap, throughput target, memory
// capacity, precision support, global batch splits), the figures of an option against the system model they come
// from, ranking order, and error paths.
#include <roofplan/plan/plan.hpp>
#include <roofplan/roofplan.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <deque>

using namespace roofplan;

namespace {

std::vector<PlanCandidate> on_system(std::string_view id, int max_gpus = 0) {
    static std::deque<System> keep;  // candidates point at their system: a deque never moves its elements
    keep.push_back(find_system(id));
    return plan_candidates(std::span<const System>(&keep.back(), 1), DeviceCatalog{}, {}, max_gpus);
}

std::vector<PlanCandidate> alone(std::string_view device) {
    const Device& d = find_device(device);
    return plan_candidates({}, DeviceCatalog{}, std::span<const Device>(&d, 1));
}

PlanWorkload imagenet(std::int64_t batch) {
    PlanWorkload w;
    w.batch_per_gpu = batch;
    w.dataset = 1'281'167;
    w.epochs = 90;
    return w;
}

const PlanOption& with_gpus(const std::vector<PlanOption>& options, int gpus) {
    const auto it = std::find_if(options.begin(), options.end(), [&](const PlanOption& o) { return o.gpus == gpus; });
    REQUIRE(it != options.end());
    return *it;
}

}  // namespace

TEST_CASE("GPU counts: powers of two inside a node, then whole nodes doubling, capped") {
    CHECK(plan_gpu_counts(find_system("dgx2"), 16) == std::vector<int>{1, 2, 4, 8, 16});
    CHECK(plan_gpu_counts(find_system("r740-p40")) == std::vector<int>{1, 2, 3});
    CHECK(plan_gpu_counts(find_system("ibm-ac922")) == std::vector<int>{1, 2, 4, 8, 16});  // 4 nodes of 4
    CHECK(plan_gpu_counts(find_system("aws-p3dn"), 40) == std::vector<int>{1, 2, 4, 8, 16, 32});
    // 140 nodes of 8: 1..128 nodes doubling, then all 140.
    const std::vector<int> a100 = plan_gpu_counts(find_system("dgx-a100"));
    CHECK(a100.back() == 140 * 8);
    CHECK(a100[a100.size() - 2] == 128 * 8);
    CHECK(std::is_sorted(a100.begin(), a100.end()));
    CHECK_THROWS_AS((void)plan_gpu_counts(find_system("dgx2"), -1), invalid_argument);
    // Candidates: one per count per system, then each lone device once.
    const std::vector<PlanCandidate> c = on_system("dgx2", 16);
    REQUIRE(c.size() == 5);
    CHECK(c[0].device.id.view() == "v100-sxm2-32gb");
    CHECK(alone("v100").size() == 1);
    CHECK(alone("v100")[0].system == nullptr);
}

TEST_CASE("an option's figures are the data-parallel model's: time, GPU-hours, cost, energy, power") {
    const Model m = models::build("resnet50");
    const Predictor predictor(m);
    const std::vector<PlanCandidate> c = on_system("dgx2", 16);
    PlanCandidate k = c[3];  // 8 GPUs
    k.price_per_gpu_hour = 3.0;
    const PlanOption o = evaluate_option(predictor, k, imagenet(256), {});
    REQUIRE(o.predicted);
    CHECK(o.feasible);
    const System& s = find_system("dgx2");
    const Device& d = find_device("v100-sxm2-32gb");
    const ParallelPrediction p = predict_parallel(predictor, d, default_profile(d), {.batch = 256}, s, {.gpus = 8});
    const double steps = std::ceil(1'281'167.0 / (256.0 * 8)) * 90;
    CHECK(*o.steps == doctest::Approx(steps));
    CHECK(*o.time_s == doctest::Approx(steps * p.step_time.value()));
    CHECK(*o.gpu_hours == doctest::Approx(*o.time_s / 3600 * 8));
    CHECK(*o.cost == doctest::Approx(*o.gpu_hours * 3.0));
    CHECK(*o.cost_per_hour == doctest::Approx(24.0));
    CHECK(o.power_w == doctest::Approx(8 * 300.0));  // V100 SXM2 TDP
    CHECK(*o.energy_j == doctest::Approx(8 * 300.0 * *o.time_s));
    CHECK(o.throughput == doctest::Approx(256.0 * 8 / p.step_time.value()));
    CHECK(o.global_batch == 2048);
    double total = 0;
    for (double share : o.shares) total += share;
    CHECK(total == doctest::Approx(1.0));
    CHECK(o.bound == PlanBound::compute);  // ResNet-50 at batch 256 in FP32 on V100
}

TEST_CASE("the host's share: an eager step whose GPU waits for the CPU is host-bound, as predict says") {
    // BERT-base training at batch 1 on an H100, eager: ~1,300 kernels a step, each dispatched by the CPU in more
    // time than the GPU takes to run it (docs/eager-lowering.md, host-bound cases).
    const Model m = models::build("bert-base");
    const Predictor predictor(m);
    PlanWorkload w;
    w.batch_per_gpu = 1;
    w.runtime = Runtime::eager;
    const PlanCandidate k = alone("h100-sxm")[0];
    const PlanOption o = evaluate_option(predictor, k, w, {});
    REQUIRE(o.predicted);
    const Device& d = find_device("h100-sxm");
    PredictRequest r{.batch = 1, .runtime = Runtime::eager};
    r.per_layer = true;
    const Prediction g = predictor(d, default_profile(d), r);
    REQUIRE(g.bound == StepBound::host);
    CHECK(o.bound == PlanBound::host);
    // The share is the GPU's idle time beyond the kernels' gaps, over the step's parts.
    const double idle = g.step_time.value() - g.gpu_busy_s - g.gpu_gap_s;
    CHECK(idle > 0);
    CHECK(o.shares[4] > 0.5);
    CHECK(o.shares[4] == doctest::Approx(idle / g.step_time.value()).epsilon(0.05));
    double total = 0;
    for (double share : o.shares) total += share;
    CHECK(total == doctest::Approx(1.0));
    // The ideal runtime has no host: the same option has no host share.
    w.runtime = Runtime::ideal;
    const PlanOption ideal = evaluate_option(predictor, k, w, {});
    CHECK(ideal.shares[4] == 0);
    CHECK(ideal.bound != PlanBound::host);
}

TEST_CASE("ResNet-50 on NVSwitch systems: more GPUs never train slower (communication stays hidden)") {
    const Model m = models::build("resnet50");
    const Predictor predictor(m);
    for (std::string_view id : {"dgx2", "hgx-h200-8", "dgx-h100"}) {
        CAPTURE(id);
        const std::vector<PlanCandidate> c = on_system(id, 16);
        std::vector<double> times;
        for (const PlanCandidate& k : c) {
            const PlanOption o = evaluate_option(predictor, k, imagenet(256), {});
            REQUIRE(o.feasible);
            times.push_back(*o.time_s);
        }
        for (std::size_t i = 1; i < times.size(); ++i) CHECK(times[i] < times[i - 1]);
        // ... and with the node's 8 GPUs, close to linear: the time shrinks by more than 7x.
        CHECK(times[0] / times[3] > 7.0);
    }
}

TEST_CASE("communication bounds AlexNet across two p3dn nodes on one TCP flow") {
    const Model m = models::build("alexnet");
    const Predictor predictor(m);
    PlanWorkload w = imagenet(256);
    w.single_flow = true;
    const std::vector<PlanCandidate> c = on_system("aws-p3dn", 16);
    const PlanOption o = evaluate_option(predictor, c.back(), w, {});
    CHECK(o.gpus == 16);
    CHECK(o.nodes == 2);
    CHECK(o.bound == PlanBound::communication);
    CHECK(o.shares[3] > 0.5);
    CHECK(o.comm_fraction == doctest::Approx(o.shares[3]));
    // Past that point more GPUs train slower: the plan ranks one node of 8 ahead of two nodes of 16.
    const Plan plan = make_plan(predictor, c, w, {});
    REQUIRE(plan.feasible.size() == 5);
    CHECK(plan.feasible.front().gpus == 8);
    CHECK(*with_gpus(plan.feasible, 16).time_s > *with_gpus(plan.feasible, 8).time_s);
}

TEST_CASE("constraints exclude: deadline, budget, power cap, throughput target") {
    const Model m = models::build("resnet50");
    const Predictor predictor(m);
    std::vector<PlanCandidate> c = on_system("dgx2", 16);
    for (PlanCandidate& k : c) k.price_per_gpu_hour = 3.0;
    const PlanWorkload w = imagenet(256);
    const Plan free = make_plan(predictor, c, w, {});
    REQUIRE(free.feasible.size() == 5);
    const double t4 = *with_gpus(free.feasible, 4).time_s, t8 = *with_gpus(free.feasible, 8).time_s;

    SUBCASE("deadline") {
        const Plan plan = make_plan(predictor, c, w, {.deadline_s = (t4 + t8) / 2});
        CHECK(plan.feasible.size() == 2);  // 8 and 16 GPUs
        for (const PlanOption& o : plan.feasible) CHECK(*o.time_s <= (t4 + t8) / 2);
        REQUIRE(plan.infeasible.size() == 3);
        for (const PlanOption& o : plan.infeasible) {
            CHECK(o.gpus <= 4);
            CHECK(o.reasons.at(0).find("exceeds the deadline") != std::string::npos);
        }
    }
    SUBCASE("budget") {
        // The cheapest option is the one with the best scaling per GPU-hour: a budget just above it keeps it alone.
        double cheapest = HUGE_VAL;
        for (const PlanOption& o : free.feasible) cheapest = std::min(cheapest, *o.cost);
        const Plan plan = make_plan(predictor, c, w, {.budget = cheapest * 1.0001});
        for (const PlanOption& o : plan.feasible) CHECK(*o.cost <= cheapest * 1.0001);
        CHECK(!plan.feasible.empty());
        CHECK(!plan.infeasible.empty());
        for (const PlanOption& o : plan.infeasible) CHECK(o.reasons.at(0).find("exceeds the budget") != std::string::npos);
    }
    SUBCASE("power cap") {
        const Plan plan = make_plan(predictor, c, w, {.power_cap_w = 2000});  // 6 V100s at 300 W
        CHECK(plan.feasible.size() == 3);
        for (const PlanOption& o : plan.feasible) CHECK(o.gpus <= 4);
        for (const PlanOption& o : plan.infeasible) {
            CHECK(o.gpus >= 8);
            CHECK(o.reasons.at(0).find("above the power cap of 2000 W") != std::string::npos);
        }
    }
    SUBCASE("throughput target") {
        PlanWorkload target;
        target.batch_per_gpu = 256;
        target.target_throughput = 0.5 * (with_gpus(free.feasible, 4).throughput + with_gpus(free.feasible, 8).throughput);
        const Plan plan = make_plan(predictor, c, target, {});
        CHECK(plan.feasible.size() == 2);
        CHECK(plan.feasible.front().gpus == 16);  // ranked by throughput without a dataset
        CHECK(plan.infeasible.front().reasons.at(0).find("below the target") != std::string::npos);
    }
    SUBCASE("all reasons are listed") {
        const Plan plan = make_plan(predictor, c, w, {.deadline_s = t8 * 0.999, .power_cap_w = 1000});
        const PlanOption& one = with_gpus(plan.infeasible, 1);
        CHECK(one.reasons.size() == 1);  // 300 W is under the cap
        const PlanOption& eight = with_gpus(plan.infeasible, 8);
        CHECK(eight.reasons.size() == 2);  // too slow and too hungry
    }
}

TEST_CASE("memory capacity and precision support make options infeasible, not errors") {
    const Model bert = models::build("bert-large");
    const Predictor predictor(bert);
    PlanWorkload w;
    w.batch_per_gpu = 256;
    const PlanOption v100 = evaluate_option(predictor, alone("v100-sxm2-16gb")[0], w, {});
    CHECK(v100.predicted);
    CHECK_FALSE(v100.feasible);
    CHECK(v100.bound == PlanBound::memory_capacity);
    CHECK(v100.memory_bytes > v100.capacity_bytes);
    CHECK(v100.capacity_bytes == doctest::Approx(16.0 * 1073741824.0));
    // Weights, gradients and momentum alone are 12 bytes per parameter (4.0 GB); the activations do the rest.
    CHECK(v100.memory_bytes > 12.0 * static_cast<double>(bert.params()));
    CHECK(v100.max_batch < 256);
    REQUIRE(v100.reasons.size() == 1);
    CHECK(v100.reasons[0].find("largest batch that fits is " + std::to_string(v100.max_batch)) != std::string::npos);
    // A batch that fits is feasible on the same card.
    w.batch_per_gpu = std::max<std::int64_t>(1, v100.max_batch);
    CHECK(evaluate_option(predictor, alone("v100-sxm2-16gb")[0], w, {}).feasible);

    w.precision = Precision::amp_bf16;
    const PlanOption bf16 = evaluate_option(predictor, alone("v100-sxm2-16gb")[0], w, {});
    CHECK_FALSE(bf16.predicted);
    CHECK(bf16.bound == PlanBound::unsupported);
    CHECK(bf16.reasons.at(0).find("no BF16 tensor cores") != std::string::npos);
    CHECK(evaluate_option(predictor, alone("a100-sxm4-80gb")[0], w, {}).feasible);
}

TEST_CASE("a global batch is split evenly over each option's GPUs") {
    const Model m = models::build("resnet50");
    const Predictor predictor(m);
    PlanWorkload w;
    w.global_batch = 64;
    const Plan plan = make_plan(predictor, on_system("r740-p40"), w, {});
    REQUIRE(plan.feasible.size() == 2);
    for (const PlanOption& o : plan.feasible) CHECK(o.batch_per_gpu * o.gpus == 64);
    REQUIRE(plan.infeasible.size() == 1);  // 3 GPUs
    CHECK(plan.infeasible[0].gpus == 3);
    CHECK(plan.infeasible[0].reasons[0] == "the global batch 64 does not split evenly over 3 GPUs");
}

TEST_CASE("ranking: sorted by the chosen key, ties to fewer GPUs") {
    const Model m = models::build("resnet50");
    const Predictor predictor(m);
    std::vector<PlanCandidate> c = on_system("dgx-h100", 64);
    for (const PlanCandidate& k : on_system("sr670v2-a100-pcie", 64)) c.push_back(k);
    for (PlanCandidate& k : c) k.price_per_gpu_hour = k.device.id.view() == "h100-sxm" ? 4.0 : 1.5;
    PlanWorkload w = imagenet(256);
    w.precision = Precision::amp_bf16;
    for (PlanRank rank : {PlanRank::time, PlanRank::cost, PlanRank::energy}) {
        CAPTURE(to_string(rank));
        const Plan plan = make_plan(predictor, c, w, {}, rank);
        REQUIRE(plan.feasible.size() == c.size());
        for (std::size_t i = 1; i < plan.feasible.size(); ++i)
            CHECK(plan_rank_key(plan.feasible[i - 1], rank, w) <= plan_rank_key(plan.feasible[i], rank, w));
    }
    // Infeasible options: those predicted first (in ranking order), then those that cannot run.
    std::vector<PlanCandidate> mixed = c;
    for (const PlanCandidate& k : on_system("dgx2", 4)) mixed.push_back(k);  // no BF16 on V100
    const Plan with_bad = make_plan(predictor, mixed, w, {.deadline_s = 3600}, PlanRank::time);
    bool seen_unpredicted = false;
    for (std::size_t i = 0; i < with_bad.infeasible.size(); ++i) {
        const PlanOption& o = with_bad.infeasible[i];
        if (!o.predicted) seen_unpredicted = true;
        else CHECK_FALSE(seen_unpredicted);
        if (i > 0 && o.predicted) CHECK(*with_bad.infeasible[i - 1].time_s <= *o.time_s);
    }
    CHECK(seen_unpredicted);
    CHECK(with_bad.infeasible.back().bound == PlanBound::unsupported);
    const Plan by_time = make_plan(predictor, c, w, {}, PlanRank::time);
    CHECK(by_time.feasible.front().gpus == 64);
    CHECK(by_time.feasible.back().gpus == 1);
    CHECK(*by_time.feasible.front().time_s <= *by_time.feasible.back().time_s);
    const Plan by_cost = make_plan(predictor, c, w, {}, PlanRank::cost);
    CHECK(*by_cost.feasible.front().cost <= *by_cost.feasible.back().cost);
    // Without a dataset: throughput, highest first.
    PlanWorkload rate;
    rate.batch_per_gpu = 256;
    const Plan fastest = make_plan(predictor, c, rate, {});
    for (std::size_t i = 1; i < fastest.feasible.size(); ++i)
        CHECK(fastest.feasible[i - 1].throughput >= fastest.feasible[i].throughput);
    CHECK(plan_rank_key_name(PlanRank::cost, rate) == "cost_per_sample");
    CHECK(parse_plan_rank("energy") == PlanRank::energy);
    CHECK_THROWS_WITH_AS((void)parse_plan_rank("speed"), doctest::Contains("accepted: time, cost, energy"),
                         invalid_argument);
}

TEST_CASE("errors say what to give") {
    const Model m = models::build("resnet50");
    const Predictor predictor(m);
    const std::vector<PlanCandidate> c = on_system("dgx2", 4);
    PlanWorkload both = imagenet(256);
    both.global_batch = 1024;
    CHECK_THROWS_WITH_AS((void)make_plan(predictor, c, both, {}), doctest::Contains("not both"), invalid_argument);
    PlanWorkload none = imagenet(0);
    CHECK_THROWS_WITH_AS((void)make_plan(predictor, c, none, {}), doctest::Contains("global_batch"), invalid_argument);
    CHECK_THROWS_WITH_AS((void)make_plan(predictor, c, imagenet(256), {.deadline_s = -3600}),
                         doctest::Contains("deadline must be a positive number of hours"), invalid_argument);
    CHECK_THROWS_WITH_AS((void)make_plan(predictor, c, imagenet(256), {.budget = 1000.0}),
                         doctest::Contains("a budget needs prices per GPU-hour"), invalid_argument);
    CHECK_THROWS_WITH_AS((void)make_plan(predictor, c, imagenet(256), {}, PlanRank::cost),
                         doctest::Contains("ranking by cost needs prices"), invalid_argument);
    PlanWorkload no_run;
    no_run.batch_per_gpu = 256;
    CHECK_THROWS_WITH_AS((void)make_plan(predictor, c, no_run, {.deadline_s = 3600}),
                         doctest::Contains("a deadline needs a time-to-train"), invalid_argument);
    PlanWorkload half = imagenet(256);
    half.epochs = 0;
    CHECK_THROWS_WITH_AS((void)make_plan(predictor, c, half, {}), doctest::Contains("and epochs"), invalid_argument);
    PlanWorkload infer = no_run;
    infer.mode = Mode::infer;
    infer.dataset = 1000;
    infer.epochs = 1;
    CHECK_THROWS_WITH_AS((void)make_plan(predictor, c, infer, {}), doctest::Contains("for training"), invalid_argument);
    CHECK_THROWS_WITH_AS((void)make_plan(predictor, std::vector<PlanCandidate>{}, imagenet(256), {}),
                         doctest::Contains("no options"), invalid_argument);
    CHECK_THROWS_WITH_AS((void)make_plan(predictor, c, imagenet(256), {.power_cap_w = -5}),
                         doctest::Contains("power cap"), invalid_argument);
}

TEST_CASE("inference plans: GPUs work independently, INT8 where the device has it") {
    const Model m = models::build("googlenet");
    const Predictor predictor(m);
    PlanWorkload w;
    w.mode = Mode::infer;
    w.precision = Precision::int8;
    w.batch_per_gpu = 128;
    const Plan plan = make_plan(predictor, on_system("r740-p4"), w, {});
    REQUIRE(plan.feasible.size() == 3);  // 1, 2, 4
    const PlanOption& one = with_gpus(plan.feasible, 1);
    const PlanOption& four = with_gpus(plan.feasible, 4);
    CHECK(four.throughput == doctest::Approx(4 * one.throughput));
    CHECK(four.shares[3] == 0);
    CHECK(four.power_w == doctest::Approx(4 * 75.0));  // Tesla P4 TDP
    // The progress callback sees every candidate in order.
    std::vector<std::size_t> seen;
    (void)make_plan(predictor, on_system("r740-p4"), w, {}, PlanRank::time,
                    [&](std::size_t i, std::size_t total, const PlanCandidate&) {
                        CHECK(total == 3);
                        seen.push_back(i);
                    });
    CHECK(seen == std::vector<std::size_t>{0, 1, 2});
}

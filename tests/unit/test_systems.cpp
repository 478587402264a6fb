// Systems and collectives: nccl-tests conventions, ring bandwidths of the source topologies, latency and bandwidth
// regimes, monotonicity, data-parallel scaling, time-to-train, and error paths.
#include <roofplan/plan/scaling.hpp>
#include <roofplan/roofplan.hpp>

#include <doctest/doctest.h>

using namespace roofplan;

namespace {
double ring(std::string_view system, GpuSet gpus) { return ring_bandwidth(find_system(system), gpus).gb_s; }
}  // namespace

TEST_CASE("busbw factors follow nccl-tests") {
    CHECK(busbw_factor(Collective::allreduce, 8) == doctest::Approx(2.0 * 7 / 8));
    CHECK(busbw_factor(Collective::reducescatter, 4) == doctest::Approx(0.75));
    CHECK(busbw_factor(Collective::allgather, 16) == doctest::Approx(15.0 / 16));
    CHECK(busbw_factor(Collective::broadcast, 8) == 1.0);
    CHECK(busbw_factor(Collective::reduce, 2) == 1.0);
    const System& s = find_system("dgx-h100");
    const CollectiveTime t = collective_time(s, Collective::allreduce, 1 << 28, {first_gpus(s, 8)});
    CHECK(t.algbw_gb_s == doctest::Approx((1 << 28) / t.time.value() / 1e9));
    CHECK(t.busbw_gb_s == doctest::Approx(t.algbw_gb_s * 1.75));
}

TEST_CASE("DGX-1V: which GPUs take part decides the ring (hybrid cube-mesh)") {
    CHECK(ring("dgx1v", {0, 1}) == 25);       // one NVLink
    CHECK(ring("dgx1v", {0, 3}) == 50);       // a double link
    CHECK(ring("dgx1v", {0, 1, 2, 3}) == 100);  // four link ends per GPU inside the quad
    CHECK(ring("dgx1v", {0, 1, 2, 3, 4, 5, 6, 7}) == 150);  // all six NVLinks of every GPU
    // 0, 1, 6, 7: 0-1 single, 6-7 double, no link between {0,1} and {6,7} except none: no NVLink ring
    const RingBandwidth odd = ring_bandwidth(find_system("dgx1v"), {0, 1, 6, 7});
    CHECK(odd.rings == 0);
    CHECK(odd.gb_s < 25);
    CHECK(odd.kind != LinkKind::nvlink);
    // Switch fabrics do not care which GPUs take part.
    CHECK(ring("dgx2", {0, 15}) == ring("dgx2", {0, 1}));
}

TEST_CASE("ring bottlenecks of the other source topologies") {
    CHECK(ring("ibm-ac922", {0, 1}) == 75);                // 3 NVLinks between the GPUs of one CPU
    CHECK(ring("ibm-ac922", {0, 1, 2, 3}) == 32);          // the X-bus between the sockets
    CHECK(ring("exxact-ts4", {0, 1, 2, 3, 4, 5, 6, 7}) == doctest::Approx(15.75));  // PCIe Gen3 x16
    CHECK(ring("p920-titan-rtx", {0, 1}) == 50);           // NVLink bridge, 2 links
    CHECK(ring("sr670v2-a100-sxm4", {0, 1, 2, 3}) == 300);  // 12 NVLink3 per GPU
    CHECK(ring("dgx2", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}) == 150);
}

TEST_CASE("small messages are latency-bound, large ones bandwidth-bound; monotone in bytes and bandwidth") {
    const System& s = find_system("dgx-a100");
    const CollectivePlace all{first_gpus(s, 8)};
    const CollectiveTime tiny = collective_time(s, Collective::allreduce, 8, all);
    CHECK(tiny.time.value() == doctest::Approx(14 * LinkParameters{}.latency(LinkKind::nvswitch)).epsilon(0.01));
    const CollectiveTime huge = collective_time(s, Collective::allreduce, std::int64_t{1} << 32, all);
    CHECK(huge.busbw_gb_s == doctest::Approx(300 * 0.8).epsilon(0.01));
    double previous_time = 0, previous_busbw = 0;
    for (std::int64_t b = 1024; b <= (std::int64_t{1} << 31); b *= 4) {
        const CollectiveTime t = collective_time(s, Collective::allreduce, b, all);
        CHECK(t.time.value() > previous_time);
        CHECK(t.busbw_gb_s > previous_busbw);
        previous_time = t.time.value();
        previous_busbw = t.busbw_gb_s;
    }
    System faster = s;
    faster.switch_gb_s *= 2;
    CHECK(collective_time(faster, Collective::allgather, 1 << 26, all).time.value() <
          collective_time(s, Collective::allgather, 1 << 26, all).time.value());
    // Tree all-reduce: fewer steps, so faster for small messages on many ranks.
    const System& dgx2 = find_system("dgx2");
    const CollectivePlace sixteen{first_gpus(dgx2, 16)};
    CHECK(collective_time(dgx2, Collective::allreduce, 4096, sixteen, Algorithm::tree).time.value() <
          collective_time(dgx2, Collective::allreduce, 4096, sixteen, Algorithm::ring).time.value());
}

TEST_CASE("multi-node: the network bounds the ring; one TCP flow is ten times slower on p3dn") {
    const System& p3dn = find_system("aws-p3dn");
    const auto busbw = [&](int nodes, bool single) {
        return collective_time(p3dn, Collective::allreduce, 1 << 30, {first_gpus(p3dn, 8), nodes, single}).busbw_gb_s;
    };
    CHECK(busbw(2, false) == doctest::Approx(12.5 * 0.9).epsilon(0.02));
    CHECK(busbw(2, true) == doctest::Approx(1.25 * 0.9).epsilon(0.02));
    CHECK(busbw(1, false) > 5 * busbw(2, false));
    const System& ac922 = find_system("ibm-ac922");
    CHECK(collective_time(ac922, Collective::allreduce, 1 << 30, {first_gpus(ac922, 4), 4}).busbw_gb_s ==
          doctest::Approx(24 * 0.9).epsilon(0.02));
}

TEST_CASE("data-parallel: a communication-heavy model (AlexNet) scales worse than ResNet-50") {
    const System& s = find_system("exxact-ts4");
    const Device& d = find_device(s.device.view());
    const EfficiencyProfile prof = default_profile(d);
    const Model alexnet = models::build("alexnet");
    const Model resnet = models::build("resnet50");
    const Predictor pa(alexnet), pr(resnet);
    const PredictRequest req{.batch = 64};
    const auto eff = [&](const Predictor& p, int gpus) {
        return predict_parallel(p, d, prof, req, s, {.gpus = gpus}).scaling_efficiency;
    };
    CHECK(eff(pa, 1) == doctest::Approx(1.0));
    CHECK(eff(pa, 8) < eff(pr, 8));
    CHECK(eff(pa, 8) < eff(pa, 2));
    const ParallelPrediction one = predict_parallel(pr, d, prof, req, s, {.gpus = 1});
    CHECK(one.comm_time.value() == 0);
    const ParallelPrediction eight = predict_parallel(pr, d, prof, req, s, {.gpus = 8});
    CHECK(eight.throughput_samples_per_s > 4 * one.throughput_samples_per_s);
    CHECK(eight.throughput_samples_per_s <= 8 * one.throughput_samples_per_s * (1 + 1e-9));
    CHECK(eight.comm_fraction >= 0);
    // Overlap never hurts; nn.DataParallel (broadcast + reduce, no overlap) is slower than DDP.
    const ParallelPrediction serial = predict_parallel(pr, d, prof, req, s, {.gpus = 8, .overlap = false});
    CHECK(serial.step_time.value() >= eight.step_time.value());
    const ParallelPrediction dp = predict_parallel(pr, d, prof, req, s, {.gpus = 8, .mode = DataParallel::dp});
    CHECK(dp.step_time.value() > eight.step_time.value());
    // Faster links never lower throughput.
    System nvswitched = s;
    nvswitched.switch_gb_s = 300;
    CHECK(predict_parallel(pa, d, prof, req, nvswitched, {.gpus = 8}).throughput_samples_per_s >=
          predict_parallel(pa, d, prof, req, s, {.gpus = 8}).throughput_samples_per_s);
}

TEST_CASE("time to train and cost") {
    const System& s = find_system("dgx-a100");
    const Device& d = find_device(s.device.view());
    const Model m = models::build("resnet50");
    const Predictor p(m);
    const ParallelPrediction pp = predict_parallel(p, d, default_profile(d), {.batch = 256, .precision = Precision::amp_fp16}, s, {.gpus = 8});
    const TrainingRun run = time_to_train(pp, 256, 1'281'167, 90, 2.0);
    CHECK(run.steps == doctest::Approx(std::ceil(1'281'167.0 / 2048) * 90));
    CHECK(run.time.value() == doctest::Approx(run.steps * pp.step_time.value()));
    CHECK(run.cost == doctest::Approx(run.gpu_hours * 2.0));
    CHECK(run.gpu_hours == doctest::Approx(run.time.value() / 3600 * 8));
    CHECK_THROWS_AS(time_to_train(pp, 256, 0, 90), invalid_argument);
}

TEST_CASE("errors: unknown system, too many GPUs or nodes, zero bytes, uneven splits, inference") {
    CHECK_THROWS_WITH_AS((void)find_system("dgx3"), doctest::Contains("did you mean"), invalid_argument);
    const System& s = find_system("dgx1v");
    CHECK_THROWS_WITH_AS(first_gpus(s, 9), doctest::Contains("has 8 GPUs per node"), invalid_argument);
    CHECK_THROWS_AS(first_gpus(s, 0), invalid_argument);
    CHECK_THROWS_WITH_AS(collective_time(s, Collective::allreduce, 0, {first_gpus(s, 8)}),
                         doctest::Contains("positive number of bytes"), invalid_argument);
    CHECK_THROWS_AS(collective_time(find_system("exxact-ts4"), Collective::allreduce, 1024, {first_gpus(s, 8), 2}),
                    invalid_argument);
    CHECK_THROWS_AS(ring_bandwidth(s, {0, 8}), invalid_argument);
    CHECK_THROWS_AS(parse_collective("alltoall"), invalid_argument);
    CHECK_THROWS_AS(parse_data_parallel("fsdp"), invalid_argument);
    CHECK_THROWS_AS(placement(s, {.gpus = 9, .nodes = 0}), invalid_argument);  // 9 GPUs do not split over 2 nodes
    CHECK(placement(s, {.gpus = 12}).gpus.size() == 6);                      // 12 GPUs: 6 on each of 2 nodes
    CHECK_THROWS_AS(placement(find_system("hgx-h200-8"), {.gpus = 16}), invalid_argument);  // one node only
    const Model m = models::build("resnet18");
    const Predictor p(m);
    const Device& d = find_device("v100");
    CHECK_THROWS_AS(predict_parallel(p, d, default_profile(d), {.batch = 8, .mode = Mode::infer}, s, {.gpus = 2}),
                    invalid_argument);
    for (const System& sys : builtin_systems()) {
        CAPTURE(sys.id.view());
        CHECK(find_builtin_device(sys.device.view()) != nullptr);
        CHECK(ring_bandwidth(sys, first_gpus(sys, sys.gpus_per_node)).gb_s > 0);
    }
}

TEST_CASE("inference replicas: one process per GPU, nothing shared; host input copied over each GPU's own link") {
    // R740 with 4x P4 (SPEC.md §2, scenario 4): AlexNet INT8.
    const System& s = find_system("r740-p4");
    const Device& d = find_device("p4");
    const Model m = models::build("alexnet");
    const Predictor p(m);
    const EfficiencyProfile prof = default_profile(d);
    const PredictRequest req{.batch = 64, .precision = Precision::int8, .mode = Mode::infer};
    const ReplicaPrediction one = predict_replicas(p, d, prof, req, s, {.gpus = 1});
    const ReplicaPrediction four = predict_replicas(p, d, prof, req, s, {.gpus = 4});
    // Synthetic input: the step is the network's, the throughput and energy those of N single GPUs.
    CHECK(one.copy_time.value() == 0);
    CHECK(one.step_time.value() == doctest::Approx(one.gpu.step_time.value()));
    CHECK(four.throughput_samples_per_s == doctest::Approx(4 * one.throughput_samples_per_s));
    CHECK(four.power.value() == doctest::Approx(4 * 75.0));  // Tesla P4: 75 W TDP
    CHECK(four.samples_per_s_per_watt == doctest::Approx(one.samples_per_s_per_watt));
    CHECK(one.throughput_samples_per_s == doctest::Approx(64 / one.gpu.step_time.value()));
    // Host input: 64 images of 3x224x224 in FP32 in, 64x1000 FP32 logits out, over PCIe Gen3 x16 (15.75 GB/s raw)
    // at the profile's PCIe efficiency, plus the link's latency each way.
    const LinkParameters links{};
    const double in = 64.0 * 3 * 224 * 224 * 4, out = 64.0 * 1000 * 4;
    const double rate = 15.75e9 * links.eff(LinkKind::pcie);
    const ReplicaPrediction host = predict_replicas(p, d, prof, req, s, {.gpus = 4, .input = {.source = InputSource::host}});
    CHECK(host.input_bytes == in);
    CHECK(host.output_bytes == out);
    CHECK(host.copy_time.value() == doctest::Approx(in / rate + out / rate + 2 * links.latency(LinkKind::pcie)));
    CHECK(host.step_time.value() == doctest::Approx(host.copy_time.value() + host.gpu.step_time.value()));
    const ReplicaPrediction overlapped =
        predict_replicas(p, d, prof, req, s, {.gpus = 4, .input = {.source = InputSource::host}, .overlap_copies = true});
    CHECK(overlapped.step_time.value() ==
          doctest::Approx(std::max(host.copy_time.value(), host.gpu.step_time.value())));
    CHECK(overlapped.throughput_samples_per_s > host.throughput_samples_per_s);
    CHECK(host.throughput_samples_per_s < four.throughput_samples_per_s);
    // Token models copy ids and their mask in int64.
    const Model bert = models::build("bert-base", {.seq = 128});
    const Device& h = find_device("h200");
    const ReplicaPrediction b = predict_replicas(Predictor(bert), h, default_profile(h),
                                                 {.batch = 8, .precision = Precision::amp_bf16, .mode = Mode::infer},
                                                 find_system("hgx-h200-8"), {.gpus = 8, .input = {.source = InputSource::host}});
    CHECK(b.input_bytes == 8.0 * 128 * 8 * 2);
    // Errors: training, more GPUs than the system has, an unknown input source.
    CHECK_THROWS_WITH_AS(predict_replicas(p, d, prof, {.batch = 8}, s, {.gpus = 2}),
                         doctest::Contains("replicas are for inference"), invalid_argument);
    CHECK_THROWS_WITH_AS(predict_replicas(p, d, prof, req, s, {.gpus = 5}), doctest::Contains("has 4 GPUs per node"),
                         invalid_argument);
    CHECK_THROWS_WITH_AS((void)parse_enum<InputSource>("disk"), doctest::Contains("accepted: synthetic"), invalid_argument);
}

TEST_CASE("input pipelines: copies, decode workers on the host's cores, GPU decode, the step waits for the slower") {
    const Model m = models::build("resnet50");
    const DecodeRates rates{500, 300, "test"};
    // Synthetic: nothing; host: the batch in FP32 is copied; token models copy ids and mask in int64.
    CHECK(estimate_input(m, 64, Mode::train, {}, 0).batch_bytes == 0);
    const InputEstimate host = estimate_input(m, 64, Mode::train, {.source = InputSource::host}, 0);
    CHECK(host.batch_bytes == 64.0 * 3 * 224 * 224 * 4);
    CHECK(host.pipeline_s == 0);
    // cpu-decode: min(workers, the GPU's cores less the one that drives it) x the rate per core; training uses
    // the training transform, inference the validation one.
    const InputEstimate four = estimate_input(m, 256, Mode::train, {.source = InputSource::cpu_decode, .workers = 4, .rates = rates}, 0);
    CHECK(four.workers == 4);
    CHECK(four.samples_per_s == doctest::Approx(2000));
    CHECK(four.pipeline_s == doctest::Approx(256.0 / 2000));
    CHECK(estimate_input(m, 256, Mode::infer, {.source = InputSource::cpu_decode, .workers = 4, .rates = rates}, 0)
              .samples_per_s == doctest::Approx(1200));
    const InputEstimate share = estimate_input(m, 256, Mode::train, {.source = InputSource::cpu_decode, .rates = rates}, 16);
    CHECK(share.workers == 15);  // one of the GPU's 16 cores drives it
    CHECK(share.samples_per_s == doctest::Approx(15 * 500));
    const InputEstimate crowded =
        estimate_input(m, 256, Mode::train, {.source = InputSource::cpu_decode, .workers = 32, .rates = rates}, 16);
    CHECK(crowded.workers == 32);
    CHECK(crowded.samples_per_s == doctest::Approx(15 * 500));  // 32 workers share 15 cores
    // gpu-decode: the host threads' time per image (one thread on one GPU) up to the JPEG engines' capacity;
    // nothing decoded crosses the link.
    const InputEstimate gpu = estimate_input(
        m, 100, Mode::train, {.source = InputSource::gpu_decode, .gpu = {2e-4, 12000, "test"}}, 0);
    CHECK(gpu.workers == 1);
    CHECK(gpu.samples_per_s == doctest::Approx(5000));
    CHECK(gpu.batch_bytes == 0);
    const InputEstimate engines = estimate_input(
        m, 100, Mode::train, {.source = InputSource::gpu_decode, .gpu = {2e-4, 12000, "test"}}, 16);
    CHECK(engines.workers == 15);
    CHECK(engines.samples_per_s == doctest::Approx(12000));  // 15 threads could feed 75,000 a second
    // One GPU: the copy and the decode kernels add to the GPU's step; a slower pipeline sets the step.
    const Device& d = find_device("h200");
    Prediction p = Predictor(m)(d, default_profile(d), {.batch = 256, .precision = Precision::amp_bf16, .runtime = Runtime::eager});
    const double gpu_step = p.step_time.value();
    Prediction fed = p;
    const CopyLink link = pcie_link(d, 0.8, 2.5e-6);
    CHECK(link.bytes_s == doctest::Approx(63.0e9 * 0.8));  // H200: PCIe Gen5 x16
    with_input(fed, estimate_input(m, 256, Mode::train, {.source = InputSource::host}, 0), link);
    CHECK(fed.input_copy_s == doctest::Approx(256.0 * 3 * 224 * 224 * 4 / link.bytes_s + 2.5e-6));
    CHECK(fed.step_time.value() == doctest::Approx(gpu_step + fed.input_copy_s));
    Prediction starved = p;
    with_input(starved, estimate_input(m, 256, Mode::train, {.source = InputSource::cpu_decode, .workers = 2, .rates = rates}, 0), link);
    CHECK(starved.bound == StepBound::input);
    CHECK(starved.step_time.value() == doctest::Approx(256.0 / 1000));
    CHECK(starved.throughput_samples_per_s == doctest::Approx(1000));
    // On a system: the GPUs share the host's cores; one GPU alone has them all, so the pipeline limits scaling.
    const System& s = find_system("dgx-a100");
    const Device& a = find_device(s.device.view());
    const Predictor pr(m);
    ParallelRequest eight{.gpus = 8};
    eight.input = {.source = InputSource::cpu_decode, .rates = rates};
    const ParallelPrediction q = predict_parallel(pr, a, default_profile(a), {.batch = 256, .precision = Precision::amp_bf16}, s, eight);
    CHECK(q.input.workers == 128 / 8 - 1);
    CHECK(q.input_copy_time.value() > 0);
    CHECK(q.step_time.value() >= q.input.pipeline_s);
    // Errors: decoding a token model, gpu-decode without a measured figure, cpu-decode without workers or cores.
    const Model bert = models::build("bert-base");
    CHECK_THROWS_WITH_AS(estimate_input(bert, 8, Mode::train, {.source = InputSource::cpu_decode, .workers = 2, .rates = rates}, 0),
                         doctest::Contains("accepted for it: synthetic, host"), invalid_argument);
    CHECK_THROWS_WITH_AS(estimate_input(m, 8, Mode::train, {.source = InputSource::gpu_decode}, 0),
                         doctest::Contains("gpu-decode needs the GPU's measured decode figures"), invalid_argument);
    CHECK_THROWS_WITH_AS(estimate_input(m, 8, Mode::train, {.source = InputSource::cpu_decode, .rates = rates}, 0),
                         doctest::Contains("cpu-decode needs data-loader workers"), invalid_argument);
    CHECK(gpu_decode_of(find_device("v100")).cpu_s_per_image == 0);
    CHECK(gpu_decode_of(find_device("h100-sxm")).cpu_s_per_image > 0);
    CHECK(default_decode_rates().train_per_core > 0);
}

#include <roofplan/io/json.hpp>

TEST_CASE("data/systems.json holds exactly the built-in systems; user systems load with path-named errors") {
    const auto from_file =
        io::systems_from_json(io::parse(io::read_text(ROOFPLAN_DATA_DIR "/systems.json"), "systems.json"), "systems.json");
    REQUIRE(from_file.size() == builtin_systems().size());
    for (std::size_t i = 0; i < from_file.size(); ++i) {
        CAPTURE(builtin_systems()[i].id.view());
        CHECK(io::to_json(from_file[i]) == io::to_json(builtin_systems()[i]));
        CHECK(!from_file[i].source.empty());
    }
    // Host CPUs: cited for the systems whose CPUs their sources name; optional in a user's file; checked.
    CHECK(find_system("r740-p40").cpu.cores() == 36);
    CHECK(find_system("dgx-a100").cpu.cores() == 128);
    CHECK(find_system("p920-rtx8000").cpu.cores() == 0);  // the source does not say
    for (const System& sys : builtin_systems())
        CHECK((sys.cpu.cores() == 0 || !sys.cpu_source.empty()));
    {
        io::json cpu = io::to_json(find_system("r740-p4"));
        cpu["id"] = "cpu-box";
        CHECK(io::system_from_json(cpu).cpu.cores_per_socket == 18);
        cpu.erase("host_cpu");
        CHECK(io::system_from_json(cpu).cpu.cores() == 0);
        cpu["host_cpu"] = {{"name", "x"}, {"sockets", 2}, {"cores_per_socket", 0}, {"base_ghz", 2.0}, {"source", "s"}};
        CHECK_THROWS_WITH_AS(io::system_from_json(cpu), doctest::Contains("host CPUs"), invalid_argument);
        cpu["host_cpu"] = {{"name", "x"}, {"sockets", 2}, {"cores", 8}, {"base_ghz", 2.0}, {"source", "s"}};
        CHECK_THROWS_WITH_AS(io::system_from_json(cpu), doctest::Contains("cores"), invalid_argument);
    }
    io::json mine = io::to_json(find_system("p920-rtx8000"));
    mine["id"] = "my-box";
    mine["nvlinks"] = {{0, 4}, {4, 0}};
    const System s = io::system_from_json(mine);
    CHECK(ring_bandwidth(s, {0, 1}).gb_s == 100);
    io::json bad = mine;
    bad["nvlinks"] = {{0, 1}, {2, 0}};
    CHECK_THROWS_WITH_AS(io::system_from_json(bad), doctest::Contains("symmetric"), invalid_argument);
    bad = mine;
    bad["sockets"] = {0};
    CHECK_THROWS_WITH_AS(io::system_from_json(bad, "f.json: .systems[0]"), doctest::Contains("f.json: .systems[0].sockets"),
                         invalid_argument);
    bad = mine;
    bad["host"][0]["kind"] = "smoke-signals";
    CHECK_THROWS_WITH_AS(io::system_from_json(bad), doctest::Contains("unknown link kind"), invalid_argument);
    bad = mine;
    bad.erase("network");
    CHECK_THROWS_WITH_AS(io::system_from_json(bad), doctest::Contains("system.network: missing"), invalid_argument);
}

TEST_CASE("a system resolves its own GPU and default profile") {
    const Model m = models::build("resnet50");
    const System& dgx2 = find_system("dgx2");
    const ParallelPrediction p = predict(m, dgx2, {.batch = 256}, {.gpus = 16});
    const Device& v100 = find_device(dgx2.device.view());
    const ParallelPrediction q = predict_parallel(Predictor(m), v100, default_profile(v100), {.batch = 256}, dgx2,
                                                  {.gpus = 16});
    CHECK(p.step_time.value() == q.step_time.value());
    CHECK(p.gpus == 16);
    CHECK_THROWS_WITH_AS((void)predict(m, find_system("p920-rtx8000"), {.batch = 32}, {.gpus = 4}),
                         doctest::Contains("has 2 GPUs per node"), Error);
}

TEST_CASE("a GPU-count sweep reports the counts a system cannot run as errors, not exceptions") {
    const Model m = models::build("alexnet");
    const System& s = find_system("dgx2");
    const Device& d = find_device(s.device.view());
    const std::vector<int> counts{1, 16, 1024};
    const auto points = scaling_sweep(Predictor(m), d, default_profile(d), {.batch = 256}, s, counts);
    REQUIRE(points.size() == 3);
    CHECK(!points[0].error);
    CHECK(points[0].efficiency == doctest::Approx(1.0));
    CHECK(points[1].throughput > points[0].throughput);
    REQUIRE(points[2].error);
    CHECK(points[2].error->field() == "gpus");
}

TEST_CASE("nn.DataParallel as it runs: replicas remade each step, threads at the interpreter lock, GPU 0's extra work") {
    // What replicate copies per replica, counted as torchvision builds the models (modules(), parameters(),
    // buffers(): resnet18 68 modules, 62 parameters, 60 buffers; resnet50 151, 161, 159).
    const Model r18 = models::build("resnet18"), r50 = models::build("resnet50");
    CHECK(replicated_state(r18).modules == 68);
    CHECK(replicated_state(r18).tensors == 62 + 60);
    CHECK(replicated_state(r50).modules == 151);
    CHECK(replicated_state(r50).tensors == 161 + 159);
    // Their buffers' bytes, broadcast with the parameters (sum of numel x element_size over buffers(): batch norm's
    // running mean and variance, FP32, over 4,800 and 26,560 channels, and one int64 count per batch norm, 20 and 53).
    CHECK(replicated_state(r18).buffer_bytes == 8.0 * 4800 + 8.0 * 20);
    CHECK(replicated_state(r50).buffer_bytes == 8.0 * 26560 + 8.0 * 53);
    // Hugging Face's BertModel (transformers 4.36): 228 modules, 199 parameters, 2 buffers (the position and token
    // type ids, which replicated_state does not count: 1% of the tensors).
    const Model bert = models::build("bert-base");
    CHECK(replicated_state(bert).modules == 228);
    CHECK(replicated_state(bert).tensors == 199);
    // GPT2LMHeadModel: 164 modules, 148 parameters (the LM head tied to the token embedding), 24 buffers (the
    // attention masks, not counted).
    const Model gpt2 = models::build("gpt2");
    CHECK(replicated_state(gpt2).modules == 164);
    CHECK(replicated_state(gpt2).tensors == 148);

    const System& s = find_system("dgx2");
    const Device& d = find_device(s.device.view());
    const EfficiencyProfile prof = default_profile(d);
    const Predictor p(r50);
    const PredictRequest eager{.batch = 32, .runtime = Runtime::eager};
    const Prediction alone = p(d, prof, eager);
    // One GPU: DataParallel runs the module as it is (no replicas, no threads).
    const ParallelPrediction one = predict_parallel(p, d, prof, eager, s, {.gpus = 1, .mode = DataParallel::dp});
    CHECK(one.step_time.value() == doctest::Approx(alone.step_time.value()));
    CHECK(one.scaling_efficiency == doctest::Approx(1.0));
    // Eight GPUs: the host's replicate and threads as the profile's costs say, the forward's dispatch slowed.
    const ParallelPrediction dp8 = predict_parallel(p, d, prof, eager, s, {.gpus = 8, .mode = DataParallel::dp});
    const HostCosts& h = prof.host;
    CHECK(dp8.dp.replicate_host_s == doctest::Approx(h.dp_replicate_call_s + 151 * h.dp_replicate_module_once_s +
                                                     8 * (151 * h.dp_replicate_module_s + 320 * h.dp_replicate_tensor_s)));
    CHECK(dp8.dp.threads_host_s == doctest::Approx(8 * h.dp_thread_s));
    CHECK(dp8.dp.forward_host_scale == doctest::Approx(std::max(1.0, 8 * h.dp_lock_share)));
    CHECK(dp8.dp.broadcast_s > 0);
    CHECK(dp8.dp.output_grad_s > 0);  // the outputs' gradients go back to the replicas
    // The step's parts add up: copies and collectives (all exposed), replicate's Python beyond them, the GPUs' step.
    CHECK(dp8.exposed_comm.value() == doctest::Approx(dp8.comm_time.value()));
    CHECK(dp8.step_time.value() == doctest::Approx(dp8.compute_time.value() + dp8.exposed_comm.value() + dp8.dp.host_exposed_s));
    CHECK(dp8.compute_time.value() == doctest::Approx(dp8.gpu.step_time.value() + dp8.dp.loss_s));
    CHECK(dp8.gpu.host_s > alone.host_s);  // the per-GPU prediction is DataParallel's, its forward contended
    CHECK(dp8.dp.reduce_s > 0);
    CHECK(dp8.dp.scatter_s > 0);  // the batch made on GPU 0 goes to the other seven
    CHECK(dp8.step_time.value() > alone.step_time.value() + dp8.dp.reduce_s);
    const ParallelPrediction ddp8 = predict_parallel(p, d, prof, eager, s, {.gpus = 8});
    CHECK(dp8.throughput_samples_per_s < ddp8.throughput_samples_per_s);
    // Efficiency falls with every doubling of the GPUs; never above one.
    double last = 1.0;
    for (int g : {2, 4, 8, 16}) {
        const double e = predict_parallel(p, d, prof, eager, s, {.gpus = g, .mode = DataParallel::dp}).scaling_efficiency;
        CHECK(e < last);
        CHECK(e > 0);
        last = e;
    }
    // No lock contention with a lock share of zero; the ideal runtime has no host at all.
    EfficiencyProfile free_lock = prof;
    free_lock.host.dp_lock_share = 0;
    CHECK(predict_parallel(p, d, free_lock, eager, s, {.gpus = 8, .mode = DataParallel::dp}).dp.forward_host_scale == 1);
    const ParallelPrediction ideal = predict_parallel(p, d, prof, {.batch = 32}, s, {.gpus = 8, .mode = DataParallel::dp});
    CHECK(ideal.dp.replicate_host_s == 0);
    CHECK(ideal.dp.forward_host_scale == 1);
    // One process: a second node is an error that says so.
    const System& p3dn = find_system("aws-p3dn");
    CHECK_THROWS_WITH_AS(predict_parallel(p, find_device(p3dn.device.view()), prof, eager, p3dn,
                                          {.gpus = 16, .mode = DataParallel::dp}),
                         doctest::Contains("nn.DataParallel drives the GPUs of one node"), Error);
    // A compiled module inside DataParallel runs at eager speed on several GPUs: refused, naming the runtime; one GPU
    // (the module run as it is) predicts as the compiled runtime alone.
    const PredictRequest compiled{.batch = 32, .runtime = Runtime::compiled};
    try {
        (void)predict_parallel(p, d, prof, compiled, s, {.gpus = 2, .mode = DataParallel::dp});
        FAIL("nn.DataParallel over two GPUs with the compiled runtime was predicted");
    } catch (const Error& e) {
        CHECK(e.field() == "runtime");
        CHECK(std::string(e.what()).find("runs its replicas eagerly") != std::string::npos);
    }
    CHECK(predict_parallel(p, d, prof, compiled, s, {.gpus = 1, .mode = DataParallel::dp}).step_time.value() ==
          doctest::Approx(p(d, prof, compiled).step_time.value()));
}

TEST_CASE("a forward's host dispatch scaled: the timeline's host time grows by the layers' forward kernels' own costs") {
    // A V100 (no measured tables: every kernel one launch) in FP32 (no synchronisation inside the step).
    const Model m = models::build("resnet18");
    const Device& d = find_device("v100-sxm2-32gb");
    const EfficiencyProfile prof = default_profile(d);
    const LoweredStep step = lower(m, 4, {Precision::fp32, Mode::train, Optimizer::sgd, true}, Runtime::eager);
    const Roofline roofline(d, prof, math_class(d, Precision::fp32, Mode::train));
    double forward = 0;
    for (const Kernel& k : step.kernels)
        if (k.part == StepPart::forward && !k.step_level) forward += host_cost(k, prof.host);
    const Timeline base = simulate(step.kernels, roofline, prof.host);
    const Timeline slow = simulate(step.kernels, roofline, prof.host, false, 2.5);
    CHECK(slow.host_s - base.host_s == doctest::Approx(1.5 * forward).epsilon(1e-9));
    CHECK(slow.step_s >= base.step_s);
    // Through the predictor: the same, and a scale below one is refused.
    const Predictor p(m);
    PredictRequest r{.batch = 4, .precision = Precision::fp32, .runtime = Runtime::eager};
    const double host1 = p(d, prof, r).host_s;
    r.forward_host_scale = 2.5;
    CHECK(p(d, prof, r).host_s - host1 == doctest::Approx(1.5 * forward).epsilon(1e-9));
    r.forward_host_scale = 0.5;
    CHECK_THROWS_WITH_AS((void)p(d, prof, r), doctest::Contains("forward's host scale must be a number in [1, 1000]"), Error);
}

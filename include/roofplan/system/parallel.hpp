// roofplan/system/parallel.hpp — data-parallel training on a system: DDP (bucketed all-reduce overlapped with the
// backward pass) and nn.DataParallel (broadcast + reduce through one GPU), scaling efficiency, time-to-train, cost.
#pragma once

#include <roofplan/device/catalog.hpp>
#include <roofplan/engine/predict.hpp>
#include <roofplan/system/collective.hpp>
#include <roofplan/system/input.hpp>
#include <roofplan/system/systems.hpp>

#include <algorithm>
#include <cmath>
#include <string_view>

namespace roofplan {

enum class DataParallel { ddp, dp };

template <>
struct EnumNames<DataParallel> {
    static constexpr std::string_view field = "data_parallel";
    static constexpr std::string_view what = "data-parallel mode";
    static constexpr std::array<std::string_view, 2> names{"ddp", "dp"};
    static constexpr std::array<std::string_view, 2> notes{"DistributedDataParallel", "nn.DataParallel"};
    static constexpr std::array<EnumAlias<DataParallel>, 1> aliases{{{"dataparallel", DataParallel::dp}}};
};
inline DataParallel parse_data_parallel(std::string_view name) { return parse_enum<DataParallel>(name); }

/// How the GPUs are used.
struct ParallelRequest {
    int gpus = 1;             ///< in total
    int nodes = 0;            ///< 0: as few as the GPUs need
    DataParallel mode = DataParallel::ddp;
    double bucket_bytes = 25.0 * 1024 * 1024;  ///< DDP's bucket_cap_mb (25 MiB by default)
    bool overlap = true;      ///< DDP overlaps bucket all-reduces with the backward pass
    bool single_flow = false; ///< multi-node traffic on one TCP flow per node
    Algorithm algorithm = Algorithm::ring;
    LinkParameters links{};
    InputRequest input{};     ///< where each GPU's batches come from (system/input.hpp)
};

/// nn.DataParallel's own costs in a step (ParallelPrediction::dp; all zero under DDP).
struct DataParallelCosts {
    double scatter_s = 0;          ///< the batch split from GPU 0 to the other GPUs
    double broadcast_s = 0;        ///< the parameters broadcast from GPU 0 to the replicas (replicate)
    double replicate_host_s = 0;   ///< replicate's Python: every module copied per replica, its tensors set on each
    double threads_host_s = 0;     ///< parallel_apply's threads, one per replica, started and joined
    double forward_host_scale = 1; ///< each replica's forward dispatch, slowed by the others' turns at the lock
    double gather_s = 0;           ///< the outputs copied to GPU 0
    double output_grad_s = 0;      ///< their gradients copied back to the replicas (Gather's backward)
    double loss_s = 0;             ///< the loss over the whole batch on GPU 0, beyond one GPU's share
    double reduce_s = 0;           ///< the gradients reduced to GPU 0 after the backward (ReduceAddCoalesced)
    double host_exposed_s = 0;     ///< replicate's Python and the threads beyond the copies beside them
                                   ///< (part of the step, neither compute nor communication)
    double modules = 0;            ///< torch modules replicated per replica (replicated_state)
    double tensors = 0;            ///< parameters and buffers set per replica
};

struct ParallelPrediction {
    Prediction gpu;           ///< one GPU's compute (per-GPU batch)
    int gpus = 1;
    int nodes = 1;
    units::seconds step_time{};
    units::seconds compute_time{};
    units::seconds comm_time{};     ///< all communication of a step, as if alone
    units::seconds exposed_comm{};  ///< the part not hidden behind computation
    double comm_fraction = 0;       ///< exposed communication / step time
    double throughput_samples_per_s = 0;  ///< all GPUs together
    double scaling_efficiency = 0;        ///< throughput / (gpus × one GPU's throughput alone)
    double alone_samples_per_s = 0;       ///< one GPU alone, its input included (the pipeline on every core)
    bool comm_hidden = true;
    InputEstimate input{};                ///< each GPU's input pipeline
    units::seconds input_copy_time{};     ///< the batch's copy to each GPU (GPU time before the forward)
    bool input_bound = false;             ///< the pipeline, not the GPUs, sets the step
    DataParallelCosts dp{};               ///< nn.DataParallel's own costs (zero under DDP)
};

/// Where `gpus` GPUs sit on a system: the first GPUs of each node.
inline CollectivePlace placement(const System& s, const ParallelRequest& r) {
    if (r.gpus < 1) detail::fail("the number of GPUs must be >= 1, got ", r.gpus);
    int nodes = r.nodes;
    if (nodes == 0) nodes = r.gpus / s.gpus_per_node + (r.gpus % s.gpus_per_node != 0);  // (no gpus + per - 1: overflows)
    if (nodes < 1 || nodes > s.max_nodes)
        detail::fail_about("gpus", "system '", s.id.view(), "' has ", s.gpus_per_node, " GPUs per node and allows 1 to ",
                           s.max_nodes, " node(s); ", r.gpus, " GPUs need ", nodes);
    if (r.gpus % nodes != 0)
        detail::fail(r.gpus, " GPUs do not split evenly over ", nodes, " nodes");
    const int per_node = r.gpus / nodes;
    if (per_node > s.gpus_per_node)
        detail::fail("system '", s.id.view(), "' has ", s.gpus_per_node, " GPUs per node; ", r.gpus, " GPUs on ",
                     nodes, " node(s) need ", per_node, " (use ", field_ref("nodes"), " for more)");
    return {first_gpus(s, per_node), nodes, r.single_flow};
}

/// The input of each GPU of a data-parallel step (system/input.hpp): the copy of its batch over its host link
/// before the forward, the pipeline on its share of the host's cores beside the step; and one GPU's step alone
/// (`gpu_step_s`) with the same input, its pipeline on every core of the node.
struct ParallelInput {
    InputEstimate input;
    double copy_s = 0;
    double alone_s = 0;
};
inline ParallelInput parallel_input(const Predictor& predictor, const PredictRequest& request, const System& s,
                                    const ParallelRequest& pr, double gpu_step_s) {
    ParallelInput out;
    const double cores = s.cpu.cores() > 0 ? static_cast<double>(s.cpu.cores()) / s.gpus_per_node : 0.0;
    out.input = estimate_input(predictor.model(), request.batch, request.mode, pr.input, cores);
    if (out.input.batch_bytes > 0) {
        const HostLink& h = s.host.front();
        out.copy_s = out.input.batch_bytes / (h.gb_s * 1e9 * pr.links.eff(h.kind)) + pr.links.latency(h.kind);
    }
    out.alone_s = gpu_step_s;
    if (pr.input.source != InputSource::synthetic) {
        const InputEstimate one = estimate_input(predictor.model(), request.batch, request.mode, pr.input,
                                                 static_cast<double>(s.cpu.cores()));
        out.alone_s = std::max(gpu_step_s + out.copy_s, one.pipeline_s);
    }
    return out;
}

/// What nn.DataParallel's replicate copies for each replica: the model's torch modules (its layers as modules,
/// the containers their dotted names imply, the root), tensors (parameters, and batch norm's three buffers) and the
/// buffers' bytes (batch norm's FP32 running mean and variance and its int64 batch count), broadcast with the
/// parameters.  A
/// node that repeats a module (`relu:2`) is one module; element-wise functions (add, multiply, concat, flatten,
/// matmul) are none; an attention node stands for the modules of Hugging Face's attention.  Exact for the zoo's
/// torchvision CNNs, BERT and GPT-2 (unit tests, against torch's counts); other buffers (BERT's position ids,
/// GPT-2's attention masks) are not counted.
struct ReplicatedState {
    double modules = 0;
    double tensors = 0;
    double buffer_bytes = 0;
};
inline ReplicatedState replicated_state(const Model& model) {
    ReplicatedState out;
    runtime_detail::ParameterTensors p;
    std::vector<std::string_view> names, prefixes;
    for (const Node& n : model.nodes()) {
        runtime_detail::parameter_tensors(n.layer, p);
        if (const auto* bn = std::get_if<BatchNorm2d>(&n.layer)) {
            out.tensors += 3;
            out.buffer_bytes += 8.0 * static_cast<double>(bn->config().channels) + 8.0;
        }
        std::string_view name = n.name.view();
        name = name.substr(0, name.find(':'));
        for (std::size_t dot = name.find('.'); dot != std::string_view::npos; dot = name.find('.', dot + 1))
            prefixes.push_back(name.substr(0, dot));
        const bool functional = std::holds_alternative<Add>(n.layer) || std::holds_alternative<Multiply>(n.layer) ||
                                std::holds_alternative<Concat>(n.layer) || std::holds_alternative<Flatten>(n.layer) ||
                                std::holds_alternative<MatMul>(n.layer);
        if (functional) continue;
        if (const auto* a = std::get_if<MultiHeadAttention>(&n.layer)) {
            // The output projection, the attention probabilities' dropout, and the projections: one fused (GPT-2's
            // c_attn), or three inside a self-attention module of their own (Hugging Face's BertSelfAttention).
            const auto& c = a->config();
            out.modules += 1 + (c.dropout > 0 ? 1 : 0) + (c.fused_qkv ? 1 : 3 + 1);
        }
        names.push_back(name);
    }
    const auto distinct = [](std::vector<std::string_view>& v) {
        std::sort(v.begin(), v.end());
        return static_cast<double>(std::unique(v.begin(), v.end()) - v.begin());
    };
    // A container prefix that is also a layer's own name (a module with children) counts once.
    std::vector<std::string_view> all = names;
    all.insert(all.end(), prefixes.begin(), prefixes.end());
    out.modules += distinct(all) + 1;  // + the model itself
    out.tensors += p.tensors;
    return out;
}

namespace parallel_detail {

/// nn.DataParallel's step as PyTorch runs it (torch/nn/parallel/data_parallel.py): one process drives every GPU.
///  1. scatter: a batch on GPU 0 (made there) is split and copied to the others; a batch in host memory is copied
///     chunk by chunk from the host to each GPU (the input's copy, ParallelPrediction::input_copy_time);
///  2. replicate: the parameters broadcast from GPU 0, then a Python copy of every module per replica with its
///     parameters and buffers set (host), before the replicas' forwards can be dispatched;
///  3. parallel_apply: one thread per replica runs its forward; the threads take turns at the interpreter lock, so
///     each replica's dispatch is HostCosts::dp_forward_scale times as slow;
///  4. gather: the outputs copied to GPU 0, the loss over the whole batch there;
///  5. the backward: the output gradients scattered back (Gather's backward), the autograd engine's thread per
///     device runs each replica's backward (C++, no lock, in parallel); the gradients are reduced to GPU 0 once
///     all are ready (Broadcast's backward, one node);
///  6. the optimizer on GPU 0.
/// The step is max(copies before the forwards, replicate's Python and the threads) + one GPU's step with the
/// contended forward + gather, the rest of the loss, the output gradients' scatter and the gradients' reduce.
/// Returns the step time; fills `dp`, `contended` (one GPU's step as DataParallel dispatches it) and the
/// communication figures (all of it exposed: nothing overlaps it).
inline double dp_step(const Predictor& predictor, const Device& device, const EfficiencyProfile& profile,
                      const PredictRequest& request, const System& s, const ParallelRequest& pr,
                      const CollectivePlace& place, Prediction& contended, DataParallelCosts& dp, double& comm) {
    const int n = pr.gpus;
    if (place.nodes > 1)
        detail::fail_about("data_parallel", "nn.DataParallel drives the GPUs of one node (one process); ", n,
                           " GPUs need ", place.nodes, " nodes (use ddp across nodes)");
    if (contended.runtime == Runtime::compiled && n > 1)
        detail::fail_about("runtime", "nn.DataParallel runs its replicas eagerly: a torch.compile'd module inside it runs "
                                      "at eager speed on more than one GPU (pytorch/pytorch#94636); use the eager "
                                      "runtime, or ddp with the compiled one");
    const bool host = contended.runtime != Runtime::ideal;  // the ideal runtime has no host
    const HostCosts& h = profile.host;
    const ReplicatedState state = replicated_state(predictor.model());
    dp.modules = state.modules;
    dp.tensors = state.tensors;
    if (host && n > 1) {
        dp.replicate_host_s = h.dp_replicate_s(state.modules, state.tensors, n);
        dp.threads_host_s = n * h.dp_thread_s;
        dp.forward_host_scale = h.dp_forward_scale(n);
        if (dp.forward_host_scale > 1) {
            PredictRequest slowed = request;
            slowed.forward_host_scale = dp.forward_host_scale;
            slowed.per_layer = true;
            contended = predictor(device, profile, slowed);
        }
    }
    const auto collective = [&](Collective op, double bytes) {
        if (n == 1 || bytes <= 0) return 0.0;
        return collective_time(s, op, static_cast<std::int64_t>(std::ceil(bytes)), place, pr.algorithm, pr.links)
            .time.value();
    };
    // The root's link carries the other replicas' shares: a broadcast (a reduce) of that many bytes.
    const Model& model = predictor.model();
    const double others = n - 1;
    // The outputs in the precision's activation type (autocast's half type under amp).
    const double out_bytes = output_batch_bytes(model, request.batch, static_cast<double>(element_bytes(request.precision)));
    if (pr.input.source == InputSource::synthetic)
        dp.scatter_s = collective(Collective::broadcast, others * input_batch_bytes(model, request.batch));
    const double weight_bytes = 4.0 * static_cast<double>(model.params());
    dp.broadcast_s = collective(Collective::broadcast, weight_bytes + state.buffer_bytes);
    dp.gather_s = collective(Collective::reduce, others * out_bytes);
    dp.output_grad_s = collective(Collective::broadcast, others * out_bytes);
    dp.reduce_s = collective(Collective::reduce, weight_bytes);
    double loss = 0;
    for (const auto& [type, t] : contended.by_type)
        if (type == "loss") loss = t.value();
    dp.loss_s = others * loss;
    // Before the forwards: the copies on the GPUs' links beside replicate's Python on the host.
    const double gpu_pre = dp.scatter_s + dp.broadcast_s, host_pre = dp.replicate_host_s + dp.threads_host_s;
    dp.host_exposed_s = std::max(0.0, host_pre - gpu_pre);
    comm = gpu_pre + dp.gather_s + dp.output_grad_s + dp.reduce_s;
    return comm + dp.host_exposed_s + contended.step_time.value() + dp.loss_s;
}

}  // namespace parallel_detail

/// Predicts data-parallel training: every GPU runs the per-GPU batch of `request`; gradients (FP32, 4 bytes per
/// parameter, as DDP reduces the FP32 master gradients under AMP too) are all-reduced.
///
/// DDP: gradients become ready layer by layer in the backward pass (last layer first) and are packed into
/// buckets; a bucket's all-reduce starts when it is full and the previous one is done; the step ends when the
/// backward pass and the last all-reduce have both finished, then the optimizer runs.  Without overlap, the
/// all-reduces follow the backward pass.  nn.DataParallel: one process and one thread per GPU, the replicas
/// remade every step, the loss, the gradients' reduction and the optimizer on GPU 0 (parallel_detail::dp_step).
inline ParallelPrediction predict_parallel(const Predictor& predictor, const Device& device,
                                           const EfficiencyProfile& profile, PredictRequest request, const System& s,
                                           const ParallelRequest& pr) {
    if (request.mode != Mode::train) detail::fail_about("mode", "data-parallel prediction is for training (", field_ref("mode"), " train)");
    const CollectivePlace place = placement(s, pr);
    request.per_layer = true;
    ParallelPrediction out;
    out.gpu = predictor(device, profile, request);
    out.gpus = pr.gpus;
    out.nodes = place.nodes;
    const Prediction& g = out.gpu;
    double fwd = g.phase_time[Phase::forward].value();
    const double bwd = g.phase_time[Phase::backward_data].value() + g.phase_time[Phase::backward_weight].value();
    // The kernel-level runtimes' GPU idle time waiting for the host is part of each GPU's step (the gaps between
    // back-to-back kernels are already inside the phases' kernel times).
    const double opt = g.phase_time[Phase::optimizer].value() +
                       (g.runtime == Runtime::ideal ? 0.0
                                                    : std::max(0.0, g.step_time.value() - g.gpu_busy_s - g.gpu_gap_s));
    const auto& nodes = predictor.model().nodes();
    const auto allreduce = [&](double bytes) {
        if (pr.gpus == 1 || bytes <= 0) return 0.0;
        return collective_time(s, Collective::allreduce, static_cast<std::int64_t>(std::ceil(bytes)), place,
                               pr.algorithm, pr.links)
            .time.value();
    };
    // One GPU alone (before nn.DataParallel's step replaces out.gpu with its contended one).
    double step = 0, comm = 0, exposed = 0;
    const double alone_s = g.throughput_samples_per_s, alone_step_s = g.step_time.value();
    if (pr.mode == DataParallel::ddp) {
        // Walk the backward pass from the last layer, filling buckets.
        double t = 0, filled = 0, comm_end = 0;
        for (auto it = g.layers.rbegin(); it != g.layers.rend(); ++it) {
            t += it->pass[Pass::backward_data].value() + it->pass[Pass::backward_weight].value();
            filled += 4.0 * static_cast<double>(roofplan::params(nodes[it->node].layer));
            if (filled >= pr.bucket_bytes) {
                const double c = allreduce(filled);
                comm += c;
                comm_end = (pr.overlap ? std::max(t, comm_end) : std::max(bwd, comm_end)) + c;
                filled = 0;
            }
        }
        if (filled > 0) {
            const double c = allreduce(filled);
            comm += c;
            comm_end = std::max(bwd, comm_end) + c;
        }
        step = fwd + std::max(bwd, comm_end) + opt;
    } else {
        Prediction contended = g;
        step = parallel_detail::dp_step(predictor, device, profile, request, s, pr, place, contended, out.dp, comm);
        exposed = comm;
        out.gpu = std::move(contended);  // one GPU as DataParallel dispatches it (its forward contended)
    }
    const ParallelInput in = parallel_input(predictor, request, s, pr, alone_step_s);
    out.input = in.input;
    // A batch in host memory: each GPU's share over its own link (DataParallel's Scatter of a host tensor too).
    out.input_copy_time = units::in_seconds(in.copy_s);
    step += out.input_copy_time.value();
    out.comm_time = units::in_seconds(comm);
    if (pr.mode == DataParallel::ddp) {
        fwd += out.input_copy_time.value();
        out.compute_time = units::in_seconds(fwd + bwd + opt);
        out.exposed_comm = units::in_seconds(step - (fwd + bwd + opt));
    } else {  // the GPUs' step: what the copies, collectives and replicate's Python leave
        out.compute_time = units::in_seconds(step - exposed - out.dp.host_exposed_s);
        out.exposed_comm = units::in_seconds(exposed);
    }
    if (out.input.pipeline_s > step) {
        step = out.input.pipeline_s;
        out.input_bound = true;
    }
    out.step_time = units::in_seconds(step);
    out.comm_fraction = out.exposed_comm.value() / step;
    out.comm_hidden = out.exposed_comm.value() <= 1e-3 * step;
    out.throughput_samples_per_s = static_cast<double>(request.batch) * pr.gpus / step;
    out.alone_samples_per_s = pr.input.source == InputSource::synthetic ? alone_s
                                                                        : static_cast<double>(request.batch) / in.alone_s;
    out.scaling_efficiency = out.throughput_samples_per_s / (pr.gpus * out.alone_samples_per_s);
    return out;
}

/// Data-parallel training of `model` on a system: its GPU (looked up in `catalog`) with that GPU's default
/// efficiency profile; `parallel` says how many GPUs and how they exchange gradients.
///
///     const auto p = predict(models::build("resnet50"), find_system("dgx2"), {.batch = 256}, {.gpus = 16});
inline ParallelPrediction predict(const Model& model, const System& system, const PredictRequest& request,
                                  const ParallelRequest& parallel = {}, const DeviceCatalog& catalog = {}) {
    const Device& device = catalog.find(system.device.view());
    return predict_parallel(Predictor(model), device, default_profile(device), request, system, parallel);
}

/// Inference on several GPUs of a system as inference servers and the source benchmarks run it (SPEC.md §2,
/// scenario 4): one independent replica per GPU, one process each, no communication between them.  With the input
/// in host memory each step of a replica copies its batch to the GPU over the GPU's host link, runs the network,
/// and copies the outputs back.
struct ReplicaRequest {
    int gpus = 1;   ///< replicas, one per GPU
    int nodes = 0;  ///< 0: as few as the GPUs need
    InputRequest input{};  ///< where each replica's batches come from (system/input.hpp)
    /// Copied input: the copies overlap the previous batch's network (pinned buffers and a second stream, as
    /// TensorRT's and Triton's pipelines can run); false: each batch is copied in, run and copied out in turn.
    bool overlap_copies = false;
    LinkParameters links{};
};

struct ReplicaPrediction {
    Prediction gpu;  ///< one replica's network at the per-GPU batch
    int gpus = 1;
    int nodes = 1;
    InputEstimate input{};    ///< the input pipeline of each replica (system/input.hpp)
    double input_bytes = 0;   ///< a step's input batch as copied: images in FP32, token ids (and mask) in int64
    double output_bytes = 0;  ///< a step's outputs: the last layer's, in FP32
    units::seconds copy_time{};   ///< both copies of a step on the GPU's host link (0: nothing copied)
    units::seconds step_time{};   ///< one replica's step, copies included
    double throughput_samples_per_s = 0;  ///< all replicas together
    double samples_per_s_per_watt = 0;    ///< over the GPUs' power (TDP, or the profile's measured power)
    units::watts power{};                 ///< all GPUs
    bool copy_bound = false;              ///< the copies take longer than the network
    [[nodiscard]] bool input_bound() const { return input.pipeline_s > 0 && input.pipeline_s >= step_time.value(); }
};

/// Predicts `rr.gpus` independent inference replicas of `request` on system `s`.  Each GPU has its own host link
/// (the built-in systems give one per GPU: PCIe x16 or NVLink to the CPU), so the replicas share nothing a step
/// waits on: each process dispatches on a core of its own, and the throughput is the replicas' sum.  A copy takes
/// its bytes at the link's rate times the profile's link efficiency (LinkParameters; pinned host buffers) plus the
/// link's latency.
inline ReplicaPrediction predict_replicas(const Predictor& predictor, const Device& device,
                                          const EfficiencyProfile& profile, const PredictRequest& request,
                                          const System& s, const ReplicaRequest& rr) {
    if (request.mode != Mode::infer)
        detail::fail_about("mode", "replicas are for inference (", field_ref("mode"),
                           " infer); data-parallel training is predict_parallel");
    ParallelRequest place_request;
    place_request.gpus = rr.gpus;
    place_request.nodes = rr.nodes;
    const CollectivePlace place = placement(s, place_request);
    ReplicaPrediction out;
    out.gpu = predictor(device, profile, request);
    out.gpus = rr.gpus;
    out.nodes = place.nodes;
    const Model& model = predictor.model();
    const double batch = static_cast<double>(request.batch);
    const double cores = s.cpu.cores() > 0 ? static_cast<double>(s.cpu.cores()) / s.gpus_per_node : 0.0;
    const InputEstimate in = estimate_input(model, request.batch, request.mode, rr.input, cores);
    out.input = in;
    out.input_bytes = in.batch_bytes;
    out.output_bytes = in.batch_bytes > 0 ? output_batch_bytes(model, request.batch, 4) : 0.0;
    // Each replica on its own GPU's link, on every node; the step reported is the slowest replica's.
    double throughput = 0, step_max = 0;
    bool copy_bound = false;
    for (int node = 0; node < place.nodes; ++node)
        for (int g : place.gpus) {
            const HostLink& h = s.host[static_cast<std::size_t>(g)];
            const double rate = h.gb_s * 1e9 * rr.links.eff(h.kind);
            const double copy = out.input_bytes > 0
                                    ? out.input_bytes / rate + out.output_bytes / rate + 2 * rr.links.latency(h.kind)
                                    : 0.0;
            const double network = out.gpu.step_time.value();
            const double step = std::max(rr.overlap_copies ? std::max(copy, network) : copy + network, in.pipeline_s);
            copy_bound = copy_bound || copy > network;
            throughput += batch / step;
            if (step > step_max) step_max = step, out.copy_time = units::in_seconds(copy);
        }
    out.step_time = units::in_seconds(step_max);
    out.throughput_samples_per_s = throughput;
    out.power = units::in_watts(out.gpu.power.value() * rr.gpus);
    out.samples_per_s_per_watt = throughput / out.power.value();
    out.copy_bound = copy_bound;
    return out;
}

/// Wall time and cost of training: `samples` per epoch, `epochs`, at a price per GPU-hour.
struct TrainingRun {
    double steps = 0;
    units::seconds time{};
    double gpu_hours = 0;
    double cost = 0;
};

inline TrainingRun time_to_train(const ParallelPrediction& p, std::int64_t batch_per_gpu, double samples,
                                 double epochs, double price_per_gpu_hour = 0) {
    if (!(samples > 0) || !(epochs > 0)) detail::fail("dataset size and epochs must be positive");
    if (!(price_per_gpu_hour >= 0)) detail::fail("the price per GPU-hour must be >= 0");
    TrainingRun r;
    const double global_batch = static_cast<double>(batch_per_gpu) * p.gpus;
    r.steps = std::ceil(samples / global_batch) * epochs;
    r.time = units::in_seconds(r.steps * p.step_time.value());
    r.gpu_hours = r.time.value() / 3600.0 * p.gpus;
    r.cost = r.gpu_hours * price_per_gpu_hour;
    return r;
}

}  // namespace roofplan

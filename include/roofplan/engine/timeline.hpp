// roofplan/engine/timeline.hpp — a step simulated, not summed: the host issues the kernels in order, paying its
// dispatch cost per operation and per launch; the GPU runs kernel k at max(GPU free, host issued k) for the
// time the roofline module gives it; the step ends when the last kernel does, plus the synchronisation that ends
// a measured step.  The gaps where the GPU waits for the host are its idle time: what makes small batches and
// many small kernels slower than the sum of their kernel times.
#pragma once

#include <roofplan/calibration/profile.hpp>
#include <roofplan/engine/program.hpp>
#include <roofplan/engine/roofline.hpp>
#include <roofplan/runtime/kernel.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <span>
#include <vector>

namespace roofplan {

/// One kernel on the simulated timeline.
struct TimedKernel {
    Kernel kernel;
    KernelTime time;
    double issue_s = 0;  ///< when the host had launched it
    double start_s = 0;  ///< when the GPU began it
};

/// What the simulation of a step gives.
struct Timeline {
    double step_s = 0;      ///< from the first dispatch to the end of the last kernel, plus the final sync
    double gpu_busy_s = 0;  ///< the kernels' time as a profiler sees it: their times less the gaps between them
    double gpu_idle_s = 0;  ///< step minus busy: waiting for the host, and the gaps between back-to-back kernels
    double gpu_gap_s = 0;   ///< of the idle time, the gaps between back-to-back kernels (Roofline::kernel_gap_s)
    double host_s = 0;      ///< the host's dispatch time (issue of the last kernel, plus the sync)
    std::size_t kernel_count = 0;  ///< kernels launched (a measured convolution pass counts what cuDNN launched)
    EnumArray<KernelClass, double> class_s{};  ///< GPU time per kernel class
    EnumArray<StepPart, double> part_s{};      ///< GPU time per step part (forward, backward, optimizer)
    EnumArray<Bound, double> bound_s{};        ///< GPU time of compute-, memory- and latency-bound kernels
    double flops = 0, bytes = 0;
    std::vector<TimedKernel> kernels;                  ///< filled when asked for
};

/// The host's cost before launching `k`.
inline double host_cost(const Kernel& k, const HostCosts& h) {
    if (k.host == HostOp::graph) return k.call == HostCall::compiled ? h.compiled_graph_call_s : h.graph_s;
    double t = 0;
    if (k.call == HostCall::compiled)  // the generated wrapper: per kernel, and per call on a graph's first kernel
        return (k.host != HostOp::none ? h.compiled_call_s : 0) + h.launch_s +
               (k.part == StepPart::backward ? h.compiled_backward_kernel_s : h.compiled_kernel_s);
    if (k.call == HostCall::batch_norm) {  // the kind's own cost once per call and per node, then launches only
        if (k.host == HostOp::module) t = h.batch_norm_forward_s;
        if (k.host == HostOp::backward) t = h.batch_norm_backward_s;
        return t + h.launch_s;
    }
    switch (k.host) {
        case HostOp::none:  // a further kernel of the same op; in the backward every kernel is an autograd call
            if (k.part == StepPart::backward) t = h.backward_s;
            break;
        case HostOp::module: t = h.module_s; break;
        case HostOp::internal: t = k.call == HostCall::autocast_cast ? 0 : h.internal_s; break;
        case HostOp::backward: t = h.backward_s; break;
        case HostOp::optimizer: t = h.optimizer_s; break;
        case HostOp::graph: return h.graph_s;  // not reached: handled above
    }
    if (k.call == HostCall::autocast_cast) t += h.cast_s;  // the cast itself (a module's own call cost stays)
    if (k.autocast_op) t += h.autocast_s;
    t += k.views * h.view_s + k.containers * h.container_s + k.silent_backward_nodes * h.silent_node_s;
    if (k.block_glue != 0)
        t += ((k.block_glue & block_glue::python) != 0 ? h.block_python_s : 0) +
             ((k.block_glue & block_glue::autocast) != 0 ? h.block_autocast_s : 0) +
             ((k.block_glue & block_glue::autograd) != 0 ? h.block_autograd_s : 0);
    if (k.scaler_bookkeeping) return t + h.launch_s + h.scaler_s + k.host_tensors * h.scaler_per_tensor_s;
    if (k.adam_op >= 1 && k.adam_op <= h.adam_op_shares.size())
        return t + h.launch_s + k.host_tensors * h.adam_per_tensor_s * h.adam_op_shares[k.adam_op - 1u];
    return t + h.launch_s + k.host_tensors * h.per_tensor_s;
}

/// Simulates the kernels of one step on a device (`roofline`) driven by a host (`host`).  `steps` gives them:
/// `size()`, `structure(i)` (the i-th kernel's fields that do not depend on the batch: its class, part, host
/// operation), `time(i, roofline)`, `host_cost(i, host)` and `kernel(i)` (the whole kernel, read only when the
/// kernels are kept).
/// Kernels after a CUDA graph's launch cost the host nothing until the next one.  `forward_host_scale` (>= 1)
/// multiplies the host's cost of every layer's forward kernel (PredictRequest::forward_host_scale; the loss, a
/// step-level kernel, is not a layer's).
template <class Steps>
Timeline simulate_each(const Steps& steps, const Roofline& roofline, const HostCosts& host, bool keep_kernels,
                       double forward_host_scale = 1) {
    Timeline out;
    const std::size_t count = steps.size();
    double launches = 0, graph_launches = 0;
    const double kernel_gap = roofline.kernel_gap_s(), graph_gap = roofline.graph_kernel_gap_s();
    // A replayed CUDA graph runs its kernels closer together than a stream does: each kernel in one is shorter than
    // its event-timed time (which holds the stream's gap) by the difference.
    const double graph_shave = kernel_gap - graph_gap;
    if (keep_kernels) out.kernels.reserve(count);
    double cpu = 0, gpu = 0;
    bool in_graph = false;
    for (std::size_t i = 0; i < count; ++i) {
        const Kernel& k = steps.structure(i);
        if (k.host == HostOp::graph) in_graph = true;
        else if (k.host != HostOp::none || k.part == StepPart::optimizer) in_graph = false;
        KernelTime t = steps.time(i, roofline);
        if (t.launches == 0) continue;  // part of a measured convolution pass, counted and timed with it
        if (in_graph) {  // the difference comes off the fixed part first (never more than half the kernel)
            const double cut = std::min(graph_shave * t.launches, t.total_s / 2);
            t.launch_s = std::max(0.0, t.launch_s - cut);
            t.total_s -= cut;
            if (t.bound == Bound::latency && t.launch_s < t.total_s - t.launch_s)
                t.bound = t.compute_s >= t.memory_s ? Bound::compute : Bound::memory;
            graph_launches += t.launches;
        }
        if (k.sync_before) cpu = std::max(cpu, gpu) + host.sync_s;
        // A measured convolution pass that launches several kernels (cuDNN's FFT, Winograd): each further one is
        // one more launch from the host (or node of the graph).
        const double further = t.launches - 1;
        const double dispatch = in_graph && k.host != HostOp::graph ? host.graph_node_s * t.launches
                                                                    : steps.host_cost(i, host) + further * host.launch_s;
        cpu += k.part == StepPart::forward && !k.step_level ? dispatch * forward_host_scale : dispatch;
        launches += t.launches;
        const double start = std::max(cpu, gpu);
        gpu = start + t.total_s;
        out.gpu_busy_s += t.total_s;
        out.class_s[k.kind] += t.total_s;
        out.part_s[k.part] += t.total_s;
        out.bound_s[t.bound] += t.total_s;
        out.flops += t.flops;
        out.bytes += t.bytes;
        if (keep_kernels) out.kernels.push_back({steps.kernel(i), t, cpu, start});
    }
    out.kernel_count = static_cast<std::size_t>(launches + 0.5);
    // Every kernel's fitted time holds the gap that follows it (event-timed benchmarks include it; in a graph the
    // graph's gap); a profiler shows that gap as idle.
    out.gpu_gap_s = std::min(kernel_gap * (launches - graph_launches) + graph_gap * graph_launches, out.gpu_busy_s);
    out.gpu_busy_s -= out.gpu_gap_s;
    out.host_s = cpu + host.sync_s;
    out.step_s = std::max(cpu, gpu) + host.sync_s;
    out.gpu_idle_s = std::max(0.0, out.step_s - out.gpu_busy_s);
    return out;
}

/// Simulates the kernels of one step (see simulate_each).
inline Timeline simulate(const std::vector<Kernel>& kernels, const Roofline& roofline, const HostCosts& host,
                         bool keep_kernels = false, double forward_host_scale = 1) {
    struct Steps {
        const std::vector<Kernel>& kernels;
        [[nodiscard]] std::size_t size() const { return kernels.size(); }
        [[nodiscard]] const Kernel& structure(std::size_t i) const { return kernels[i]; }
        [[nodiscard]] const Kernel& kernel(std::size_t i) const { return kernels[i]; }
        [[nodiscard]] KernelTime time(std::size_t i, const Roofline& r) const { return r.time(kernels[i]); }
        [[nodiscard]] double host_cost(std::size_t i, const HostCosts& h) const { return roofplan::host_cost(kernels[i], h); }
    };
    return simulate_each(Steps{kernels}, roofline, host, keep_kernels, forward_host_scale);
}
/// The host's cost before each of a program's kernels (host_cost), which do not depend on the batch: a sweep
/// computes them once per host and passes them to `simulate`.
inline std::vector<double> host_costs(const Program& program, const HostCosts& host) {
    std::vector<double> out(program.size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = host_cost(program.structure(i), host);
    return out;
}
/// Simulates a lowered program's kernels at `batch`, evaluating each as the simulation reaches it: a streaming
/// kernel from its bytes and FLOPs alone, any other as the whole kernel at that batch.  `costs` are
/// host_costs(program, host).
inline Timeline simulate(const Program& program, std::int64_t batch, const Roofline& roofline, const HostCosts& host,
                         std::span<const double> costs, bool keep_kernels = false, double forward_host_scale = 1) {
    if (costs.size() != program.size()) detail::fail("internal error: host costs for another program");
    struct Steps {
        const Program& program;
        std::int64_t batch;
        std::span<const double> costs;
        [[nodiscard]] double host_cost(std::size_t i, const HostCosts&) const { return costs[i]; }
        [[nodiscard]] std::size_t size() const { return program.size(); }
        [[nodiscard]] const Kernel& structure(std::size_t i) const { return program.structure(i); }
        [[nodiscard]] Kernel kernel(std::size_t i) const { return program.kernel(i, batch); }
        [[nodiscard]] KernelTime time(std::size_t i, const Roofline& r) const {
            if (!program.streaming(i)) return r.matrix_time(program.kernel(i, batch));
            const Program::Stream s = program.stream(i, batch);
            return r.stream_time(program.structure(i).kind, s.vector_flops, s.bytes, s.elements);
        }
    };
    return simulate_each(Steps{program, batch, costs}, roofline, host, keep_kernels, forward_host_scale);
}
inline Timeline simulate(const Program& program, std::int64_t batch, const Roofline& roofline, const HostCosts& host,
                         bool keep_kernels = false) {
    return simulate(program, batch, roofline, host, host_costs(program, host), keep_kernels);
}

}  // namespace roofplan

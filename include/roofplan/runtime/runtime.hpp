// roofplan/runtime/runtime.hpp — lowers a model's training step or inference into the kernels a runtime
// launches: the layers by the runtime's rules, then the step-level work (the loss, the optimizer update).
#pragma once

#include <roofplan/runtime/compiled.hpp>
#include <roofplan/runtime/eager.hpp>
#include <roofplan/runtime/lowering.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace roofplan {

/// A step lowered to kernels, and the layer types that no rule of the runtime covers (lowered one kernel per
/// pass instead).
struct LoweredStep {
    std::vector<Kernel> kernels;
    std::vector<std::string> fallbacks;
};

namespace runtime_detail {

/// Parameter tensors of a layer (count, and chunks of 65,536 elements for multi_tensor_apply).
struct ParameterTensors {
    double tensors = 0;
    std::vector<double> chunks;  ///< per tensor, in the model's parameter order
    void add(double numel) {
        if (numel <= 0) return;
        tensors += 1;
        chunks.push_back(std::ceil(numel / 65536.0));
    }
};
inline void parameter_tensors(const AnyLayer& layer, ParameterTensors& p) {
    if (const auto* l = std::get_if<Linear>(&layer)) {
        const auto& c = l->config();
        if (!c.tied) p.add(static_cast<double>(c.in_features) * static_cast<double>(c.out_features));
        if (c.bias) p.add(static_cast<double>(c.out_features));
    } else if (const auto* conv = std::get_if<Conv2D>(&layer)) {
        const double bias = conv->config().bias ? static_cast<double>(conv->config().out_channels) : 0;
        p.add(static_cast<double>(conv->params()) - bias);
        p.add(bias);
    } else if (const auto* a = std::get_if<MultiHeadAttention>(&layer)) {
        const auto& c = a->config();
        const double d = static_cast<double>(c.model_dim), qw = static_cast<double>(c.heads * c.head_dim),
                     kvw = static_cast<double>(c.kv_heads * c.head_dim);
        if (c.fused_qkv) {  // one weight and one bias for Q, K and V (GPT-2's c_attn)
            p.add(d * (qw + 2 * kvw));
            if (c.bias) p.add(qw + 2 * kvw);
        } else {
            for (double out : {qw, kvw, kvw}) {
                p.add(d * out);
                if (c.bias) p.add(out);
            }
        }
        p.add(qw * d);
        if (c.bias) p.add(d);
    } else if (std::holds_alternative<BatchNorm2d>(layer) || std::holds_alternative<LayerNorm>(layer)) {
        p.add(static_cast<double>(params(layer)) / 2);
        p.add(static_cast<double>(params(layer)) / 2);
    } else {
        p.add(static_cast<double>(params(layer)));
    }
}

/// Which Python walk over the parameters precedes a foreach operation (charged to its first launch).
enum class Walk : std::uint8_t {
    none,
    optimizer,  ///< SGD's walk (grouping, state) before its first operation
    adam,       ///< AdamW's per-tensor Python before one of its operations (its share: HostCosts::adam_op_shares)
    scaler,     ///< GradScaler's unscale_
};

/// One foreach operation over every parameter: reads `reads` and writes `writes` FP32 values per parameter,
/// over `lists` tensor lists, after the Python walk `walk` (AdamW's: the share of operation `adam_op`, 1-8).
inline void foreach_op(Emitter& e, const ParameterTensors& p, double params, std::string_view what, int lists,
                       double reads, double writes, double flops, Walk walk, bool sync_before = false,
                       std::uint8_t adam_op = 0) {
    const double launches = foreach_launches(p.chunks, lists);
    for (double i = 0; i < launches; ++i) {
        Kernel k = stream_kernel(KernelClass::optimizer, i == 0 ? HostOp::optimizer : HostOp::none, what,
                                 4 * reads * params / launches, 4 * writes * params / launches, flops * params / launches, 4);
        k.sync_before = sync_before && i == 0;
        if (walk != Walk::none && i == 0) {  // the Python loop over the parameters before the op
            k.host_tensors = p.tensors;
            k.adam_op = walk == Walk::adam ? adam_op : 0;
            k.scaler_bookkeeping = walk == Walk::scaler;
        }
        e.optimizer(k);
    }
}

/// The optimizer step as PyTorch's foreach implementations run it (SGD: momentum, no weight decay, PyTorch's
/// defaults; AdamW: weight decay 0.01), plus under amp-fp16 the gradient scaler (torch/amp/grad_scaler.py):
/// `unscale_` checks and unscales the gradients (a foreach kernel), `_maybe_opt_step` reads found_inf on the
/// host (`.item()`: the host waits for the backward to finish) before the optimizer runs, and `update` adjusts
/// the scale (one kernel).  The scaler's own Python (per tensor and per step) is charged before its unscale; the
/// optimizer's own loop over the parameters still runs, after the synchronisation.  AdamW's per-tensor Python
/// (torch/optim/adam.py, _multi_tensor_adam) falls before several of its operations: the grouping and the CPU
/// step counts before the first, the bias corrections and `_foreach_sqrt`'s new tensors before the square root,
/// and each foreach call's own walk over its lists before its launch; HostCosts::adam_op_shares gives each
/// operation its share (op_bench.py `adam_split_host`).
inline void optimizer(Emitter& e) {
    ParameterTensors p;
    double params = 0;
    for (const Node& n : e.model().nodes()) {
        parameter_tensors(n.layer, p);
        params += static_cast<double>(roofplan::params(n.layer));
    }
    if (params <= 0) return;
    const bool scaler = e.step().precision == Precision::amp_fp16;
    if (scaler) foreach_op(e, p, params, "unscale gradients", 1, 1, 1, 2, Walk::scaler);
    const bool sync = scaler;
    if (e.step().optimizer == Optimizer::sgd) {
        foreach_op(e, p, params, "momentum scale", 1, 1, 1, 1, Walk::optimizer, sync);
        foreach_op(e, p, params, "momentum add", 2, 2, 1, 1, Walk::none);
        foreach_op(e, p, params, "parameter update", 2, 2, 1, 2, Walk::none);
    } else {
        // In the order of HostCosts::adam_op_shares.
        foreach_op(e, p, params, "weight decay", 1, 1, 1, 1, Walk::adam, sync, 1);
        foreach_op(e, p, params, "first moment", 2, 2, 1, 3, Walk::adam, false, 2);
        foreach_op(e, p, params, "second moment scale", 1, 1, 1, 1, Walk::adam, false, 3);
        foreach_op(e, p, params, "second moment add", 3, 2, 1, 2, Walk::adam, false, 4);
        foreach_op(e, p, params, "sqrt", 2, 1, 1, 1, Walk::adam, false, 5);
        foreach_op(e, p, params, "bias correction", 1, 1, 1, 1, Walk::adam, false, 6);
        foreach_op(e, p, params, "epsilon", 1, 1, 1, 1, Walk::adam, false, 7);
        foreach_op(e, p, params, "parameter update", 3, 3, 1, 3, Walk::adam, false, 8);
    }
    if (scaler) e.optimizer(stream_kernel(KernelClass::elementwise, HostOp::optimizer, "scaler update", 8, 8, 2, 4));
}

}  // namespace runtime_detail

/// Lowers one step of `model` at `batch` for a runtime other than `ideal` (which the engine times per layer
/// pass).  Errors: int8 in eager PyTorch (no such path: use the compiled runtime for an inference engine).
inline LoweredStep lower(const Model& model, std::int64_t batch, const StepConfig& step, Runtime runtime) {
    detail::require_batch(batch);
    if (runtime == Runtime::ideal) detail::fail("the ideal runtime is not lowered to kernels");
    if (runtime == Runtime::eager && step.precision == Precision::int8)
        detail::fail("eager PyTorch has no int8 path; int8 is an inference engine's (runtime compiled) or ideal");
    Emitter e(model, batch, step);
    const auto& nodes = model.nodes();
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        e.at(static_cast<std::uint32_t>(i));
        if (runtime == Runtime::eager) eager::lower_node(e, nodes[i]);
        else compiled::lower_node(e, nodes[i]);
    }
    if (e.training() && !nodes.empty()) {
        if (runtime == Runtime::eager) eager::loss(e, nodes.back());
        else compiled::loss(e, nodes.back());
        runtime_detail::optimizer(e);
    }
    LoweredStep out{e.kernels(), e.fallbacks()};
    if (runtime == Runtime::compiled)
        out.kernels = compiled::fuse(std::move(out.kernels), step.cuda_graphs,
                                     /*engine=*/step.runs_as_engine());
    return out;
}

}  // namespace roofplan

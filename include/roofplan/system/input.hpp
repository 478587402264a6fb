// roofplan/system/input.hpp — where a step's input batch comes from, and whether it keeps the GPU waiting.
//
// A benchmark with synthetic data makes its batch on the GPU; a real training run reads JPEG files, decodes and
// augments them on the host's CPU cores (PyTorch's DataLoader workers, one process each) or on the GPU (DALI,
// nvJPEG on the GPU's JPEG engines), and copies a batch decoded on the host to the GPU.  The pipeline runs beside the GPU (the loader prefetches), so a step
// takes the longer of the GPU's step and the pipeline's time for one batch; the copy of a batch decoded on the
// host is GPU time on the step's stream (`.cuda(non_blocking=True)` before the forward), on the GPU's host link.
//
// The decode rate per core is measured, not assumed: validation/host/decode_bench.py runs torchvision's ImageNet
// transforms with Pillow and NumPy on the machine it is on (`roofplan-bench host-decode`), one worker for the rate
// per core.  A pipeline of w workers on c cores decodes min(w, c) × that rate: each worker is a process on a core
// of its own, and the processes that drive the GPUs keep one core each.
#pragma once

#include <roofplan/detail/checked.hpp>
#include <roofplan/device/device.hpp>
#include <roofplan/engine/predict.hpp>
#include <roofplan/enum_names.hpp>
#include <roofplan/model/model.hpp>
#include <roofplan/runtime/lowering.hpp>
#include <roofplan/system/systems.hpp>

#include <algorithm>
#include <array>
#include <limits>
#include <string_view>
#include <variant>

namespace roofplan {

/// Where a step's input batch comes from.
enum class InputSource {
    synthetic,   ///< made on the GPU (synthetic-data benchmarks, trtexec's default): no copy, never waits
    host,        ///< a prepared batch in host memory, copied to the GPU each step
    cpu_decode,  ///< JPEG files decoded and augmented by data-loader workers on the CPU, then copied
    gpu_decode,  ///< JPEG files decoded and augmented on the GPU (DALI / nvJPEG): GPU time per image
};
template <>
struct EnumNames<InputSource> {
    static constexpr std::string_view field = "input";
    static constexpr std::string_view what = "input source";
    static constexpr std::array<std::string_view, 4> names{"synthetic", "host", "cpu-decode", "gpu-decode"};
    static constexpr std::array<std::string_view, 4> notes{
        "the batch is made on the GPU, no copies", "the batch is copied from host memory each step",
        "JPEGs decoded by data-loader workers on the CPU, then copied", "JPEGs decoded on the GPU (nvJPEG)"};
};

/// Decode and augmentation rates of one CPU core, images per second, for torchvision's ImageNet recipes
/// (train: RandomResizedCrop(224) and a flip; val: resize to 256 and centre crop 224) on ~92 kB 500x375 JPEGs.
struct DecodeRates {
    double train_per_core = 0;
    double val_per_core = 0;
    std::string_view source;
};

/// GPU decode (torchvision.io.decode_jpeg on CUDA: nvJPEG on the GPU's hardware JPEG engines, batched; crop, flip
/// and normalise on the GPU), as measured by validation/host/gpu_decode_bench.py: the host thread's time per image
/// (nvJPEG's host work and the launches: what bounds the pipeline) and the JPEG engines' capacity.  The engines are
/// not the SMs, and the crop and normalise kernels move well under a megabyte per image, so the step's GPU time is
/// not charged.  Zero: not measured for the GPU.
struct GpuDecode {
    double cpu_s_per_image = 0;
    double engine_images_per_s = 0;
    std::string_view source;
};

/// The decode rates roofplan assumes per core when none is given: measured on the lent H200 machine's host
/// (Intel Xeon, Firecracker guest) by validation/host/decode_bench.py, one worker.
/// 128 images, median of 5 rounds: training transform 240 images/s, validation 174.  The same script on the H100
/// machine's host (the same Xeon model) gave 216-290 and 180-253 over three runs: rates move by 15-20% between
/// leases.  With more workers the rate per worker fell there (15 workers: 199 each on the H200 host, 175 on the
/// H100's): the model's min(workers, cores) x rate is optimistic by up to ~20% on those 16-vCPU guests.
constexpr DecodeRates default_decode_rates() {
    return {240, 174, "measured: decode_bench.py, one worker, the H200 lease's host (validation/results/2026-11-24-h200-decode)"};
}

/// The measured GPU decode figures (validation/results/2026-11-24-h100-decode and -h200-decode: batch 256 back to
/// back for 3 s; the engines' capacity from one JPEG-engine utilisation reading: H100 4853 images/s at 40%, H200
/// 6004 at 21%); Hopper GPUs other than the H200 take the H100's.  None for other architectures.
constexpr GpuDecode gpu_decode_of(const Device& d) {
    if (d.architecture != Architecture::hopper) return {};
    if (d.answers_to("h200"))
        return {0.167e-3, 28'600, "measured: gpu_decode_bench.py on an H200 (validation/results/2026-11-24-h200-decode)"};
    return {0.206e-3, 12'100, "measured: gpu_decode_bench.py on an H100 (validation/results/2026-11-24-h100-decode)"};
}

/// How a step's input is made.
struct InputRequest {
    InputSource source = InputSource::synthetic;
    /// Data-loader workers per GPU (cpu-decode); 0: every core of the GPU's share of the host after the
    /// processes that drive the GPUs (one core each).
    int workers = 0;
    DecodeRates rates{};  ///< per core of the host (cpu-decode)
    GpuDecode gpu{};      ///< per image (gpu-decode)
};

/// What the input costs one GPU's step.
struct InputEstimate {
    InputSource source = InputSource::synthetic;
    double batch_bytes = 0;      ///< the batch as copied to the GPU (0: not copied)
    int workers = 0;             ///< data-loader workers of this GPU (cpu-decode)
    double samples_per_s = std::numeric_limits<double>::infinity();  ///< the pipeline's rate for this GPU
    double pipeline_s = 0;       ///< one batch through the pipeline (beside the GPU)
};

/// Whether a model reads token ids (its first layer an embedding).
inline bool token_input(const Model& model) {
    return !model.nodes().empty() && std::holds_alternative<Embedding>(model.nodes().front().layer);
}

/// Whether a model's input is an image the pipelines decode (3 × H × W), rather than token ids.
inline bool image_input(const Model& model) {
    const Shape in = model.input_shape();
    return !token_input(model) && in.rank() == 3 && in[0] == 3;
}

/// A batch of the model's input as the training scripts hand it over: images in FP32, or token ids with their
/// attention mask in int64.
inline double input_batch_bytes(const Model& model, std::int64_t batch) {
    return static_cast<double>(batch) * static_cast<double>(model.input_shape().elements()) * (token_input(model) ? 2 * 8 : 4);
}

/// A batch of the model's output (its last layer's) at `bytes_per_element`.
inline double output_batch_bytes(const Model& model, std::int64_t batch, double bytes_per_element) {
    const Shape last = model.nodes().empty() ? model.input_shape() : output_shape(model.nodes().back().layer);
    return static_cast<double>(batch) * static_cast<double>(last.elements()) * bytes_per_element;
}

/// The input of one GPU's step of `batch` samples of `model` in `mode`; `cores_per_gpu` is the host cores this
/// GPU's process and workers may use (0: not described).  Errors: decoding for a model whose input is not an
/// image, a worker count below 0, cpu-decode without workers or cores, gpu-decode without a measured figure.
inline InputEstimate estimate_input(const Model& model, std::int64_t batch, Mode mode, const InputRequest& r,
                                    double cores_per_gpu) {
    InputEstimate e;
    e.source = r.source;
    const double samples = static_cast<double>(batch);
    if (r.source == InputSource::synthetic) return e;
    e.batch_bytes = input_batch_bytes(model, batch);
    if (r.source == InputSource::host) return e;
    if (!image_input(model))
        detail::fail_about("input", to_string(r.source), " decodes JPEG images; model '", model.id(),
                           "' reads token ids or another input (accepted for it: synthetic, host)");
    if (r.workers < 0) detail::fail("data-loader workers must be >= 0 (0: every core the GPU's share has), got ", r.workers);
    const double usable = cores_per_gpu > 1 ? cores_per_gpu - 1 : 0;  // one core drives the GPU
    if (r.source == InputSource::gpu_decode) {
        if (!(r.gpu.cpu_s_per_image > 0 && r.gpu.engine_images_per_s > 0))
            detail::fail_about("input", "gpu-decode needs the GPU's measured decode figures; none are recorded for "
                               "this GPU (measured: Hopper, validation/host/gpu_decode_bench.py)");
        e.batch_bytes = 0;  // decoded on the GPU: only the compressed files cross the link
        // The host part on the pipeline's threads (DALI's num_threads: --loader-workers; default the GPU's share
        // of the cores, one thread on one GPU), at most the engines' rate.
        e.workers = r.workers > 0 ? r.workers : usable >= 1 ? static_cast<int>(usable) : 1;
        const double threads = cores_per_gpu > 0 ? std::min<double>(e.workers, std::max(usable, 1.0)) : e.workers;
        e.samples_per_s = std::min(threads / r.gpu.cpu_s_per_image, r.gpu.engine_images_per_s);
        e.pipeline_s = samples / e.samples_per_s;
        return e;
    }
    const double per_core = mode == Mode::train ? r.rates.train_per_core : r.rates.val_per_core;
    if (!(per_core > 0)) detail::fail("cpu-decode needs a decode rate per core (roofplan-bench host-decode measures one)");
    e.workers = r.workers > 0 ? r.workers : static_cast<int>(usable);
    if (e.workers < 1)
        detail::fail_about("input", "cpu-decode needs data-loader workers: give their number per GPU (the host's ",
                           "cores are not described", cores_per_gpu > 0 ? " or leave none for the workers" : "", ")");
    const double running = cores_per_gpu > 0 ? std::min<double>(e.workers, usable > 0 ? usable : 1) : e.workers;
    e.samples_per_s = running * per_core;
    e.pipeline_s = samples / e.samples_per_s;
    return e;
}

/// A host link's rate for copies (bytes/s) and latency: PCIe of `generation` and `lanes`, at `efficiency`.
struct CopyLink {
    double bytes_s = 0;
    double latency_s = 0;
};
inline CopyLink pcie_link(const Device& d, double efficiency, double latency_s) {
    return {detail::pcie_x16_gb_s(d.pcie.generation) / 16 * d.pcie.lanes * 1e9 * efficiency, latency_s};
}

/// One GPU's prediction with its input: the copy of a batch prepared or decoded on the host (before the forward,
/// on the step's stream) adds GPU time; the pipeline runs beside the GPU, so the step is
/// the longer of the GPU's step and one batch through the pipeline (then `bound` is `input`).  Throughput and
/// energy follow the step.
inline void with_input(Prediction& p, const InputEstimate& e, const CopyLink& link) {
    p.input = to_string(e.source);
    if (e.source == InputSource::synthetic) return;
    p.input_copy_s = e.batch_bytes > 0 ? e.batch_bytes / link.bytes_s + link.latency_s : 0.0;
    p.input_pipeline_s = e.pipeline_s;
    p.input_workers = e.workers;
    const double before = p.step_time.value();
    const double gpu = before + p.input_copy_s;
    const double step = std::max(gpu, p.input_pipeline_s);
    if (p.input_pipeline_s > gpu) p.bound = StepBound::input;
    p.step_time = units::in_seconds(step);
    p.compute_time = p.step_time;
    p.throughput_samples_per_s = static_cast<double>(p.batch) / step;
    p.achieved = units::flops_per_second::from_value(p.flops.value() / step);
    p.fraction_of_peak *= before / step;
    p.samples_per_joule = p.throughput_samples_per_s / p.power.value();
}

}  // namespace roofplan

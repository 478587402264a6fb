// roofplan/engine/program.hpp — a lowered step as affine functions of the batch, so that a sweep lowers a model
// once per runtime and precision, not once per prediction.
//
// Every kernel a runtime emits has a structure that does not depend on the batch (the rules never branch on it)
// and bytes, FLOPs and GEMM extents that are affine in it (activations grow with the batch, weights do not).  A
// Program lowers at batch 1 and batch 2 and keeps, per kernel, the value at 1 and the slope; `at(b)` evaluates
// them.  A unit test checks the result against a direct lowering at other batches.
#pragma once

#include <roofplan/engine/roofline.hpp>
#include <roofplan/runtime/runtime.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace roofplan {

class Program {
public:
    /// Lowers `model` for `runtime` (eager or compiled) at two batches.  Errors as `lower`.
    Program(const Model& model, const StepConfig& step, Runtime runtime) {
        LoweredStep one = lower(model, 1, step, runtime);
        const LoweredStep two = lower(model, 2, step, runtime);
        if (one.kernels.size() != two.kernels.size())
            detail::fail("internal error: the ", to_string(runtime), " lowering of '", model.id(),
                         "' changes its kernels with the batch");
        base_ = std::move(one.kernels);
        slope_.resize(base_.size());
        for (std::size_t i = 0; i < base_.size(); ++i) {
            const Kernel& a = base_[i];
            const Kernel& b = two.kernels[i];
            Slope& s = slope_[i];
            s = {b.macs - a.macs,   b.vector_flops - a.vector_flops, b.bytes_read - a.bytes_read,
                 b.bytes_written - a.bytes_written, b.m - a.m, b.n - a.n, b.k - a.k, b.count - a.count,
                 b.images - a.images, b.rows - a.rows};
        }
        fallbacks_ = std::move(one.fallbacks);
        streaming_.resize(base_.size());
        stream_.resize(base_.size());
        for (std::size_t i = 0; i < base_.size(); ++i) {
            streaming_[i] = Roofline::is_streaming(base_[i]) && slope_[i].macs == 0;
            // What a streaming kernel's time reads, together (the simulation's loop touches nothing else of it);
            // the elements are affine in the batch as the bytes are (sums of affine terms, in a compiler's chain too).
            const Kernel& a = base_[i];
            const Kernel& b = two.kernels[i];
            stream_[i] = {{a.vector_flops, a.bytes(), Roofline::elements_of(a)},
                          {b.vector_flops - a.vector_flops, b.bytes() - a.bytes(), Roofline::elements_of(b) - Roofline::elements_of(a)}};
        }
    }

    /// Kernel `i` at `batch` (what a simulation reads one kernel at a time, without the whole step's copy).
    [[nodiscard]] Kernel kernel(std::size_t i, std::int64_t batch) const {
        Kernel k = base_[i];
        const Slope& s = slope_[i];
        const double extra = static_cast<double>(batch) - 1.0;
        k.macs += s.macs * extra;
        k.vector_flops += s.vector_flops * extra;
        k.bytes_read += s.bytes_read * extra;
        k.bytes_written += s.bytes_written * extra;
        k.m += s.m * extra;
        k.n += s.n * extra;
        k.k += s.k * extra;
        k.count += s.count * extra;
        k.images += s.images * extra;
        k.rows += s.rows * extra;
        // The elements are affine in the batch (a compiler's chain mixes widths whose shares move with it): the
        // width that gives them.
        const StreamTerms& t = stream_[i];
        if (const double elements = t.at_one.elements + t.slope.elements * extra; elements > 0) k.element_bytes = k.bytes() / elements;
        return k;
    }
    /// Kernel `i`'s fields that do not depend on the batch (its class, part, host operation, shapes' keys).
    [[nodiscard]] const Kernel& structure(std::size_t i) const { return base_[i]; }
    /// Whether kernel `i` is a streaming one at every batch (Roofline::is_streaming): timed from `stream` alone.
    [[nodiscard]] bool streaming(std::size_t i) const { return streaming_[i] != 0; }
    /// What a streaming kernel's time depends on, at `batch` (the same sums as `kernel(i, batch)`'s fields).
    struct Stream {
        double vector_flops, bytes, elements;  ///< elements: Roofline::elements_of the kernel at the batch
    };
    [[nodiscard]] Stream stream(std::size_t i, std::int64_t batch) const {
        const StreamTerms& t = stream_[i];
        const double extra = static_cast<double>(batch) - 1.0;
        return {t.at_one.vector_flops + t.slope.vector_flops * extra, t.at_one.bytes + t.slope.bytes * extra,
                t.at_one.elements + t.slope.elements * extra};
    }
    /// The kernels at `batch` (written into `out`, reusing its storage).
    void at(std::int64_t batch, std::vector<Kernel>& out) const {
        out.resize(base_.size());
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = kernel(i, batch);
    }
    [[nodiscard]] std::vector<Kernel> at(std::int64_t batch) const {
        std::vector<Kernel> out;
        at(batch, out);
        return out;
    }
    [[nodiscard]] const std::vector<std::string>& fallbacks() const { return fallbacks_; }
    [[nodiscard]] std::size_t size() const { return base_.size(); }

private:
    struct Slope {
        double macs, vector_flops, bytes_read, bytes_written, m, n, k, count, images, rows;
    };
    std::vector<Kernel> base_;
    std::vector<Slope> slope_;
    std::vector<std::uint8_t> streaming_;
    struct StreamTerms {
        Stream at_one, slope;  ///< at batch 1, and per further sample
    };
    std::vector<StreamTerms> stream_;
    std::vector<std::string> fallbacks_;
};

}  // namespace roofplan

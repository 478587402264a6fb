// roofplan/io/onnx.hpp — import an ONNX graph as a roofplan Model: the API of the compiled library roofplan::onnx
// (built and installed when Debian's libonnx-dev is found; the parsing is in src/onnx.cpp).
//
// The graph's shapes are inferred with ONNX's own shape inference (the importer folds integer shape
// arithmetic, such as PyTorch's dynamic Reshape targets, between rounds) after every dynamic input dimension is given a value: batch dimensions count one instance (the model's costs are per
// instance and scale with the batch of a prediction), other dynamic dimensions take OnnxOptions::seq.
// Operators map to the existing layer descriptors (docs/model-files.md has the table): Conv → Conv2D,
// Gemm / MatMul by a constant → Linear (a following bias Add is folded in), MatMul of two activations →
// MatMul, BatchNormalization → BatchNorm2d, ...  Views (Reshape, Transpose, Slice, ...) cost nothing, and
// shape arithmetic on constants is skipped.  Operators it cannot map are reported in
// OnnxImport::unsupported (op type, count, first node) rather than counted as zero; `strict` makes them an
// error.  Malformed files (truncated, not ONNX, cycles, missing shapes, absurd dimensions) are errors that
// say what was wrong.
#pragma once

#include <roofplan/model/model.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace roofplan::io {

/// How to import an ONNX file.
struct OnnxOptions {
    std::int64_t seq = 0;                 ///< value of dynamic dimensions that are not the batch (0: none given)
    bool strict = false;                  ///< unsupported operators are an error instead of a report
    std::vector<std::string> data_inputs; ///< graph inputs that carry data (default: detected)
    std::string id;                       ///< model id (default: the file name without extension)
};

/// An operator the importer could not map, with how often it occurs.
struct UnsupportedOp {
    std::string op_type;
    std::int64_t count = 0;
    std::string first_node;
    std::string reason;
};

/// The imported model and what the importer did with the graph.
struct OnnxImport {
    Model model;
    std::vector<UnsupportedOp> unsupported;
    std::int64_t views = 0;           ///< data-moving-free nodes (Reshape, Transpose, Identity, ...) skipped
    std::int64_t constant_nodes = 0;  ///< nodes computing on constants and shapes only, skipped
    std::int64_t fused = 0;           ///< nodes folded into a neighbour (bias Add into MatMul, Erf-GELU chain)
    std::vector<std::string> notes;   ///< how dynamic dimensions were resolved, which inputs carry data
    bool seq_used = false;            ///< some dynamic dimension took OnnxOptions::seq
};

/// Imports an ONNX model held in memory; `file` names it in messages.
OnnxImport import_onnx_bytes(std::string_view bytes, const std::string& file, const OnnxOptions& options = {});

/// Imports an ONNX file.  Example:
///   auto imported = roofplan::io::import_onnx("resnet18.onnx");
///   std::int64_t params = imported.model.params();
OnnxImport import_onnx(const std::string& file, const OnnxOptions& options = {});

}  // namespace roofplan::io

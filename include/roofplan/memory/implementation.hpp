// roofplan/memory/implementation.hpp — facts about how the reference implementations of the zoo models write
// some layers, which change what autograd keeps but which the layer descriptors do not carry.
//
// The memory rules follow PyTorch eager operator by operator, so two implementations of the same layer can keep
// different tensors: Hugging Face's GPT-2 writes its GELU as Python arithmetic (transformers/activations.py,
// NewGELUActivation: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))), and under autocast `pow` runs in FP32
// (aten/src/ATen/autocast_mode.cpp lists pow among the FP32 ops), so the activation saves four tensors, three
// of them FP32, where torch's gelu saves one; it projects Q, K and V with one Conv1D (`c_attn`), so its input is
// cast once, not three times.  torchvision's residual blocks add in place (`out += identity`) and use
// nn.ReLU(inplace=True).  The batch the validation scripts feed (validation/e2e/e2e_suite.py) carries an int64
// attention mask for BERT, two label tensors for span prediction, none for a causal LM.  Pre-norm transformers
// (GPT-2, Llama) keep the residual stream before the norm, post-norm ones (BERT) after it.  Hugging Face's causal
// LMs build a key/value cache in every forward, training included (their configs default to use_cache=True):
// the cache holds a copy of each layer's keys and values until the model's output is dropped, and attention
// reads (so autograd keeps) the copies — on an H100, GPT-2's allocator trace shows them live at the peak,
// 2 x 12 MiB per layer at batch 8 and sequence 1024 in BF16 (validation/results/2026-11-24-h100-memory).
//
// The facts are looked up by zoo model id (`implementation_of`); a caller can override them in the request.
// The timing model's eager lowering (runtime/eager.hpp) does not know them yet: see docs/memory.md.
#pragma once

#include <roofplan/model/model.hpp>

#include <string_view>
#include <variant>

namespace roofplan::memory {

/// How the framework code around the layers is written.
struct Implementation {
    bool inplace_relu = true;           ///< ReLU modules run in place (torchvision's nn.ReLU(inplace=True))
    bool inplace_residual_add = false;  ///< residual adds write into their first operand (torchvision `out += x`)
    bool python_gelu_tanh = false;      ///< GELU is transformers' NewGELUActivation (Python ops, pow in FP32)
    bool fused_qkv = false;             ///< one projection computes Q, K and V (GPT-2's Conv1D c_attn)
    bool pre_norm = false;              ///< the residual branch is taken before the norm (GPT-2, Llama)
    bool attention_mask = false;        ///< token inputs come with an int64 attention mask (BERT's inputs)
    int label_tensors = 1;              ///< int64 label tensors of one value per sample (0: the inputs are the labels)
    bool kv_cache = false;              ///< the forward fills a key/value cache (Hugging Face causal LMs, use_cache)
    constexpr bool operator==(const Implementation&) const = default;
};

/// Whether the norm before the first attention layer opens each block (pre-norm) rather than closing it.
inline bool pre_norm_structure(const Model& model) {
    const auto& nodes = model.nodes();
    for (std::size_t i = 1; i < nodes.size(); ++i) {
        if (!std::holds_alternative<MultiHeadAttention>(nodes[i].layer)) continue;
        const AnyLayer& before = nodes[i - 1].layer;
        return std::holds_alternative<LayerNorm>(before) || std::holds_alternative<RMSNorm>(before);
    }
    return false;
}

/// The implementation facts of a model: GELU form and fused Q/K/V from its layers; label tensors, attention masks
/// and torchvision's in-place residual add by zoo id (other models get the structural defaults).
inline Implementation implementation_of(const Model& model) {
    Implementation impl;
    impl.pre_norm = pre_norm_structure(model);
    const std::string_view id = model.id();
    if (id.starts_with("resnet")) impl.inplace_residual_add = true;
    if (id.starts_with("bert")) impl.attention_mask = true;
    if (id == "bert-squad") impl.label_tensors = 2;  // start and end positions
    if (id == "gpt2") impl.label_tensors = 0;  // GPT2LMHeadModel's labels are its input ids
    // GPT2Config and LlamaConfig default to use_cache=True, in training too: each layer's keys and values are
    // concatenated into a DynamicCache (transformers/cache_utils.py, DynamicLayer.update: torch.cat, a copy).
    if (id == "gpt2" || id.starts_with("llama")) impl.kv_cache = true;
    // Structural facts come from the layers themselves (the timing lowering reads the same fields).
    for (const Node& n : model.nodes()) {
        if (const auto* a = std::get_if<Activation>(&n.layer); a && a->config().kind == ActivationKind::gelu_tanh)
            impl.python_gelu_tanh = true;
        if (const auto* m = std::get_if<MultiHeadAttention>(&n.layer); m && m->config().fused_qkv) impl.fused_qkv = true;
    }
    return impl;
}

}  // namespace roofplan::memory

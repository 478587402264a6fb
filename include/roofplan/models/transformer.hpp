// roofplan/models/transformer.hpp — BERT (base, large, SWAG and SQuAD heads), GPT-2 and a Llama-style decoder.
#pragma once

#include <roofplan/models/detail/builder.hpp>

namespace roofplan::models {

/// A BERT encoder's size (Devlin et al. 2019; Hugging Face's BertConfig).
struct BertConfig {
    std::int64_t vocabulary = 30522;
    std::int64_t hidden = 768;
    std::int64_t layers = 12;
    std::int64_t heads = 12;
    std::int64_t intermediate = 3072;
    std::int64_t max_positions = 512;
    std::int64_t type_vocabulary = 2;
};

/// Which head sits on the encoder.
enum class BertHead {
    pooler,           ///< BertModel: encoder + pooler (dense + tanh on [CLS])
    multiple_choice,  ///< BertForMultipleChoice: pooler + dropout + Linear(hidden, 1), one pass per choice
    span,             ///< BertForQuestionAnswering (current transformers): no pooler, Linear(hidden, 2) per token
};

namespace detail {

constexpr Model bert(std::string_view id, std::string_view description, const BertConfig& c, std::int64_t seq,
                     BertHead head, std::int64_t choices = 1) {
    if (seq < 1 || seq > c.max_positions)
        roofplan::detail::fail(id, ": sequence length must be in [1, ", c.max_positions, "], got ", seq);
    Model m(id, description, Shape{choices, seq});
    m.reserve(static_cast<std::size_t>(8 + 14 * c.layers + 6));
    const std::int64_t r = choices;  // every layer runs once per answer choice
    const Shape tokens{seq, c.hidden};
    m.add("embeddings.word_embeddings", Embedding{{.vocabulary = c.vocabulary, .width = c.hidden, .rows = seq}}, false, r);
    m.add("embeddings.position_embeddings", Embedding{{.vocabulary = c.max_positions, .width = c.hidden, .rows = seq, .broadcast = true}},
          false, r);
    m.add("embeddings.token_type_embeddings",
          Embedding{{.vocabulary = c.type_vocabulary, .width = c.hidden, .rows = seq}}, false, r);
    m.add("embeddings.add", Add{{.shape = tokens, .inputs = 3}}, true, r);
    m.add("embeddings.LayerNorm", LayerNorm{{.width = c.hidden, .rows = seq}}, true, r);
    m.add("embeddings.dropout", Dropout{{.shape = tokens, .probability = 0.1}}, true, r);
    for (std::int64_t i = 0; i < c.layers; ++i) {
        const Name p = join<63>("encoder.layer.", i);
        m.add(join<63>(p, ".attention"),
              MultiHeadAttention{{.model_dim = c.hidden, .heads = c.heads, .q_len = seq, .dropout = 0.1}}, true, r);
        m.add(join<63>(p, ".attention.output.dropout"), Dropout{{.shape = tokens, .probability = 0.1}}, true, r);
        m.add(join<63>(p, ".attention.output.add"), Add{{.shape = tokens}}, true, r);
        m.add(join<63>(p, ".attention.output.LayerNorm"), LayerNorm{{.width = c.hidden, .rows = seq}}, true, r);
        m.add(join<63>(p, ".intermediate.dense"),
              Linear{{.in_features = c.hidden, .out_features = c.intermediate, .rows = seq}}, true, r);
        m.add(join<63>(p, ".intermediate.gelu"),
              Activation{{.kind = ActivationKind::gelu, .shape = Shape{seq, c.intermediate}}}, true, r);
        m.add(join<63>(p, ".output.dense"),
              Linear{{.in_features = c.intermediate, .out_features = c.hidden, .rows = seq}}, true, r);
        m.add(join<63>(p, ".output.dropout"), Dropout{{.shape = tokens, .probability = 0.1}}, true, r);
        m.add(join<63>(p, ".output.add"), Add{{.shape = tokens}}, true, r);
        m.add(join<63>(p, ".output.LayerNorm"), LayerNorm{{.width = c.hidden, .rows = seq}}, true, r);
    }
    if (head == BertHead::pooler || head == BertHead::multiple_choice) {
        m.add("pooler.dense", Linear{{.in_features = c.hidden, .out_features = c.hidden}}, true, r);
        m.add("pooler.activation", Activation{{.kind = ActivationKind::tanh, .shape = Shape{c.hidden}}}, true, r);
    }
    if (head == BertHead::multiple_choice) {
        m.add("dropout", Dropout{{.shape = Shape{c.hidden}, .probability = 0.1}}, true, r);
        m.add("classifier", Linear{{.in_features = c.hidden, .out_features = 1}}, true, r);
    }
    if (head == BertHead::span) {
        m.add("qa_outputs", Linear{{.in_features = c.hidden, .out_features = 2, .rows = seq}});
    }
    return m;
}

}  // namespace detail

/// bert-base-uncased as Hugging Face's BertModel (with pooler): 109,482,240 parameters.
constexpr Model bert_base(std::int64_t seq = 128) {
    return detail::bert("bert-base", "BERT-base uncased encoder with pooler (Hugging Face BertModel)", BertConfig{},
                        seq, BertHead::pooler);
}
/// bert-large-uncased (BertModel with pooler): 335,141,888 parameters.
constexpr Model bert_large(std::int64_t seq = 128) {
    return detail::bert("bert-large", "BERT-large uncased encoder with pooler (Hugging Face BertModel)",
                        BertConfig{.hidden = 1024, .layers = 24, .heads = 16, .intermediate = 4096}, seq,
                        BertHead::pooler);
}
/// BERT-base fine-tuned on SWAG (BertForMultipleChoice): 4 answer choices per instance, each a sequence of
/// `seq` tokens (80 in the source benchmark); 109,483,009 parameters.
constexpr Model bert_swag(std::int64_t seq = 80) {
    return detail::bert("bert-swag", "BERT-base for SWAG multiple choice (4 choices per instance)", BertConfig{}, seq,
                        BertHead::multiple_choice, 4);
}
/// BERT-base fine-tuned on SQuAD (BertForQuestionAnswering, current transformers: no pooler) at `seq` tokens
/// (384 in the source benchmark); 108,893,186 parameters.  The older pytorch-pretrained-bert class kept an
/// unused pooler (+590,592): see docs/counting.md.
constexpr Model bert_squad(std::int64_t seq = 384) {
    return detail::bert("bert-squad", "BERT-base for SQuAD span prediction (question answering)", BertConfig{}, seq,
                        BertHead::span);
}

/// A GPT-2 model's size (Radford et al. 2019; Hugging Face's GPT2Config).
struct Gpt2Config {
    std::int64_t vocabulary = 50257;
    std::int64_t width = 768;
    std::int64_t layers = 12;
    std::int64_t heads = 12;
    std::int64_t positions = 1024;
    bool lm_head = true;  ///< GPT2LMHeadModel (an LM head tied to the token embedding), or GPT2Model (none)
};

/// Builds a GPT-2 (Hugging Face GPT2LMHeadModel or GPT2Model names) for `seq` tokens.
constexpr Model gpt2_model(std::string_view id, std::string_view description, const Gpt2Config& c, std::int64_t seq) {
    if (seq < 1 || seq > c.positions)
        roofplan::detail::fail(id, ": sequence length must be in [1, ", c.positions, "], got ", seq);
    const std::int64_t width = c.width;
    Model m(id, description, Shape{seq});
    m.reserve(static_cast<std::size_t>(6 + 11 * c.layers + 3));
    const Shape tokens{seq, width};
    m.add("transformer.wte", Embedding{{.vocabulary = c.vocabulary, .width = width, .rows = seq}}, false);
    m.add("transformer.wpe", Embedding{{.vocabulary = c.positions, .width = width, .rows = seq, .broadcast = true}}, false);
    m.add("transformer.add", Add{{.shape = tokens}});
    m.add("transformer.drop", Dropout{{.shape = tokens, .probability = 0.1}});
    for (std::int64_t i = 0; i < c.layers; ++i) {
        const detail::Name p = join<63>("transformer.h.", i);
        m.add(join<63>(p, ".ln_1"), LayerNorm{{.width = width, .rows = seq}});
        m.add(join<63>(p, ".attn"), MultiHeadAttention{{.model_dim = width, .heads = c.heads, .q_len = seq, .causal = true, .dropout = 0.1,
                                                       .fused_qkv = true}});
        m.add(join<63>(p, ".attn.resid_dropout"), Dropout{{.shape = tokens, .probability = 0.1}});
        m.add(join<63>(p, ".add_1"), Add{{.shape = tokens}});
        m.add(join<63>(p, ".ln_2"), LayerNorm{{.width = width, .rows = seq}});
        m.add(join<63>(p, ".mlp.c_fc"), Linear{{.in_features = width, .out_features = 4 * width, .rows = seq}});
        m.add(join<63>(p, ".mlp.act"), Activation{{.kind = ActivationKind::gelu_tanh, .shape = Shape{seq, 4 * width}}});
        m.add(join<63>(p, ".mlp.c_proj"), Linear{{.in_features = 4 * width, .out_features = width, .rows = seq}});
        m.add(join<63>(p, ".mlp.dropout"), Dropout{{.shape = tokens, .probability = 0.1}});
        m.add(join<63>(p, ".add_2"), Add{{.shape = tokens}});
    }
    m.add("transformer.ln_f", LayerNorm{{.width = width, .rows = seq}});
    if (c.lm_head)
        m.add("lm_head",
              Linear{{.in_features = width, .out_features = c.vocabulary, .bias = false, .rows = seq, .tied = true}});
    return m;
}

/// GPT-2 small (Hugging Face GPT2LMHeadModel; the LM head shares the token embedding): 124,439,808 parameters.
constexpr Model gpt2(std::int64_t seq = 1024) {
    return gpt2_model("gpt2", "GPT-2 small (Hugging Face GPT2LMHeadModel, tied LM head)", Gpt2Config{}, seq);
}

/// A Llama-style decoder: RMSNorm, grouped-query causal attention with rotary embeddings, SwiGLU MLP, no biases.
struct LlamaConfig {
    std::int64_t vocabulary = 32000;
    std::int64_t hidden = 4096;
    std::int64_t intermediate = 11008;
    std::int64_t layers = 32;
    std::int64_t heads = 32;
    std::int64_t kv_heads = 32;
    std::int64_t head_dim = 0;  ///< 0 = hidden / heads
    bool tie_embeddings = false;
};

/// Builds a Llama-style decoder (Hugging Face LlamaForCausalLM names) for `seq` tokens.
constexpr Model llama(std::string_view id, std::string_view description, const LlamaConfig& c, std::int64_t seq) {
    roofplan::detail::require_positive(seq, id, "sequence length");
    Model m(id, description, Shape{seq});
    m.reserve(static_cast<std::size_t>(2 + 10 * c.layers + 2));
    const Shape tokens{seq, c.hidden};
    m.add("model.embed_tokens", Embedding{{.vocabulary = c.vocabulary, .width = c.hidden, .rows = seq}}, false);
    for (std::int64_t i = 0; i < c.layers; ++i) {
        const detail::Name p = join<63>("model.layers.", i);
        m.add(join<63>(p, ".input_layernorm"), RMSNorm{{.width = c.hidden, .rows = seq}});
        m.add(join<63>(p, ".self_attn"),
              MultiHeadAttention{{.model_dim = c.hidden, .heads = c.heads, .head_dim = c.head_dim,
                                  .kv_heads = c.kv_heads, .q_len = seq, .causal = true, .bias = false,
                                  .rotary = true}});
        m.add(join<63>(p, ".add_1"), Add{{.shape = tokens}});
        m.add(join<63>(p, ".post_attention_layernorm"), RMSNorm{{.width = c.hidden, .rows = seq}});
        m.add(join<63>(p, ".mlp.gate_proj"),
              Linear{{.in_features = c.hidden, .out_features = c.intermediate, .bias = false, .rows = seq}});
        m.add(join<63>(p, ".mlp.up_proj"),
              Linear{{.in_features = c.hidden, .out_features = c.intermediate, .bias = false, .rows = seq}});
        m.add(join<63>(p, ".mlp.act_fn"),
              Activation{{.kind = ActivationKind::silu, .shape = Shape{seq, c.intermediate}}});
        m.add(join<63>(p, ".mlp.mul"), Multiply{{.shape = Shape{seq, c.intermediate}}});
        m.add(join<63>(p, ".mlp.down_proj"),
              Linear{{.in_features = c.intermediate, .out_features = c.hidden, .bias = false, .rows = seq}});
        m.add(join<63>(p, ".add_2"), Add{{.shape = tokens}});
    }
    m.add("model.norm", RMSNorm{{.width = c.hidden, .rows = seq}});
    m.add("lm_head", Linear{{.in_features = c.hidden, .out_features = c.vocabulary, .bias = false, .rows = seq,
                             .tied = c.tie_embeddings}});
    return m;
}

/// Llama-2-7B (meta-llama/Llama-2-7b-hf config): 6,738,415,616 parameters.
constexpr Model llama2_7b(std::int64_t seq = 4096) {
    return llama("llama2-7b", "Llama-2-7B (Llama-style decoder, MHA)", LlamaConfig{}, seq);
}
/// Llama-3-8B (meta-llama/Meta-Llama-3-8B config: GQA with 8 KV heads, 128,256-token vocabulary):
/// 8,030,261,248 parameters.
constexpr Model llama3_8b(std::int64_t seq = 8192) {
    return llama("llama3-8b", "Llama-3-8B (Llama-style decoder, grouped-query attention)",
                 LlamaConfig{.vocabulary = 128256, .intermediate = 14336, .kv_heads = 8}, seq);
}

}  // namespace roofplan::models

// roofplan/models/gnmt.hpp — GNMT-like English→German as OpenSeq2Seq configures it.
#pragma once

#include <roofplan/models/detail/builder.hpp>

namespace roofplan::models {

/// OpenSeq2Seq's "GNMT-like" en-de model (example_configs/text2text/en-de/en-de-gnmt-like-4GPUs.py, with the
/// GNMTLikeEncoderWithEmbedding and RNNDecoderWithAttention classes), modelled exactly:
///  * vocabulary 32,768 (SentencePiece BPE m_common.vocab, shared by both sides, separate embedding tables);
///  * encoder: embedding 1024; one bidirectional LSTM layer (1024 units each way); 6 unidirectional LSTM
///    layers (the first reads the 2048-wide concatenation; the other 5 have residual connections);
///  * decoder: embedding 1024; 8 LSTM layers of 1024, each fed [input; attention context] (2048 wide);
///    residual connections on layers 3–8; GNMT-v2 normalised Bahdanau attention with 1024 units whose key
///    (memory) and query projections have no bias; output projection 1024 → vocabulary without bias;
///  * TensorFlow LSTMCell: one bias vector per cell; dropout keep 0.8 on every layer input but the first.
/// `seq` is the source and target length (training max_length 50).  Parameters: 3072·V + 174,131,201 =
/// 274,794,497.
constexpr Model gnmt(std::int64_t seq = 50) {
    constexpr std::int64_t vocabulary = 32768, units = 1024;
    roofplan::detail::require_positive(seq, "gnmt", "sequence length");
    Model m("gnmt", "GNMT-like en-de (OpenSeq2Seq): 8-layer LSTM encoder/decoder with attention", Shape{2, seq});
    m.reserve(48);
    const Shape wide{seq, 2 * units};
    const Shape narrow{seq, units};
    // Encoder.
    m.add("encoder.embedding", Embedding{{.vocabulary = vocabulary, .width = units, .rows = seq}}, false);
    m.add("encoder.layer0.bidirectional",
          LSTM{{.input_size = units, .hidden_size = units, .seq_len = seq, .bidirectional = true, .bias_vectors = 1}});
    m.add("encoder.layer1.dropout", Dropout{{.shape = wide, .probability = 0.2}});
    m.add("encoder.layer1", LSTM{{.input_size = 2 * units, .hidden_size = units, .seq_len = seq, .bias_vectors = 1}});
    for (std::int64_t i = 2; i < 7; ++i) {
        m.add(join<63>("encoder.layer", i, ".dropout"), Dropout{{.shape = narrow, .probability = 0.2}});
        m.add(join<63>("encoder.layer", i),
              LSTM{{.input_size = units, .hidden_size = units, .seq_len = seq, .bias_vectors = 1}});
        m.add(join<63>("encoder.layer", i, ".residual"), Add{{.shape = narrow}});
    }
    // Attention keys: projected once per source sentence.
    m.add("attention.memory_layer", Linear{{.in_features = units, .out_features = units, .bias = false, .rows = seq}});
    // Decoder.
    m.add("decoder.embedding", Embedding{{.vocabulary = vocabulary, .width = units, .rows = seq}}, false);
    m.add("decoder.layer0.dropout", Dropout{{.shape = wide, .probability = 0.2}});
    m.add("decoder.layer0", LSTM{{.input_size = 2 * units, .hidden_size = units, .seq_len = seq, .bias_vectors = 1}});
    m.add("attention.query_layer", Linear{{.in_features = units, .out_features = units, .bias = false, .rows = seq}});
    m.add("attention.score_and_context",
          AdditiveAttention{{.query_len = seq, .memory_len = seq, .units = units, .memory_width = units}});
    for (std::int64_t i = 1; i < 8; ++i) {
        m.add(join<63>("decoder.layer", i, ".concat"), Concat{{.output = wide, .inputs = 2}});
        m.add(join<63>("decoder.layer", i, ".dropout"), Dropout{{.shape = wide, .probability = 0.2}});
        m.add(join<63>("decoder.layer", i),
              LSTM{{.input_size = 2 * units, .hidden_size = units, .seq_len = seq, .bias_vectors = 1}});
        if (i >= 2) m.add(join<63>("decoder.layer", i, ".residual"), Add{{.shape = narrow}});
    }
    m.add("decoder.output_projection",
          Linear{{.in_features = units, .out_features = vocabulary, .bias = false, .rows = seq}});
    m.add("decoder.softmax", Softmax{{.shape = Shape{seq, vocabulary}}});
    return m;
}

}  // namespace roofplan::models

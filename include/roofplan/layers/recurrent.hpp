// roofplan/layers/recurrent.hpp — LSTM (stacked, optionally bidirectional).
#pragma once

#include <roofplan/layers/detail_recurrent.hpp>

namespace roofplan::layers {

/// The LSTM cell: four gates.  Vector FLOPs per cell and step: the bias adds, 3 sigmoids and 2 tanh (4 FLOP each),
/// c = f·c + i·g (3), h = o·tanh(c) (1): 4·bias_vectors + 24.  Each step reads the gates and states (4 per cell)
/// and writes the gates and both states (6); backward-data 30 FLOP, 8 reads and 4 writes per cell; backward-weight
/// reads 5.
inline constexpr detail::RecurrentCosts lstm_cell{.who = "lstm", .gates = 4, .gate_count = "four",
                                                  .flops_note = "bias adds, 3 sigmoids, 2 tanh, the cell update",
                                                  .forward_flops = 24, .forward_reads = 4, .forward_writes = 6,
                                                  .backward_flops = 30, .backward_reads = 8, .backward_writes = 4,
                                                  .weight_grad_reads = 5};

/// An LSTM over `seq_len` steps: 4h·(in + h) MACs a step per layer and direction (detail::Recurrent has the rest).
/// bias_vectors: PyTorch keeps two bias vectors (b_ih, b_hh: 2), TensorFlow's LSTMCell one.
/// Example: `LSTM{{.input_size = 1024, .hidden_size = 1024, .seq_len = 1}}.params() == 8'396'800`.
using LSTM = detail::RecurrentLayer<lstm_cell>;

}  // namespace roofplan::layers

namespace roofplan {
using layers::LSTM;
}  // namespace roofplan

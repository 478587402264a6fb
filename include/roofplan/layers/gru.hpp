// roofplan/layers/gru.hpp — GRU (stacked, optionally bidirectional), the LSTM's three-gate sibling.
#pragma once

#include <roofplan/layers/detail_recurrent.hpp>

namespace roofplan::layers {

/// The GRU cell: three gates (reset, update, new).  Vector FLOPs per cell and step: the bias adds
/// (3·bias_vectors), two sigmoids and a tanh (4 FLOP each), r·(W_hn·h + b_hn) and its add (2),
/// h' = n + z·(h − n) (3): 3·bias_vectors + 17.  Each step reads 3 and writes 4 elements per cell; backward-data
/// 24 FLOP, 6 reads and 3 writes per cell; backward-weight reads 4.
inline constexpr detail::RecurrentCosts gru_cell{.who = "gru", .gates = 3, .gate_count = "three",
                                                 .flops_note = "bias adds, 2 sigmoids, a tanh, the reset product, "
                                                               "the update",
                                                 .forward_flops = 17, .forward_reads = 3, .forward_writes = 4,
                                                 .backward_flops = 24, .backward_reads = 6, .backward_writes = 3,
                                                 .weight_grad_reads = 4};

/// A GRU over `seq_len` steps: 3h·(in + h) MACs a step per layer and direction (detail::Recurrent has the rest);
/// PyTorch and ONNX keep two bias vectors, b_ih and b_hh.
/// Example: `GRU{{.input_size = 32, .hidden_size = 8, .seq_len = 10}}.params() == 1'008`.
using GRU = detail::RecurrentLayer<gru_cell>;

}  // namespace roofplan::layers

namespace roofplan {
using layers::GRU;
}  // namespace roofplan

// Elementwise loops that the C++ printer writes as explicit vectors (AVX-512's, or AVX2's in a program whose register
// tiles are AVX2's): a vectorized loop of one f32 store whose value calls exp, sigmoid or tanh (a SiLU's, a softmax's
// or an LSTM cell's). Found here, on lowered loop IR, so that
// the printer's choice can be tested as IR; what prints is the printer's (codegen/cpp_printer.cc, print_vector_map).
#pragma once

#include <optional>
#include <vector>

#include "ir/stmt.h"

namespace ingot {

// A vectorized loop's one store, out[i] = value, and the loads of value that move with the loop (each once, in order
// of first use), where every load that moves does so by one element per iteration.
struct VectorMap {
  const StoreNode* store = nullptr;
  std::vector<Expr> lane_loads;
  Expr guard;  // the condition around the store that does not use the loop's variable (a halo row's), or null
  int64_t store_step = 1;  // elements between the stores of two lanes (a channel tile's epilogue: a plane)
};

// The loop's VectorMap when: the loop is vectorized, not marked explicit, and its body is one store to an f32 buffer
// (or one such store under a condition that does not use the loop's variable) whose index moves by a positive constant
// per iteration (one element, or a scatter's stride); every load in the value that moves with the loop moves by one
// element (loads of the stored buffer only at the store's own index); what moves with the loop is f32 and made of such
// loads, constants, +, -, *, /, min, max and the calls exp, sigmoid and tanh; and one of those calls moves with the
// loop. Anything else (a select, a comparison or a cast that moves, another math function) leaves the loop to `omp
// simd`. std::nullopt otherwise.
std::optional<VectorMap> vector_map(const ForNode* loop);

// A vectorized loop that writes a tensor of bf16 pairs (workloads/bf16_products.h, `<conv>_pairs`) from two f32
// rows: pairs[2 p + n] = bf16(value_n) for the pair's n = 0, 1 (a loop of 2 inside), where each value is a load moving
// by one element per p, or a select between such a load and zero on a condition that does not move with p (a padded
// channel's). The printer converts 16 pixels of both rows at once and interleaves them (print_pair_map).
struct PairMap {
  const StoreNode* store = nullptr;  // inside the loop of 2, its index moving by 2 per p and 1 per n
  const ForNode* pair_loop = nullptr;
  std::vector<Expr> values;  // f32, the pair's n substituted: 0, then 1
};
std::optional<PairMap> pair_map(const ForNode* loop);

}  // namespace ingot

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

}  // namespace ingot

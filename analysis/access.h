// How a compute TE reads each of its inputs: the kind of index mapping (identity, broadcast, reduction,
// affine remap, non-affine, gather) and the region it touches (its footprint in elements and bytes). The
// element-level half of Souffle's global analysis; te_class.h turns the kinds into a TE class.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "ir/bound.h"
#include "ir/tensor.h"

namespace ingot {

// Ordered from the most to the least regular; a tensor read several times takes the last of its reads' kinds.
enum class AccessKind : uint8_t {
  kIdentity,   // indices are exactly the output's axes, in order, and the input has the output's shape
  kBroadcast,  // each index is a distinct output axis (in the output's order) over that whole axis, or 0 on a
               // dimension of extent 1; some output axis is not used
  kReduce,     // the indices use a reduce axis and the flattened offset is affine (GEMM, conv, row sums)
  kRemap,      // the flattened offset is an affine function of the axes, but not one of the above (transpose,
               // slice, reshape, concat and pad pieces, a gate slice of an LSTM)
  kNonAffine,  // the flattened offset stays non-affine after div/mod normalisation (roll via %, a clamp)
  kGather,     // an index reads a tensor: which element is read depends on data
};
const char* access_kind_name(AccessKind kind);  // "identity", "broadcast", "reduce", "remap", "non-affine", "gather"

// Everything one compute reads from one input tensor.
struct TensorAccess {
  Tensor tensor;
  AccessKind kind = AccessKind::kIdentity;
  int reads = 0;                 // read sites of this tensor in the body
  std::vector<IntRange> region;  // per dimension, the bounding interval of every element read
  int64_t elements = 0;          // elements read, each counted once (see footprint rules in docs/analysis.md)
  int64_t bytes = 0;             // elements * element size
};

// The accesses of a compute, one per input tensor in first-read order. Empty for a placeholder.
std::vector<TensorAccess> analyze_accesses(const Tensor& compute);

// The kind of one read (a TensorReadNode's indices) inside compute; exposed for tests and diagnostics.
AccessKind classify_read(const Tensor& compute, const Tensor& input, const std::vector<Expr>& indices);

// The reduction axes that some read walks with stride 1 while the innermost spatial axis (of more than one
// iteration) moves that read by more than one element: W[i, k] of y[i] = sum_k W[i, k] x[k], a reduction along memory.
// Vectorizing the spatial axis of such a compute gathers across rows; vectorizing the contiguous reduction axis does
// not.
std::set<std::string> reduction_axes_along_memory(const Tensor& compute);

// The ranges of the compute's spatial and reduce axes, [0, extent - 1].
VarRanges axis_ranges(const Tensor& compute);

}  // namespace ingot

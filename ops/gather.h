// Gather (ONNX Gather along one axis) with indices from an integer tensor, from constants, or from an index
// expression, and embedding lookup. One TE each; the read index is data-dependent or computed ("shuffle").
// The interpreter and the IR read int32 and int64 tensors, so index tensors may be placeholders of either.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace ingot {

// out[a..., i..., b...] = data[a..., indices[i...], b...] along axis; output shape = data.shape[:axis] +
// indices.shape + data.shape[axis+1:]. indices: an int32 or int64 tensor (placeholder or compute); negative
// indices count from the end (ONNX). Values outside [-n, n) are an error at evaluation time (the interpreter
// reports the out-of-bounds read).
Tensor gather(const std::string& name, const Tensor& data, const Tensor& indices, int64_t axis = 0);

// The same with constant indices of shape indices_shape (empty = a scalar index, which drops the axis);
// negative values count from the end, and each is checked against the dimension here. Indices forming an
// arithmetic progression (a single index, a range, a strided range) become an affine read; any other list
// becomes a balanced tree of selects over the flat index position (depth log2(n)), so keep such lists short
// (at most 4096 entries; longer lists throw: pass them as an index tensor or use gather_computed).
Tensor gather(const std::string& name, const Tensor& data, const std::vector<int64_t>& indices,
              const std::vector<int64_t>& indices_shape, int64_t axis = 0);

// Indices given by an expression of the index positions: out[a..., i..., b...] = data[a..., index_fn(i...),
// b...] with i ranging over index_shape. index_fn returns an int64 expression in [0, data.shape[axis]) (not
// checked before evaluation). A relative position bias [N, N, heads]: gather_computed(name, table, 0, {N, N},
// [&](auto& i) { return (i[0] / ws - i[1] / ws + ws - 1) * (2 * ws - 1) + i[0] % ws - i[1] % ws + ws - 1; }).
Tensor gather_computed(const std::string& name, const Tensor& data, int64_t axis,
                       const std::vector<int64_t>& index_shape,
                       const std::function<Expr(const std::vector<Expr>&)>& index_fn);

// Embedding lookup: table [V, D], ids an int32/int64 tensor of any shape -> [ids..., D]. gather on axis 0.
Tensor embedding(const std::string& name, const Tensor& table, const Tensor& ids);

}  // namespace ingot

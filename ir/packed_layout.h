// A packed layout of a tensor (a schedule's pack decision): one dimension cut into blocks, the block index outermost
// and the offset within a block innermost, the other dimensions in order between them. A weight [3072, 768] packed
// along dimension 0 by 48 is [64, 768, 48]: each panel of 48 rows that a GEMM's register tile walks lies contiguous,
// k-major. Lowering indexes the packed buffer; for an input the runtime packs the data once before the runs, a stored
// intermediate its stage writes packed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/host_tensor.h"

namespace ingot {

struct PackedLayout {
  std::string tensor;          // the placeholder, or the compute stored in the workspace
  std::vector<int64_t> shape;  // its shape as the program has it
  int64_t dim = 0;             // the dimension cut into blocks
  int64_t block = 1;           // divides shape[dim]
  // A dimension other than dim (a bf16 weight's k, workloads/bf16_products.h) whose pairs of elements stay innermost,
  // after the block: the pairs of a block's elements then lie side by side, as AVX-512 BF16's dot product of pairs
  // reads them; -1: none. Its extent is even.
  int64_t pair_dim = -1;

  // [shape[dim] / block, the other dimensions in order, block], or with a pair dimension [.., (its extent / 2 in its
  // place) .., block, 2].
  std::vector<int64_t> packed_shape() const;
  // The packed buffer's index of the element at `index` (the program's index, one per dimension).
  std::vector<Expr> packed_index(const std::vector<Expr>& index) const;
  // The data of `t` (of `shape`) in the packed layout. Throws std::invalid_argument for another shape.
  HostTensor pack(const HostTensor& t) const;
  bool operator==(const PackedLayout&) const = default;
  // "w [3072, 768] packed: dimension 0 in blocks of 48 -> [64, 768, 48]" (", pairs of dimension 1 innermost")
  std::string to_string() const;
};

}  // namespace ingot

#include "ir/packed_layout.h"

#include <stdexcept>

namespace ingot {

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "]";
}

}  // namespace

std::vector<int64_t> PackedLayout::packed_shape() const {
  std::vector<int64_t> out{shape.at(dim) / block};
  for (size_t d = 0; d < shape.size(); ++d)
    if (int64_t(d) != dim) out.push_back(int64_t(d) == pair_dim ? shape[d] / 2 : shape[d]);
  out.push_back(block);
  if (pair_dim >= 0) out.push_back(2);
  return out;
}

std::vector<Expr> PackedLayout::packed_index(const std::vector<Expr>& index) const {
  std::vector<Expr> out{index.at(dim) / Expr(block)};
  for (size_t d = 0; d < index.size(); ++d)
    if (int64_t(d) != dim) out.push_back(int64_t(d) == pair_dim ? index[d] / Expr(int64_t(2)) : index[d]);
  out.push_back(index[dim] % Expr(block));
  if (pair_dim >= 0) out.push_back(index[pair_dim] % Expr(int64_t(2)));
  return out;
}

HostTensor PackedLayout::pack(const HostTensor& t) const {
  if (t.shape() != shape)
    throw std::invalid_argument("packing '" + tensor + "': the data has shape " + shape_text(t.shape()) +
                                ", the program " + shape_text(shape));
  HostTensor out(t.dtype(), packed_shape());
  // Element by element: each source index's packed index (the packed shape's row-major order).
  const std::vector<int64_t> packed = packed_shape();
  auto copy = [&](auto element) {
    using T = decltype(element);
    const T* source = static_cast<const T*>(t.data());
    T* target = static_cast<T*>(out.data());
    std::vector<int64_t> index(shape.size(), 0);
    for (int64_t flat = 0; flat < t.num_elements(); ++flat) {
      int64_t at = 0;
      auto place = [&](int64_t extent, int64_t value) { at = at * extent + value; };
      size_t p = 0;
      place(packed[p++], index[dim] / block);
      for (size_t d = 0; d < shape.size(); ++d)
        if (int64_t(d) != dim) place(packed[p++], int64_t(d) == pair_dim ? index[d] / 2 : index[d]);
      place(packed[p++], index[dim] % block);
      if (pair_dim >= 0) place(2, index[pair_dim] % 2);
      target[at] = source[flat];
      for (size_t d = shape.size(); d-- > 0;) {  // the next source index, row-major
        if (++index[d] < shape[d]) break;
        index[d] = 0;
      }
    }
  };
  switch (dtype_bytes(t.dtype())) {
    case 1: copy(uint8_t{}); break;
    case 2: copy(uint16_t{}); break;
    case 4: copy(uint32_t{}); break;
    default: copy(uint64_t{}); break;
  }
  return out;
}

std::string PackedLayout::to_string() const {
  return tensor + " " + shape_text(shape) + " packed: dimension " + std::to_string(dim) + " in blocks of " +
         std::to_string(block) + " -> " + shape_text(packed_shape()) +
         (pair_dim >= 0 ? ", pairs of dimension " + std::to_string(pair_dim) + " innermost" : "");
}

}  // namespace ingot

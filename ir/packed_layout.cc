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
  const size_t middle = shape.size() - (pairs ? 1 : 0);
  for (size_t d = 0; d < middle; ++d)
    if (int64_t(d) != dim) out.push_back(shape[d]);
  out.push_back(block);
  if (pairs) out.push_back(shape.back());
  return out;
}

std::vector<Expr> PackedLayout::packed_index(const std::vector<Expr>& index) const {
  std::vector<Expr> out{index.at(dim) / Expr(block)};
  const size_t middle = index.size() - (pairs ? 1 : 0);
  for (size_t d = 0; d < middle; ++d)
    if (int64_t(d) != dim) out.push_back(index[d]);
  out.push_back(index[dim] % Expr(block));
  if (pairs) out.push_back(index.back());
  return out;
}

HostTensor PackedLayout::pack(const HostTensor& t) const {
  if (t.shape() != shape)
    throw std::invalid_argument("packing '" + tensor + "': the data has shape " + shape_text(t.shape()) +
                                ", the program " + shape_text(shape));
  HostTensor out(t.dtype(), packed_shape());
  // The source as [outer, shape[dim], inner] (the dimensions before and after dim flattened); the packed order is
  // block, outer, inner, offset in the block.
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
    if (d < dim) outer *= shape[d];
    if (d > dim) inner *= shape[d];
  }
  const int64_t extent = shape[dim], pair = pairs ? shape.back() : 1;
  auto copy = [&](auto element) {
    using T = decltype(element);
    const T* source = static_cast<const T*>(t.data());
    T* target = static_cast<T*>(out.data());
    for (int64_t b = 0; b < extent / block; ++b)
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; i += pair)
          for (int64_t e = 0; e < block; ++e)
            for (int64_t p = 0; p < pair; ++p) *target++ = source[(o * extent + b * block + e) * inner + i + p];
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
         std::to_string(block) + " -> " + shape_text(packed_shape()) + (pairs ? ", pairs innermost" : "");
}

}  // namespace ingot

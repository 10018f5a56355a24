// A packed layout moves every element of a tensor to the packed index that lowering reads it at.
#include "ir/packed_layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/simplify.h"

namespace ingot {
namespace {

HostTensor iota(const std::vector<int64_t>& shape) {
  HostTensor t(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.set(i, double(i));
  return t;
}

TEST(PackedLayout, ShapeHasTheBlocksOutermostAndTheOffsetInnermost) {
  PackedLayout w{"w", {6, 4}, 0, 2};
  EXPECT_EQ(w.packed_shape(), (std::vector<int64_t>{3, 4, 2}));
  EXPECT_EQ(w.to_string(), "w [6, 4] packed: dimension 0 in blocks of 2 -> [3, 4, 2]");
  PackedLayout last{"b", {4, 6}, 1, 3};
  EXPECT_EQ(last.packed_shape(), (std::vector<int64_t>{2, 4, 3}));
  PackedLayout whole{"t", {2, 3, 4}, 1, 3};  // a block of the whole dimension moves it innermost
  EXPECT_EQ(whole.packed_shape(), (std::vector<int64_t>{1, 2, 4, 3}));
}

// Every element lands where packed_index says lowering reads it, for each dimension of a 3-D tensor.
TEST(PackedLayout, PackPutsEveryElementAtItsPackedIndex) {
  const std::vector<int64_t> shape{4, 6, 2};
  const HostTensor t = iota(shape);
  for (int64_t dim = 0; dim < 3; ++dim)
    for (int64_t block : {int64_t(1), int64_t(2), shape[dim]}) {
      PackedLayout layout{"t", shape, dim, block};
      HostTensor packed = layout.pack(t);
      ASSERT_EQ(packed.shape(), layout.packed_shape());
      const std::vector<int64_t> ps = layout.packed_shape();
      for (int64_t a = 0; a < shape[0]; ++a)
        for (int64_t b = 0; b < shape[1]; ++b)
          for (int64_t c = 0; c < shape[2]; ++c) {
            std::vector<Expr> index = layout.packed_index({Expr(a), Expr(b), Expr(c)});
            int64_t flat = 0;
            for (size_t d = 0; d < index.size(); ++d) {
              Expr e = simplify(index[d]);
              ASSERT_NE(e.as<IntImmNode>(), nullptr) << to_string(e);
              flat = flat * ps[d] + e.as<IntImmNode>()->value;
            }
            EXPECT_EQ(packed.get(flat), t.get((a * shape[1] + b) * shape[2] + c))
                << "dim " << dim << " block " << block << " at " << a << "," << b << "," << c;
          }
    }
}

// A bf16 weight [out, in] packed by blocks of its outputs keeps each pair of k (dimension 1) innermost: the pairs of a
// block's outputs lie side by side, 2 elements apart, as vdpbf16ps reads them.
TEST(PackedLayout, PairsStayInnermostAfterTheBlock) {
  const std::vector<int64_t> shape{6, 4};
  PackedLayout w{"w", shape, 0, 3, 1};
  EXPECT_EQ(w.packed_shape(), (std::vector<int64_t>{2, 2, 3, 2}));
  EXPECT_EQ(w.to_string(),
            "w [6, 4] packed: dimension 0 in blocks of 3 -> [2, 2, 3, 2], pairs of dimension 1 innermost");
  const HostTensor t = iota(shape);
  HostTensor packed = w.pack(t);
  ASSERT_EQ(packed.shape(), w.packed_shape());
  for (int64_t o = 0; o < 6; ++o)
    for (int64_t k = 0; k < 4; ++k) {
      std::vector<Expr> index = w.packed_index({Expr(o), Expr(k)});
      int64_t flat = 0;
      for (size_t d = 0; d < index.size(); ++d) {
        Expr e = simplify(index[d]);
        ASSERT_NE(e.as<IntImmNode>(), nullptr) << to_string(e);
        flat = flat * w.packed_shape()[d] + e.as<IntImmNode>()->value;
      }
      EXPECT_EQ(flat, ((o / 3 * 2 + k / 2) * 3 + o % 3) * 2 + k % 2);
      EXPECT_EQ(packed.get(flat), t.get(o * 4 + k));
    }
  PackedLayout v{"v", {4, 6}, 1, 2, 0};  // [in, out] packed by outputs: pairs of dimension 0
  EXPECT_EQ(v.packed_shape(), (std::vector<int64_t>{3, 2, 2, 2}));
  EXPECT_EQ(v.pack(iota({4, 6})).get(1), 6.0);  // [0, 0, 0, 1]: in = 1, out = 0
}

TEST(PackedLayout, PackRefusesDataOfAnotherShape) {
  PackedLayout w{"w", {6, 4}, 0, 2};
  EXPECT_THAT(
      [&] {
        w.pack(iota({4, 6}));
      },
      testing::ThrowsMessage<std::invalid_argument>(
          testing::HasSubstr("packing 'w': the data has shape [4, 6], the program [6, 4]")));
}

}  // namespace
}  // namespace ingot

// A tensor copier rebuilds what it reads through each tensor's copy, made once per tensor however often it is read.
#include "ir/tensor_copier.h"

#include <gtest/gtest.h>

#include "ir/program.h"

namespace ingot {
namespace {

// Renames every tensor with a suffix, counting the copies it makes.
class Suffixer final : public TensorCopier {
 public:
  int made = 0;

 private:
  Tensor make_copy(const Tensor& t) override {
    ++made;
    if (t->is_placeholder()) return placeholder(t->name + "_2", t->shape, t->dtype);
    return with_body(t, t->name + "_2", mutate(t->body));
  }
};

TEST(TensorCopier, ReadsGoToEachTensorsCopyMadeOnce) {
  Tensor a = placeholder("a", {4});
  Tensor twice = compute("twice", {4}, [&](const std::vector<Expr>& i) { return read(a, {i[0]}) + read(a, {i[0]}); });
  Tensor both = compute("both", {4}, [&](const std::vector<Expr>& i) { return read(twice, {i[0]}) * read(a, {i[0]}); });
  Suffixer copier;
  Program copy({copier.copy_of(both)}, "copy");
  EXPECT_EQ(copier.made, 3);  // a, twice and both, each once
  EXPECT_EQ(tensor_definition(copy.find("twice_2")), "twice_2: f32[4] = compute(i) (a_2[i] + a_2[i])");
  EXPECT_EQ(tensor_definition(copy.find("both_2")), "both_2: f32[4] = compute(i) (twice_2[i] * a_2[i])");
  EXPECT_EQ(copier.copy_of(a).get(), copy.find("a_2").get());
  EXPECT_EQ(copier.made, 3);
}

}  // namespace
}  // namespace ingot

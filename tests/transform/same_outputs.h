// The numerical check every transform test makes: the rewritten program's outputs equal the original's on the
// same random inputs, through the interpreter.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "ir/interpreter.h"

namespace ingot {

// A rewrite may reorder a reduction's additions (partial sums), so the tolerance is relative with a small
// absolute floor.
inline void expect_same_outputs(const Program& before, const Program& after, const InputRanges& ranges = {}) {
  TensorMap inputs = random_inputs(before, 7, ranges);
  TensorMap expected = interpret(before, inputs);
  TensorMap actual = interpret(after, inputs);
  ASSERT_EQ(before.outputs().size(), after.outputs().size());
  for (size_t o = 0; o < before.outputs().size(); ++o) {
    const std::string& name = before.outputs()[o]->name;
    ASSERT_EQ(after.outputs()[o]->name, name);
    Comparison c = compare(actual.at(name), expected.at(name), 1e-5, 1e-5);
    EXPECT_TRUE(c.ok) << before.name() << " output " << name << ": " << c.message;
  }
}

}  // namespace ingot

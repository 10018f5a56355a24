#include "workloads/mmoe.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

// Each task's output [batch, 1], computed in double with plain loops from the placeholders alone: the MMoE
// equations written out directly, independent of the TE builders and ops/.
std::vector<HostTensor> reference_mmoe(const MmoeSizes& s, const TensorMap& in) {
  const HostTensor &x = in.at("x"), &ew = in.at("expert_weight"), &eb = in.at("expert_bias");
  const int64_t U = s.expert_units;
  std::vector<HostTensor> outputs;
  for (int64_t t = 0; t < s.tasks; ++t) {
    const std::string n = std::to_string(t);
    const HostTensor &gw = in.at("gate" + n + "_weight"), &gb = in.at("gate" + n + "_bias");
    const HostTensor &hw = in.at("tower" + n + "_hidden_weight"), &hb = in.at("tower" + n + "_hidden_bias");
    const HostTensor &ow = in.at("tower" + n + "_out_weight"), &ob = in.at("tower" + n + "_out_bias");
    HostTensor out(DType::kFloat32, {s.batch, 1});
    for (int64_t b = 0; b < s.batch; ++b) {
      std::vector<double> expert(size_t(s.experts * U));
      for (int64_t r = 0; r < s.experts * U; ++r) {
        double v = eb.get(r);
        for (int64_t k = 0; k < s.input; ++k) v += x.get(b * s.input + k) * ew.get(r * s.input + k);
        expert[size_t(r)] = std::max(v, 0.0);
      }
      std::vector<double> gate(size_t(s.experts));
      double total = 0;
      for (int64_t e = 0; e < s.experts; ++e) {
        double v = gb.get(e);
        for (int64_t k = 0; k < s.input; ++k) v += x.get(b * s.input + k) * gw.get(e * s.input + k);
        gate[size_t(e)] = std::exp(v);
        total += gate[size_t(e)];
      }
      std::vector<double> mix(size_t(U), 0.0);
      for (int64_t u = 0; u < U; ++u)
        for (int64_t e = 0; e < s.experts; ++e) mix[size_t(u)] += gate[size_t(e)] / total * expert[size_t(e * U + u)];
      double logit = ob.get(0);
      for (int64_t h = 0; h < s.tower_units; ++h) {
        double v = hb.get(h);
        for (int64_t u = 0; u < U; ++u) v += hw.get(h * U + u) * mix[size_t(u)];
        logit += ow.get(h) * std::max(v, 0.0);
      }
      out.set(b, 1.0 / (1.0 + std::exp(-logit)));
    }
    outputs.push_back(std::move(out));
  }
  return outputs;
}

void expect_matches_reference(const MmoeSizes& s, uint64_t seed) {
  Program p = mmoe(s);
  TensorMap in = random_inputs(p, seed);
  TensorMap out = interpret(p, in);
  std::vector<HostTensor> expected = reference_mmoe(s, in);
  ASSERT_EQ(p.outputs().size(), size_t(s.tasks));
  for (int64_t t = 0; t < s.tasks; ++t) {
    Comparison c = compare(out.at("task" + std::to_string(t)), expected[size_t(t)], 1e-4, 1e-5);
    EXPECT_TRUE(c.ok) << "task " << t << ": " << c.message;
  }
}

TEST(Mmoe, SmallMatchesPlainLoops) {
  for (uint64_t seed : {1u, 4u}) expect_matches_reference(MmoeSizes::small(), seed);
}

TEST(Mmoe, PaperSizeMatchesPlainLoops) {
  // Paper size is small enough for the interpreter; three tasks check that gates and towers are per task.
  expect_matches_reference(MmoeSizes{}, 9);
  expect_matches_reference(MmoeSizes{3, 20, 5, 6, 3, 4}, 2);
}

TEST(Mmoe, PaperSizeStructureAndParameters) {
  Program p = mmoe();
  EXPECT_EQ(p.name(), "mmoe");
  ASSERT_EQ(p.outputs().size(), 2u);
  EXPECT_EQ(p.outputs()[0]->name, "task0");
  EXPECT_EQ(p.outputs()[1]->shape, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(p.find("experts")->shape, (std::vector<int64_t>{1, 8 * 16}));
  EXPECT_EQ(p.find("gate1")->shape, (std::vector<int64_t>{1, 8}));
  EXPECT_EQ(p.find("mix0")->shape, (std::vector<int64_t>{1, 16}));
  // Experts 8 x (100 x 16 + 16), gates 2 x (100 x 8 + 8), towers 2 x (16 x 8 + 8 + 8 + 1).
  const int64_t expected = 8 * (100 * 16 + 16) + 2 * (100 * 8 + 8) + 2 * (16 * 8 + 8 + 8 + 1);
  EXPECT_EQ(expected, 14834);
  EXPECT_EQ(find_workload("mmoe")->parameter_count({}), expected);
  for (const std::string& w : mmoe_weight_names(MmoeSizes{})) EXPECT_TRUE(p.find(w)->is_placeholder()) << w;
  EXPECT_EQ(mmoe_weight_names(MmoeSizes{}).size(), 2u + 2 * 6);
}

TEST(Mmoe, RejectsNonPositiveSizes) {
  EXPECT_THROW(mmoe(MmoeSizes{1, 0, 8, 16, 2, 8}), std::invalid_argument);
  EXPECT_THROW(mmoe(MmoeSizes{1, 100, 8, 16, 0, 8}), std::invalid_argument);
}

}  // namespace
}  // namespace ingot

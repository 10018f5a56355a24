#include "analysis/reuse.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/program_analysis.h"
#include "workloads/lstm.h"

namespace ingot {
namespace {

using Axes = std::vector<Expr>;

// The readers' names, sorted: positions follow the program's topological order, which the tests do not fix.
std::vector<std::string> reader_names(const ProgramAnalysis& a, const std::string& tensor) {
  std::vector<std::string> names;
  const std::vector<int>& readers = a.find_tensor(tensor)->readers;
  EXPECT_TRUE(std::is_sorted(readers.begin(), readers.end())) << tensor;
  for (int p : readers) names.push_back(a.tes[size_t(p)].tensor->name);
  std::sort(names.begin(), names.end());
  return names;
}

TEST(Reuse, LstmWeightsAreReadByEveryStep) {
  const LstmSizes s = LstmSizes::small();  // 2 layers, 3 steps, hidden 8, input 8
  Program p = lstm(s);
  ProgramAnalysis a = analyze(p, *find_target("sm_80"));
  EXPECT_EQ(reader_names(a, "W0"), (std::vector<std::string>{"wx_l0_t0", "wx_l0_t1", "wx_l0_t2"}));
  EXPECT_EQ(reader_names(a, "U1"), (std::vector<std::string>{"uh_l1_t0", "uh_l1_t1", "uh_l1_t2"}));
  EXPECT_EQ(reader_names(a, "b0"),
            (std::vector<std::string>{"c_l0_t0", "c_l0_t1", "c_l0_t2", "h_l0_t0", "h_l0_t1", "h_l0_t2"}));
  // Every weight is read by more than one compute; without on-chip reuse W0 is loaded once per step.
  for (const std::string& w : lstm_weight_names(s)) EXPECT_TRUE(a.find_tensor(w)->read_by_several()) << w;
  const TensorReuse& w0 = *a.find_tensor("W0");
  EXPECT_EQ(w0.bytes, 32 * 8 * 4);
  EXPECT_EQ(w0.bytes_read, 3 * w0.bytes);
  EXPECT_EQ(w0.producer, -1);
  EXPECT_EQ(w0.live_first, w0.readers.front());
  EXPECT_EQ(w0.live_last, w0.readers.back());
  // X: each step reads its own row, so X is loaded once in all.
  EXPECT_EQ(a.find_tensor("X")->bytes_read, a.find_tensor("X")->bytes);
  // The zero state is shared by both layers' first step.
  EXPECT_EQ(reader_names(a, "h0"), (std::vector<std::string>{"uh_l0_t0", "uh_l1_t0"}));
  // A cell's c is read by its own h and by the next step's c; the last step's only by its h.
  EXPECT_EQ(reader_names(a, "c_l0_t0"), (std::vector<std::string>{"c_l0_t1", "h_l0_t0"}));
  EXPECT_EQ(reader_names(a, "c_l1_t2"), (std::vector<std::string>{"h_l1_t2"}));
  // The output lives to the end; its producer is the last compute.
  const TensorReuse& out = *a.find_tensor("h_l1_t2");
  EXPECT_TRUE(out.is_output);
  EXPECT_TRUE(out.readers.empty());
  EXPECT_EQ(out.producer, int(a.tes.size()) - 1);
  EXPECT_EQ(out.live_span(), 1);
}

// Single-head attention: Q, K and V all read X; S = Q K^T; O = S V.
Program attention(int64_t seq, int64_t dim) {
  Tensor X = placeholder("X", {seq, dim});
  Tensor Wq = placeholder("Wq", {dim, dim}), Wk = placeholder("Wk", {dim, dim}), Wv = placeholder("Wv", {dim, dim});
  auto project = [&](const std::string& name, const Tensor& W) {
    IterVar k = reduce_axis(dim, "k");
    return compute(name, {seq, dim}, [&](const Axes& i) { return sum(X(i[0], k.var) * W(k.var, i[1]), {k}); });
  };
  Tensor Q = project("Q", Wq), K = project("K", Wk), V = project("V", Wv);
  IterVar d = reduce_axis(dim, "k");
  Tensor S = compute("S", {seq, seq}, [&](const Axes& i) { return sum(Q(i[0], d.var) * K(i[1], d.var), {d}); });
  IterVar t = reduce_axis(seq, "k");
  Tensor O = compute("O", {seq, dim}, [&](const Axes& i) { return sum(S(i[0], t.var) * V(t.var, i[1]), {t}); });
  return Program({O}, "attention");
}

TEST(Reuse, QkvShareTheirInput) {
  Program p = attention(16, 8);
  ProgramAnalysis a = analyze(p, *find_target("sm_90"));
  std::vector<std::string> order;
  for (const TeAnalysis& te : a.tes) order.push_back(te.tensor->name);
  ASSERT_EQ(order, (std::vector<std::string>{"Q", "K", "S", "V", "O"}));
  const TensorReuse& x = *a.find_tensor("X");
  EXPECT_EQ(reader_names(a, "X"), (std::vector<std::string>{"K", "Q", "V"}));
  EXPECT_EQ(x.bytes, 16 * 8 * 4);
  EXPECT_EQ(x.bytes_read, 3 * x.bytes);
  EXPECT_EQ(x.live_first, 0);
  EXPECT_EQ(x.live_last, 3);
  EXPECT_EQ(x.live_span(), 4);
  // Nothing else is read twice.
  for (const TensorReuse& r : a.tensors) {
    if (r.tensor->name != "X") {
      EXPECT_FALSE(r.read_by_several()) << r.tensor->name;
    }
  }
  // V is produced after S but only O needs it: it lives over positions 3-4; Q over 0-2.
  EXPECT_EQ(a.find_tensor("V")->live_first, 3);
  EXPECT_EQ(a.find_tensor("V")->live_last, 4);
  EXPECT_EQ(a.find_tensor("Q")->live_span(), 3);
  // K is read transposed: a reduce access all the same, over the whole of K.
  EXPECT_EQ(a.find_te("S")->accesses[1].kind, AccessKind::kReduce);
  EXPECT_EQ(a.find_te("S")->accesses[1].bytes, 16 * 8 * 4);
}

TEST(Reuse, AccessListsMustCoverEveryCompute) {
  Program p = attention(4, 4);
  EXPECT_THROW(analyze_reuse(p, {}), std::invalid_argument);
}

}  // namespace
}  // namespace ingot

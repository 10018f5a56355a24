// Loop functions built by hand for the CPU backend's tests (printer, compiler, module), so that these tests
// do not depend on lowering. Each follows the loop semantics contract: stages separated by grid barriers,
// parallel loops outermost, vectorized loops innermost.
#pragma once

#include "ir/stmt.h"

namespace ingot::cpu_test {

inline Buffer global_buffer(const std::string& name, std::vector<int64_t> shape, DType dtype = DType::kFloat32) {
  return make_buffer(name, dtype, std::move(shape), MemoryScope::kGlobal);
}

// Two stages: t = 2 * x in parallel; after a grid barrier, one thread writes y[i] = t[3 - i] + (i - 2) / 2 + 1.5
// (a floor division of a possibly negative value).
inline LoopFunction tiny_two_stage_function() {
  Buffer x = global_buffer("x.in", {4}), y = global_buffer("y", {4}), t = global_buffer("t", {4});
  Expr i = var("i");
  Stmt stage1 = for_loop(i, 4, LoopKind::kParallel, store(t, i, load(x, i) * 2.0));
  Stmt stage2 =
      for_loop(i, 4, LoopKind::kSerial, store(y, i, load(t, 3 - i) + cast(DType::kFloat32, (i - 2) / 2) + 1.5));
  return LoopFunction{"tiny", {x}, {y}, {t}, seq({stage1, barrier(BarrierKind::kGrid), stage2})};
}

constexpr int64_t kMatmulM = 64, kMatmulN = 48, kMatmulK = 32;

// C[M, N] = A[M, K] * B[K, N]: a parallel loop over rows, a local accumulator row, vectorized loops over
// columns (zero-fill, multiply-add for each k, copy-out).
inline LoopFunction matmul_function() {
  const int64_t M = kMatmulM, N = kMatmulN, K = kMatmulK;
  Buffer a = global_buffer("A", {M, K}), b = global_buffer("B", {K, N}), c = global_buffer("C", {M, N});
  Buffer acc = make_buffer("acc", DType::kFloat32, {N}, MemoryScope::kLocal);
  Expr i = var("i"), j = var("j"), k = var("k");
  Stmt row =
      allocate(acc, seq({for_loop(j, N, LoopKind::kVectorized, store(acc, j, Expr(0.0))),
                         for_loop(k, K, LoopKind::kSerial,
                                  for_loop(j, N, LoopKind::kVectorized,
                                           store(acc, j, load(acc, j) + load(a, i * K + k) * load(b, k * N + j)))),
                         for_loop(j, N, LoopKind::kVectorized, store(c, i * N + j, load(acc, j)))}));
  return LoopFunction{"matmul", {a, b}, {c}, {}, for_loop(i, M, LoopKind::kParallel, row)};
}

constexpr int64_t kStagesH = 24, kStagesW = 40, kStagesN = kStagesH * kStagesW;

// Three stages over a workspace buffer t:
//   1. parallel over i:            t[i] = x[i] * x[i] + 1
//   2. blockIdx.y x blockIdx.x:    y[r * W + c] = t[N - 1 - (r * W + c)] - t[(r * W + c + N / 2) % N]
//      (reads elements other threads wrote in stage 1)
//   3. one thread:                 total[0] = sum of t, through a local accumulator
inline LoopFunction three_stage_function() {
  const int64_t H = kStagesH, W = kStagesW, N = kStagesN;
  Buffer x = global_buffer("x", {N}), y = global_buffer("y", {H, W}), total = global_buffer("total", {1});
  Buffer t = global_buffer("t", {N});
  Buffer acc = make_buffer("acc", DType::kFloat32, {1}, MemoryScope::kLocal);
  Expr i = var("i"), r = var("r"), c = var("c"), j = var("j");
  Stmt stage1 = for_loop(i, N, LoopKind::kParallel, store(t, i, load(x, i) * load(x, i) + 1.0));
  Expr flat = r * W + c;
  Stmt stage2 = for_loop(
      r, H, LoopKind::kBlockY,
      for_loop(c, W, LoopKind::kBlockX, store(y, flat, load(t, (N - 1) - flat) - load(t, (flat + N / 2) % N))));
  Stmt stage3 = allocate(
      acc, seq({store(acc, 0, Expr(0.0)), for_loop(j, N, LoopKind::kSerial, store(acc, 0, load(acc, 0) + load(t, j))),
                store(total, 0, load(acc, 0))}));
  return LoopFunction{"three_stages",
                      {x},
                      {y, total},
                      {t},
                      seq({stage1, barrier(BarrierKind::kGrid), stage2, barrier(BarrierKind::kGrid), stage3})};
}

}  // namespace ingot::cpu_test

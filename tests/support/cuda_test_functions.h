// Hand-built LoopFunctions in the shape lowering gives GPU kernels, shared by the CUDA printer, NVRTC and
// CUDA driver tests: a two-stage function with shared memory and grid barriers, and a tiled matmul.
#pragma once

#include "ir/stmt.h"

namespace ingot {

// Stage 1, per block b of 4: tile = X[b, :] * 2 in shared memory; block barrier; W[b, t] = tile[255 - t] + 1.
// Grid barrier. Stage 2, per block b: Y[b] = sum_k W[b, k] with a local accumulator, in thread 0.
// Grid barrier. Stage 3 (block 0, thread 0): Z[0] = max(Y[0], Y[3]).
inline LoopFunction two_stage_function() {
  Buffer x = make_buffer("X", DType::kFloat32, {4, 256}, MemoryScope::kGlobal);
  Buffer y = make_buffer("Y", DType::kFloat32, {4}, MemoryScope::kGlobal);
  Buffer z = make_buffer("Z", DType::kFloat32, {1}, MemoryScope::kGlobal);
  Buffer w = make_buffer("W", DType::kFloat32, {4, 256}, MemoryScope::kGlobal);
  Buffer tile = make_buffer("tile", DType::kFloat32, {256}, MemoryScope::kShared);
  Buffer acc = make_buffer("acc", DType::kFloat32, {1}, MemoryScope::kLocal);
  Expr b = var("b"), t = var("t"), k = var("k");

  Stmt stage1 = for_loop(
      b, 4, LoopKind::kBlockX,
      allocate(tile, seq({for_loop(t, 256, LoopKind::kThreadX, store(tile, t, load(x, b * 256 + t) * 2.0)),
                          barrier(BarrierKind::kBlock),
                          for_loop(t, 256, LoopKind::kThreadX, store(w, b * 256 + t, load(tile, 255 - t) + 1.0))})));
  Stmt stage2 = for_loop(
      b, 4, LoopKind::kBlockX,
      allocate(acc, seq({store(acc, 0, float_imm(0.0)),
                         for_loop(k, 256, LoopKind::kSerial, store(acc, 0, load(acc, 0) + load(w, b * 256 + k))),
                         store(y, b, load(acc, 0))})));
  Stmt stage3 = store(z, 0, maximum(load(y, 0), load(y, 3)));
  return LoopFunction{"two_stage",
                      {x},
                      {y, z},
                      {w},
                      seq({stage1, barrier(BarrierKind::kGrid), stage2, barrier(BarrierKind::kGrid), stage3})};
}

// C[32, 64] = A[32, 64] x B[64, 64] in 16x16 output tiles (blockIdx.y, blockIdx.x): the block stages its
// 16-row strip of A and 16-column strip of B in shared memory, each thread (threadIdx.y, threadIdx.x)
// accumulates one output in a local register over an unrolled inner k loop.
inline LoopFunction tiled_matmul_function() {
  constexpr int64_t kM = 32, kN = 64, kK = 64, kTile = 16;
  Buffer a = make_buffer("A", DType::kFloat32, {kM, kK}, MemoryScope::kGlobal);
  Buffer bm = make_buffer("B", DType::kFloat32, {kK, kN}, MemoryScope::kGlobal);
  Buffer c = make_buffer("C", DType::kFloat32, {kM, kN}, MemoryScope::kGlobal);
  Buffer a_tile = make_buffer("A_tile", DType::kFloat32, {kTile, kK}, MemoryScope::kShared);
  Buffer b_tile = make_buffer("B_tile", DType::kFloat32, {kK, kTile}, MemoryScope::kShared);
  Buffer acc = make_buffer("acc", DType::kFloat32, {1}, MemoryScope::kLocal);
  Expr by = var("by"), bx = var("bx"), ty = var("ty"), tx = var("tx"), kk = var("kk"), ko = var("ko"), ki = var("ki");
  auto threads = [&](Stmt body) {
    return for_loop(ty, kTile, LoopKind::kThreadY, for_loop(tx, kTile, LoopKind::kThreadX, body));
  };
  Stmt load_tiles = threads(for_loop(
      kk, kK / kTile, LoopKind::kSerial,
      seq({store(a_tile, ty * kK + kk * kTile + tx, load(a, (by * kTile + ty) * kK + kk * kTile + tx)),
           store(b_tile, (kk * kTile + ty) * kTile + tx, load(bm, (kk * kTile + ty) * kN + bx * kTile + tx))})));
  Expr k = ko * 4 + ki;
  Stmt compute = threads(allocate(
      acc,
      seq({store(acc, 0, float_imm(0.0)),
           for_loop(ko, kK / 4, LoopKind::kSerial,
                    for_loop(ki, 4, LoopKind::kUnrolled,
                             store(acc, 0, load(acc, 0) + load(a_tile, ty * kK + k) * load(b_tile, k * kTile + tx)))),
           store(c, (by * kTile + ty) * kN + bx * kTile + tx, load(acc, 0))})));
  Stmt body = for_loop(by, kM / kTile, LoopKind::kBlockY,
                       for_loop(bx, kN / kTile, LoopKind::kBlockX,
                                allocate(a_tile, allocate(b_tile, seq({load_tiles, barrier(BarrierKind::kBlock),
                                                                       compute, barrier(BarrierKind::kBlock)})))));
  return LoopFunction{"matmul", {a, bm}, {c}, {}, body};
}

}  // namespace ingot

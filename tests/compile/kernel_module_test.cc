#include "compile/kernel_module.h"

#include <gtest/gtest.h>

#include <cmath>

#include "codegen/cpp_printer.h"
#include "compile/cpp_compiler.h"
#include "tests/support/cpu_test_kernels.h"

namespace ingot {
namespace {

using cpu_test::global_buffer;

KernelModule compile_and_load(const LoopFunction& f) { return KernelModule(compile_cpp(print_cpp(f)).path, f); }

// (b) A parallel, vectorized matmul against a naive loop.
TEST(KernelModule, MatmulMatchesNaiveLoop) {
  const int64_t M = cpu_test::kMatmulM, N = cpu_test::kMatmulN, K = cpu_test::kMatmulK;
  KernelModule module = compile_and_load(cpu_test::matmul_function());
  HostTensor a = random_tensor(DType::kFloat32, {M, K}, 1), b = random_tensor(DType::kFloat32, {K, N}, 2);
  HostTensor c(DType::kFloat32, {M, N}), expected(DType::kFloat32, {M, N});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += a.f32()[i * K + k] * b.f32()[k * N + j];
      expected.f32()[i * N + j] = sum;
    }
  module.run({&a, &b}, {&c});
  Comparison cmp = compare(c, expected, 1e-5, 1e-6);
  EXPECT_TRUE(cmp.ok) << cmp.message;
}

// (c) Stages communicate through the workspace across a grid barrier, on several threads.
TEST(KernelModule, StagesSeeEachOthersWritesAcrossBarriers) {
  const int64_t H = cpu_test::kStagesH, W = cpu_test::kStagesW, N = cpu_test::kStagesN;
  KernelModule module = compile_and_load(cpu_test::three_stage_function());
  EXPECT_EQ(module.workspace_bytes(), N * 4);
  HostTensor x = random_tensor(DType::kFloat32, {N}, 7);
  std::vector<float> t(N);
  for (int64_t i = 0; i < N; ++i) t[i] = x.f32()[i] * x.f32()[i] + 1.0f;
  HostTensor expected_y(DType::kFloat32, {H, W}), expected_total(DType::kFloat32, {1});
  for (int64_t i = 0; i < N; ++i) expected_y.f32()[i] = t[N - 1 - i] - t[(i + N / 2) % N];
  float sum = 0;
  for (float v : t) sum += v;
  expected_total.f32()[0] = sum;

  for (int threads : {2, 1, 3}) {
    ASSERT_TRUE(module.set_num_threads(threads));
    HostTensor y(DType::kFloat32, {H, W}), total(DType::kFloat32, {1});
    module.run({&x}, {&y, &total});
    // The kernel may contract x * x + 1 into a fused multiply-add (g++ -march=native does), the test not.
    Comparison cy = compare(y, expected_y, 1e-6, 1e-6), ct = compare(total, expected_total, 1e-5, 0);
    EXPECT_TRUE(cy.ok) << threads << " threads: " << cy.message;
    EXPECT_TRUE(ct.ok) << threads << " threads: " << ct.message;
  }
}

// A function scheduled for a GPU (block and thread loops, a shared buffer, a block barrier, an unrolled
// loop) has the same meaning on the CPU: blocks become parallel iterations, threads serial loops.
TEST(KernelModule, GpuScheduledFunctionRunsOnTheCpu) {
  const int64_t blocks = 8, threads = 32;
  Buffer x = global_buffer("x", {blocks * threads}), y = global_buffer("y", {blocks * threads, 2});
  Buffer tile = make_buffer("tile", DType::kFloat32, {threads}, MemoryScope::kShared);
  Expr b = var("blockIdx.x"), t = var("threadIdx.x"), u = var("u");
  Stmt body = for_loop(
      b, blocks, LoopKind::kBlockX,
      allocate(tile, seq({for_loop(t, threads, LoopKind::kThreadX, store(tile, t, load(x, b * threads + t))),
                          barrier(BarrierKind::kBlock),
                          for_loop(t, threads, LoopKind::kThreadX,
                                   for_loop(u, 2, LoopKind::kUnrolled,
                                            store(y, (b * threads + t) * 2 + u,
                                                  load(tile, threads - 1 - t) + cast(DType::kFloat32, u))))})));
  LoopFunction f{"gpu_style", {x}, {y}, {}, body};
  std::string source = print_cpp(f);
  EXPECT_NE(source.find("#pragma GCC unroll 2"), std::string::npos) << source;
  EXPECT_NE(source.find("alignas(64) float tile[32];"), std::string::npos) << source;
  KernelModule module = compile_and_load(f);
  ASSERT_TRUE(module.set_num_threads(3));
  HostTensor tx = random_tensor(DType::kFloat32, {blocks * threads}, 5), ty(DType::kFloat32, {blocks * threads, 2});
  module.run({&tx}, {&ty});
  for (int64_t i = 0; i < blocks; ++i)
    for (int64_t j = 0; j < threads; ++j)
      for (int64_t k = 0; k < 2; ++k)
        EXPECT_EQ(ty.f32()[(i * threads + j) * 2 + k], tx.f32()[i * threads + threads - 1 - j] + float(k));
}

double floor_div(double a, double b) { return std::floor(a / b); }

// (d) Integer / and % round toward negative infinity for every sign combination, on i64 and i32, by the
// helper (loaded operands) and by plain C division (provably non-negative operands).
TEST(KernelModule, FloorDivisionAndModulo) {
  const std::vector<int64_t> xs = {-7, -6, -1, 0, 1, 5, 7, -8, 9, -9, 100, -100, 3, -3, 13, -13};
  const std::vector<int64_t> ds = {2, -2, 3, -3, 4, -4, 5, -5, 7, 7, -7, 9, 1, -1, 6, -6};
  const int64_t n = int64_t(xs.size());
  Buffer x = global_buffer("x", {n}, DType::kInt64), d = global_buffer("d", {n}, DType::kInt64);
  Buffer x32 = global_buffer("x32", {n}, DType::kInt32), d32 = global_buffer("d32", {n}, DType::kInt32);
  Buffer q = global_buffer("q", {n}, DType::kInt64), r = global_buffer("r", {n}, DType::kInt64);
  Buffer q32 = global_buffer("q32", {n}, DType::kInt32), r32 = global_buffer("r32", {n}, DType::kInt32);
  Buffer qc = global_buffer("qc", {n}, DType::kInt64), rc = global_buffer("rc", {n}, DType::kInt64);
  Buffer qi = global_buffer("qi", {n}, DType::kInt64), ri = global_buffer("ri", {n}, DType::kInt64);
  Expr i = var("i");
  Stmt body = seq({store(q, i, load(x, i) / load(d, i)), store(r, i, load(x, i) % load(d, i)),
                   store(q32, i, load(x32, i) / load(d32, i)), store(r32, i, load(x32, i) % load(d32, i)),
                   store(qc, i, load(x, i) / 4), store(rc, i, load(x, i) % -3), store(qi, i, (i - 8) / 3 + i / 3),
                   store(ri, i, (i - 8) % 3 + i % 3)});
  LoopFunction f{
      "floor", {x, d, x32, d32}, {q, r, q32, r32, qc, rc, qi, ri}, {}, for_loop(i, n, LoopKind::kVectorized, body)};
  KernelModule module = compile_and_load(f);

  HostTensor tx(DType::kInt64, {n}), td(DType::kInt64, {n}), tx32(DType::kInt32, {n}), td32(DType::kInt32, {n});
  for (int64_t k = 0; k < n; ++k) {
    tx.set(k, double(xs[k]));
    td.set(k, double(ds[k]));
    tx32.set(k, double(xs[k]));
    td32.set(k, double(ds[k]));
  }
  std::vector<HostTensor> outs;
  for (DType t : {DType::kInt64, DType::kInt64, DType::kInt32, DType::kInt32, DType::kInt64, DType::kInt64,
                  DType::kInt64, DType::kInt64})
    outs.emplace_back(t, std::vector<int64_t>{n});
  std::vector<HostTensor*> out_ptrs;
  for (HostTensor& t : outs) out_ptrs.push_back(&t);
  module.run({&tx, &td, &tx32, &td32}, out_ptrs);

  for (int64_t k = 0; k < n; ++k) {
    double a = double(xs[k]), b = double(ds[k]);
    SCOPED_TRACE("x = " + std::to_string(xs[k]) + ", d = " + std::to_string(ds[k]) + ", i = " + std::to_string(k));
    EXPECT_EQ(outs[0].get(k), floor_div(a, b));
    EXPECT_EQ(outs[1].get(k), a - b * floor_div(a, b));
    EXPECT_EQ(outs[2].get(k), floor_div(a, b));
    EXPECT_EQ(outs[3].get(k), a - b * floor_div(a, b));
    EXPECT_EQ(outs[4].get(k), floor_div(a, 4));
    EXPECT_EQ(outs[5].get(k), a + 3 * floor_div(a, -3));
    double ki = double(k);
    EXPECT_EQ(outs[6].get(k), floor_div(ki - 8, 3) + floor_div(ki, 3));
    EXPECT_EQ(outs[7].get(k), (ki - 8) - 3 * floor_div(ki - 8, 3) + (ki - 3 * floor_div(ki, 3)));
  }
}

// Denormal floats are flushed to zero inside the kernel (an operation on one costs a microcode assist on x86), in
// programs of one parallel region and of several, and the caller's floating-point mode is as it was afterwards.
TEST(KernelModule, FlushesDenormalsToZeroInsideTheKernelOnly) {
#if !defined(__SSE2__)
  GTEST_SKIP() << "the denormal flush is x86's (MXCSR)";
#endif
  const int64_t n = 32;
  Buffer x = global_buffer("x", {n}), w = global_buffer("w", {n});
  Buffer square = global_buffer("square", {n}), doubled = global_buffer("doubled", {n});
  Expr i = var("i");
  Stmt squares = for_loop(i, n, LoopKind::kParallel, store(square, i, load(x, i) * load(x, i)));
  Stmt doubles = for_loop(i, n, LoopKind::kParallel, store(doubled, i, load(w, i) * 2.0));
  for (BarrierKind between : {BarrierKind::kGrid, BarrierKind::kKernel}) {
    SCOPED_TRACE(between == BarrierKind::kGrid ? "one parallel region" : "one region per kernel");
    LoopFunction f{"denormals", {x, w}, {square, doubled}, {}, seq({squares, barrier(between), doubles})};
    KernelModule module = compile_and_load(f);
    HostTensor tx(DType::kFloat32, {n}), tw(DType::kFloat32, {n});
    HostTensor tsquare(DType::kFloat32, {n}), tdoubled(DType::kFloat32, {n});
    for (int64_t k = 0; k < n; ++k) {
      tx.f32()[k] = 1e-20f;  // squared: 1e-40, a denormal
      tw.f32()[k] = 1e-40f;  // a denormal input: doubled, still one
    }
    module.run({&tx, &tw}, {&tsquare, &tdoubled});
    for (int64_t k = 0; k < n; ++k) {
      EXPECT_EQ(tsquare.f32()[k], 0.0f) << k;
      EXPECT_EQ(tdoubled.f32()[k], 0.0f) << k;
    }
    volatile float tiny = 1e-20f;
    EXPECT_GT(tiny * tiny, 0.0f) << "the caller's thread still flushes denormals after the kernel";
  }
}

// (d) Each math function, min/max, select and integer abs against the standard library.
TEST(KernelModule, MathFunctionsMatchTheStandardLibrary) {
  const int64_t n = 64;
  Buffer x = global_buffer("x", {n}), k = global_buffer("k", {n}, DType::kInt64);
  Buffer y = global_buffer("y", {12, n}), ka = global_buffer("ka", {n}, DType::kInt64);
  Expr i = var("i");
  Expr v = load(x, i), pos = math::abs(v) + 0.5;
  std::vector<Expr> results = {
      math::exp(v),    math::log(pos),   math::tanh(v * 3.0), math::sigmoid(v * 4.0),
      math::sqrt(pos), math::rsqrt(pos), math::erf(v * 2.0),  math::pow(pos, v),
      math::abs(v),    minimum(v, 0.25), maximum(v, -0.25),   select(logical_and(gt(v, -0.5), lt(v, 0.5)), v * v, -v)};
  std::vector<Stmt> stores;
  for (size_t f = 0; f < results.size(); ++f) stores.push_back(store(y, int64_t(f) * n + i, results[f]));
  stores.push_back(store(ka, i, math::abs(load(k, i) - 4)));
  LoopFunction f{"math", {x, k}, {y, ka}, {}, for_loop(i, n, LoopKind::kVectorized, seq(stores))};
  KernelModule module = compile_and_load(f);

  HostTensor tx = random_tensor(DType::kFloat32, {n}, 3), tk = random_tensor(DType::kInt64, {n}, 4);
  HostTensor ty(DType::kFloat32, {12, n}), tka(DType::kInt64, {n});
  module.run({&tx, &tk}, {&ty, &tka});

  HostTensor expected(DType::kFloat32, {12, n});
  for (int64_t j = 0; j < n; ++j) {
    float a = tx.f32()[j], p = std::fabs(a) + 0.5f;
    float want[12] = {std::exp(a),  std::log(p),         std::tanh(a * 3.0f), 1.0f / (1.0f + std::exp(-(a * 4.0f))),
                      std::sqrt(p), 1.0f / std::sqrt(p), std::erf(a * 2.0f),  std::pow(p, a),
                      std::fabs(a), std::min(a, 0.25f),  std::max(a, -0.25f), (a > -0.5f && a < 0.5f) ? a * a : -a};
    for (int f2 = 0; f2 < 12; ++f2) expected.f32()[f2 * n + j] = want[f2];
    EXPECT_EQ(tka.i64()[j], std::abs(tk.i64()[j] - 4));
  }
  Comparison cmp = compare(ty, expected, 2e-6, 1e-7);
  EXPECT_TRUE(cmp.ok) << cmp.message;
}

KernelModule load_library_source(const std::string& source) { return KernelModule(compile_cpp(source).path); }

const char* kAbiPrefix = R"(#include <cstdint>
extern "C" int ingot_num_inputs(void) { return 1; }
extern "C" int ingot_num_outputs(void) { return 1; }
extern "C" int64_t ingot_workspace_bytes(void) { return 0; }
)";

void expect_load_error(const std::string& source, const std::string& fragment) {
  try {
    load_library_source(source);
    FAIL() << "loading must fail with a message containing '" << fragment << "'";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

// (g) Libraries that do not follow the ABI are refused with the reason.
TEST(KernelModule, RefusesLibrariesThatBreakTheAbi) {
  expect_load_error(std::string(kAbiPrefix) + "extern \"C\" int ingot_abi_version(void) { return 1; }\n",
                    "lacks the symbol 'ingot_run'");
  expect_load_error(std::string(kAbiPrefix) +
                        "extern \"C\" int ingot_abi_version(void) { return 2; }\n"
                        "extern \"C\" void ingot_run(void* const*, void*) {}\n",
                    "ABI version 2");
  try {
    KernelModule("/nonexistent/kernel.so");
    FAIL() << "a missing file must throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/kernel.so"), std::string::npos) << e.what();
  }
}

// (g) Wrong argument counts and sizes are refused before the kernel runs.
TEST(KernelModule, RefusesWrongArguments) {
  LoopFunction tiny = cpu_test::tiny_two_stage_function();
  std::string path = compile_cpp(print_cpp(tiny)).path;
  KernelModule module(path, tiny);
  EXPECT_EQ(module.num_inputs(), 1);
  EXPECT_EQ(module.num_outputs(), 1);
  HostTensor x(DType::kFloat32, {4}), y(DType::kFloat32, {4}), wrong(DType::kFloat32, {5});
  EXPECT_THROW(module.run(std::vector<void*>{x.data()}), std::invalid_argument);
  EXPECT_THROW(module.run({&x}, {}), std::invalid_argument);
  try {
    module.run({&wrong}, {&y});
    FAIL() << "a mis-sized tensor must throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'x.in'"), std::string::npos) << e.what();
  }
  LoopFunction two_inputs = cpu_test::matmul_function();
  try {
    KernelModule mismatched(path, two_inputs);
    FAIL() << "a library for another function must be refused";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("1 inputs but function 'matmul' needs 2"), std::string::npos) << e.what();
  }

  for (int k = 0; k < 4; ++k) x.f32()[k] = float(k);
  module.run({&x}, {&y});
  for (int k = 0; k < 4; ++k) EXPECT_EQ(y.f32()[k], 2.0f * float(3 - k) + std::floor((k - 2) / 2.0f) + 1.5f);
}

// pack_inputs replaces each packed input by its packed copy and passes the others as they are.
TEST(KernelModule, PackInputsPacksTheFunctionsPackedInputsOnly) {
  LoopFunction f = cpu_test::matmul_function();
  const Buffer& b = f.inputs[1];
  ASSERT_EQ(b->shape.size(), 2u);
  f.packed_inputs.push_back(PackedLayout{b->name, b->shape, 0, b->shape[0]});
  HostTensor x(DType::kFloat32, f.inputs[0]->shape), w(DType::kFloat32, b->shape);
  for (int64_t i = 0; i < w.num_elements(); ++i) w.set(i, double(i));
  std::vector<HostTensor> packed;
  std::vector<const HostTensor*> passed = pack_inputs(f, {&x, &w}, packed);
  ASSERT_EQ(passed.size(), 2u);
  EXPECT_EQ(passed[0], &x);
  ASSERT_EQ(packed.size(), 1u);
  EXPECT_EQ(passed[1], &packed[0]);
  EXPECT_EQ(packed[0].shape(), f.packed_inputs[0].packed_shape());
  // A block of the whole dimension moves it innermost: a transpose.
  EXPECT_EQ(packed[0].get(1), w.get(b->shape[1]));
  EXPECT_THROW(pack_inputs(f, {&x}, packed), std::invalid_argument);
}

TEST(KernelModule, MovesOwnership) {
  LoopFunction tiny = cpu_test::tiny_two_stage_function();
  KernelModule first = compile_and_load(tiny);
  KernelModule second = std::move(first);
  HostTensor x(DType::kFloat32, {4}), y(DType::kFloat32, {4});
  second.run({&x}, {&y});
  EXPECT_EQ(y.f32()[0], -1.0f + 1.5f);
  EXPECT_THROW(first.run(std::vector<void*>{x.data(), y.data()}), std::logic_error);  // NOLINT(bugprone-use-after-move)
}

}  // namespace
}  // namespace ingot

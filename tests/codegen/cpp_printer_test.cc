#include "codegen/cpp_printer.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <iostream>
#include <limits>
#include <regex>
#include <set>

#include "analysis/strategies.h"
#include "analysis/target.h"
#include "codegen/pipeline.h"
#include "compile/cpp_compiler.h"
#include "compile/kernel_module.h"
#include "lower/vector_tiles.h"
#include "ops/conv.h"
#include "ops/elementwise.h"
#include "ops/linear.h"
#include "space/strategy_schedule.h"
#include "tests/support/cpu_test_kernels.h"
#include "tests/support/fixed_targets.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

using cpu_test::global_buffer;

// The whole generated source for a tiny function, so that any change to the printer's output shows here
// as a diff.
TEST(CppPrinter, PrintsTinyTwoStageFunctionExactly) {
  const char* expected = R"(// ingot CPU kernel 'tiny', generated from its loop IR by the C++ printer.
// C ABI version 1: ingot_run(args, workspace) with args = inputs then outputs:
//   args[0]: f32[4] x.in (input)
//   args[1]: f32[4] y (output)
// workspace: 64 bytes, 64-byte aligned
//   +0: f32[4] t (workspace)

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <omp.h>

#if defined(__SSE2__)
#include <xmmintrin.h>
struct ingot_flush_denormals {
  const unsigned saved = _mm_getcsr();
  ingot_flush_denormals() { _mm_setcsr(saved | 0x8040u); }  // FTZ (bit 15) and DAZ (bit 6)
  ~ingot_flush_denormals() { _mm_setcsr(saved); }
};
#else
struct ingot_flush_denormals {
  ingot_flush_denormals() {}
};
#endif

// Helpers: integer / and % round toward negative infinity; min and max pick as std::min and std::max do.
static inline int64_t ingot_floordiv_i64(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

extern "C" int ingot_abi_version(void) { return 1; }
extern "C" int ingot_num_inputs(void) { return 1; }
extern "C" int ingot_num_outputs(void) { return 1; }
extern "C" int64_t ingot_workspace_bytes(void) { return 64; }

__attribute__((noinline)) static void ingot_stage_0(const float* x_in, float* t) {
  #pragma omp for schedule(static) nowait
  for (int64_t i = 0; i < 4; ++i) {
    t[i] = x_in[i] * 2.0f;
  }
}

__attribute__((noinline)) static void ingot_stage_1(const float* t, float* y) {
  for (int64_t i = 0; i < 4; ++i) {
    y[i] = t[3 - i] + float(ingot_floordiv_i64(i - 2, 2)) + 1.5f;
  }
}

extern "C" void ingot_run(void* const* args, void* workspace) {
  #pragma omp parallel
  {
    const ingot_flush_denormals ingot_denormals_flushed;
    const float* x_in = static_cast<const float*>(args[0]);
    float* y = static_cast<float*>(args[1]);
    float* t = reinterpret_cast<float*>(static_cast<char*>(workspace) + 0);
    ingot_stage_0(x_in, t);
    #pragma omp barrier
    #pragma omp single nowait
    {
      ingot_stage_1(t, y);
    }
  }
}
)";
  EXPECT_EQ(print_cpp(cpu_test::tiny_two_stage_function()), expected);
}

// With profile marks, thread 0 notes the time at the region's start, after each grid barrier and, after one more
// barrier, at its end: one mark more than the function has stage intervals; the store holds exactly that many.
TEST(CppPrinter, ProfileMarksBoundEachStageInterval) {
  CppPrintOptions options;
  options.profile = true;
  std::string source = print_cpp(cpu_test::tiny_two_stage_function(), options);
  const char* region = R"(    float* t = reinterpret_cast<float*>(static_cast<char*>(workspace) + 0);
    ingot_profile_mark();
    ingot_stage_0(x_in, t);
    #pragma omp barrier
    ingot_profile_mark();
    #pragma omp single nowait
    {
      ingot_stage_1(t, y);
    }
    #pragma omp barrier
    ingot_profile_mark();
  }
}
)";
  EXPECT_NE(source.find(region), std::string::npos) << source;
  EXPECT_NE(source.find("static double ingot_profile_seconds[3];"), std::string::npos) << source;
  EXPECT_NE(source.find("extern \"C\" int ingot_profile_capacity(void) { return 3; }"), std::string::npos) << source;
  EXPECT_EQ(print_cpp(cpu_test::tiny_two_stage_function()).find("ingot_profile"), std::string::npos);
}

// Stages that differ only in the buffers they touch share one function, called with each stage's buffers;
// a stage that differs in anything else (here a constant) gets its own.
TEST(CppPrinter, PrintsIdenticalStagesOnce) {
  Buffer x = global_buffer("x", {8}), a = global_buffer("a", {8}), b = global_buffer("b", {8}),
         c = global_buffer("c", {8});
  Expr i = var("i"), j = var("j");
  // Each reads its input reversed, so that no iteration reads only what the same iteration of the stage before
  // wrote: the stages stay apart (merge_parallel_stages.h).
  Stmt first = for_loop(i, 8, LoopKind::kParallel, store(a, i, load(x, 7 - i) * 2.0));
  Stmt same = for_loop(j, 8, LoopKind::kParallel, store(b, j, load(a, 7 - j) * 2.0));
  Stmt other = for_loop(i, 8, LoopKind::kParallel, store(c, i, load(b, 7 - i) * 3.0));
  LoopFunction f{
      "chain", {x}, {c}, {a, b}, seq({first, barrier(BarrierKind::kGrid), same, barrier(BarrierKind::kGrid), other})};
  std::string source = print_cpp(f);
  std::regex definition("static void (ingot_stage_[0-9]+)\\(");
  std::vector<std::string> functions;
  for (std::sregex_iterator it(source.begin(), source.end(), definition), end; it != end; ++it)
    functions.push_back((*it)[1]);
  EXPECT_EQ(functions, (std::vector<std::string>{"ingot_stage_0", "ingot_stage_1"}));
  EXPECT_NE(source.find("    ingot_stage_0(x, a);\n"), std::string::npos) << source;
  EXPECT_NE(source.find("    ingot_stage_0(a, b);\n"), std::string::npos) << source;
  EXPECT_NE(source.find("    ingot_stage_1(b, c);\n"), std::string::npos) << source;
}

TEST(CppPrinter, MarksVectorizedLoopsSimdAndReportsTheirLines) {
  PrintedCpp printed = print_cpp_with_lines(cpu_test::matmul_function());
  ASSERT_EQ(printed.vectorized_loops.size(), 3u);
  std::vector<std::string> lines;
  for (size_t start = 0; start < printed.source.size();) {
    size_t nl = printed.source.find('\n', start);
    lines.push_back(printed.source.substr(start, nl - start));
    start = nl + 1;
  }
  for (SourceLines loop : printed.vectorized_loops) {
    ASSERT_GE(loop.first, 1);
    ASSERT_LE(loop.last, int(lines.size()));
    EXPECT_NE(lines[loop.first - 1].find("#pragma omp simd"), std::string::npos) << lines[loop.first - 1];
    EXPECT_NE(lines[loop.first].find("for (int64_t j = 0; j < 48; ++j) {"), std::string::npos);
    EXPECT_EQ(lines[loop.last - 1].find_first_not_of(' '), lines[loop.first].find_first_not_of(' '));
    EXPECT_EQ(lines[loop.last - 1].substr(lines[loop.last - 1].find_first_not_of(' ')), "}");
  }
  EXPECT_NE(printed.source.find("alignas(64) float acc[48];"), std::string::npos);
}

// (e) g++ -O3 -march=native must really vectorize every loop the printer marks simd: its optimization
// report names a line inside each such loop.
TEST(CppPrinter, CompilerVectorizesEveryVectorizedLoop) {
  PrintedCpp printed = print_cpp_with_lines(cpu_test::matmul_function());
  CompileOptions options;
  options.flags += " -fopt-info-vec-optimized";
  CompiledLibrary library = compile_cpp(printed.source, options);
  std::set<int> vectorized_lines;
  std::regex report(R"(\.cc:(\d+):\d+: optimized: loop vectorized)");
  for (std::sregex_iterator it(library.log.begin(), library.log.end(), report), end; it != end; ++it)
    vectorized_lines.insert(std::stoi((*it)[1]));
  ASSERT_FALSE(vectorized_lines.empty()) << "no vectorization report in the compiler log:\n" << library.log;
  for (SourceLines loop : printed.vectorized_loops) {
    auto hit = vectorized_lines.lower_bound(loop.first);
    EXPECT_TRUE(hit != vectorized_lines.end() && *hit <= loop.last)
        << "the loop on lines " << loop.first << "-" << loop.last << " was not vectorized; log:\n"
        << library.log << "\nsource:\n"
        << printed.source;
  }
}

TEST(CppPrinter, LeavesLoopInvariantStoresOutOfSimd) {
  Buffer x = global_buffer("x", {8}), s = global_buffer("s", {1});
  Expr k = var("k");
  // The last iteration's value is stored, not a fold of all of them: no simd reduction either.
  LoopFunction f{"last", {x}, {s}, {}, for_loop(k, 8, LoopKind::kVectorized, store(s, 0, load(x, k) * 2.0))};
  PrintedCpp printed = print_cpp_with_lines(f);
  EXPECT_TRUE(printed.vectorized_loops.empty());
  EXPECT_EQ(printed.source.find("omp simd"), std::string::npos);
  EXPECT_NE(printed.source.find("not marked simd"), std::string::npos);
}

// Compiles printed code that marks one loop vectorized and checks that g++ -O3 reports that loop vectorized.
// extra_flags: -mno-avx512f compiles the `omp simd` loop that stands where AVX-512 is not (a vector map's).
CompiledLibrary compile_expecting_one_vectorized_loop(const PrintedCpp& printed, const std::string& extra_flags = "") {
  EXPECT_EQ(printed.vectorized_loops.size(), 1u);
  CompileOptions options;
  options.flags += " -fopt-info-vec-optimized" + extra_flags;
  CompiledLibrary library = compile_cpp(printed.source, options);
  std::regex report(R"(\.cc:(\d+):\d+: optimized: loop vectorized)");
  bool vectorized = false;
  for (std::sregex_iterator it(library.log.begin(), library.log.end(), report), end; it != end; ++it) {
    int line = std::stoi((*it)[1]);
    for (SourceLines loop : printed.vectorized_loops) vectorized |= line >= loop.first && line <= loop.last;
  }
  EXPECT_TRUE(vectorized) << library.log << "\n" << printed.source;
  return library;
}

// Runs a compiled y[r] = sum_k W[r, k] x[k] (inputs W, x; output y) and checks every row. Small integers in W
// and x keep every partial sum exact in float, so any summation order gives the same answer.
void expect_exact_gemv(const std::string& library, const LoopFunction& f, int64_t rows, int64_t n) {
  KernelModule module(library, f);
  HostTensor w(DType::kFloat32, {rows, n}), x(DType::kFloat32, {n}), y(DType::kFloat32, {rows});
  for (int64_t i = 0; i < rows * n; ++i) w.f32()[i] = float(i % 7) - 3.0f;
  for (int64_t i = 0; i < n; ++i) x.f32()[i] = float(i % 3);
  module.run({&w, &x}, {&y});
  for (int64_t i = 0; i < rows; ++i) {
    double expected = 0;
    for (int64_t j = 0; j < n; ++j) expected += double(w.f32()[i * n + j]) * x.f32()[j];
    EXPECT_EQ(y.f32()[i], float(expected)) << "row " << i;
  }
}

// A vectorized loop that folds into one element (a vectorized reduction axis) becomes an OpenMP simd reduction
// over a local accumulator; g++ vectorizes it and the sum is right.
TEST(CppPrinter, FoldsAVectorizedReductionLoopIntoASimdReduction) {
  const int64_t rows = 4, n = 256;
  Buffer w = global_buffer("W", {rows, n}), x = global_buffer("x", {n}), y = global_buffer("y", {rows});
  Expr r = var("r"), k = var("k");
  Stmt body =
      for_loop(r, rows, LoopKind::kSerial,
               seq({store(y, r, Expr(0.0)),
                    for_loop(k, n, LoopKind::kVectorized, store(y, r, load(y, r) + load(w, r * n + k) * load(x, k)))}));
  LoopFunction f{"gemv", {w, x}, {y}, {}, body};
  PrintedCpp printed = print_cpp_with_lines(f);
  EXPECT_NE(printed.source.find("    {\n"
                                "      float ingot_acc = y[r];\n"
                                "      #pragma omp simd reduction(+:ingot_acc)\n"
                                "      for (int64_t k = 0; k < 256; ++k) {\n"
                                "        ingot_acc = ingot_acc + W[r * 256 + k] * x[k];\n"
                                "      }\n"
                                "      y[r] = ingot_acc;\n"
                                "    }\n"),
            std::string::npos)
      << printed.source;
  expect_exact_gemv(compile_expecting_one_vectorized_loop(printed).path, f, rows, n);
}

// Under an unrolled loop the fold is printed without `#pragma GCC unroll`: g++ 12 unrolls first and leaves every copy
// of an `omp simd reduction` loop scalar (a BERT FFN candidate ran 195 ms so, 10 ms without the pragma). An unrolled
// loop around a plain simd loop keeps its pragma.
TEST(CppPrinter, AnUnrolledLoopAroundASimdReductionIsNotForcedToUnroll) {
  const int64_t rows = 4, n = 256;
  Buffer w = global_buffer("W", {rows, n}), x = global_buffer("x", {n}), y = global_buffer("y", {rows});
  Expr r = var("r"), k = var("k");
  Stmt body =
      for_loop(r, rows, LoopKind::kUnrolled,
               seq({store(y, r, Expr(0.0)),
                    for_loop(k, n, LoopKind::kVectorized, store(y, r, load(y, r) + load(w, r * n + k) * load(x, k)))}));
  LoopFunction f{"gemv", {w, x}, {y}, {}, body};
  PrintedCpp printed = print_cpp_with_lines(f);
  EXPECT_EQ(printed.source.find("#pragma GCC unroll"), std::string::npos) << printed.source;
  EXPECT_NE(printed.source.find("  for (int64_t r = 0; r < 4; ++r) {\n"
                                "    y[r] = 0.0f;\n"
                                "    {\n"
                                "      float ingot_acc = y[r];\n"
                                "      #pragma omp simd reduction(+:ingot_acc)\n"),
            std::string::npos)
      << printed.source;
  expect_exact_gemv(compile_expecting_one_vectorized_loop(printed).path, f, rows, n);

  Buffer z = global_buffer("z", {rows, n});
  Stmt scale = for_loop(r, rows, LoopKind::kUnrolled,
                        for_loop(k, n, LoopKind::kVectorized, store(z, r * n + k, load(w, r * n + k) * load(x, k))));
  const std::string plain = print_cpp_with_lines(LoopFunction{"scale", {w, x}, {z}, {}, scale}).source;
  EXPECT_NE(plain.find("  #pragma GCC unroll 4\n"
                       "  for (int64_t r = 0; r < 4; ++r) {\n"
                       "    #pragma omp simd\n"),
            std::string::npos)
      << plain;
}

// Unrolled loops along one path make at most 64 copies of a body: the innermost keep their whole unroll, loops
// further out unroll by what is left (16 around 4), or not at all. g++ took 54 s and more than 300 s to compile
// sampled matmul schedules with 256 x 4 and three nested unrolls. The partly unrolled nest still computes the product.
TEST(CppPrinter, NestedUnrollPragmasMakeAtMost64Copies) {
  const int64_t a = 8, b = 256, c = 4, n = 8;
  Buffer x = global_buffer("x", {b, c, n}), y = global_buffer("y", {a, b, c, n});
  Expr i = var("i"), j = var("j"), k = var("k"), l = var("l");
  Expr at = ((j * c) + k) * n + l;
  Stmt body = for_loop(i, a, LoopKind::kUnrolled,
                       for_loop(j, b, LoopKind::kUnrolled,
                                for_loop(k, c, LoopKind::kUnrolled,
                                         for_loop(l, n, LoopKind::kVectorized,
                                                  store(y, i * (b * c * n) + at, load(x, at) * Expr(2.0))))));
  LoopFunction f{"nested", {x}, {y}, {}, body};
  PrintedCpp printed = print_cpp_with_lines(f);
  EXPECT_NE(printed.source.find("  for (int64_t i = 0; i < 8; ++i) {\n"
                                "    #pragma GCC unroll 16\n"
                                "    for (int64_t j = 0; j < 256; ++j) {\n"
                                "      #pragma GCC unroll 4\n"
                                "      for (int64_t k = 0; k < 4; ++k) {\n"),
            std::string::npos)
      << printed.source;
  EXPECT_EQ(printed.source.find("#pragma GCC unroll 8"), std::string::npos) << printed.source;
  CompiledLibrary library = compile_cpp(printed.source);
  HostTensor in(DType::kFloat32, {b, c, n}), out(DType::kFloat32, {a, b, c, n});
  for (int64_t e = 0; e < in.num_elements(); ++e) in.set(e, double(e % 97) - 40.0);
  KernelModule module(library.path, f);
  module.run({&in}, {&out});
  for (int64_t e = 0; e < out.num_elements(); ++e) ASSERT_EQ(out.get(e), 2.0 * in.get(e % in.num_elements())) << e;
}

// A split's tail guard on a vectorized loop becomes its bound, the other conjuncts stay a condition: g++ 12 vectorizes
// the loop whole, math call and the load the lanes share included, which under the guard it left scalar ('no vectype
// for MASK_LOAD').
TEST(CppPrinter, ASplitsTailGuardOnAVectorizedLoopBecomesItsBound) {
  const int64_t rows = 8, n = 56, tile = 44;
  Buffer x = global_buffer("x", {rows, n}), w = global_buffer("w", {rows}), y = global_buffer("y", {rows, n});
  Expr i = var("i"), mo = var("m.o"), mi = var("m.i");
  Expr column = mi + mo * tile;
  Stmt write = store(y, i * n + column, math::exp(load(x, i * n + column)) * load(w, i));
  Stmt body =
      for_loop(i, rows, LoopKind::kSerial,
               for_loop(mo, 2, LoopKind::kSerial,
                        for_loop(mi, tile, LoopKind::kVectorized,
                                 if_then_else(logical_and(lt(i, Expr(rows - 1)), lt(column, Expr(n))), write))));
  LoopFunction f{"tail", {x, w}, {y}, {}, body};
  PrintedCpp printed = print_cpp_with_lines(f);
  EXPECT_NE(printed.source.find("for (int64_t m_i = 0; m_i < ingot_min_i64(44, "), std::string::npos) << printed.source;
  EXPECT_NE(printed.source.find("  if (i < 7) {"), std::string::npos) << printed.source;
  CompiledLibrary library = compile_expecting_one_vectorized_loop(printed);
  KernelModule module(library.path, f);
  HostTensor in(DType::kFloat32, {rows, n}), weight(DType::kFloat32, {rows}), out(DType::kFloat32, {rows, n});
  for (int64_t e = 0; e < rows * n; ++e) in.f32()[e] = float(e % 13) * 0.25f - 1.5f;
  for (int64_t r = 0; r < rows; ++r) weight.f32()[r] = float(r) + 0.5f;
  for (int64_t e = 0; e < rows * n; ++e) out.f32()[e] = -7.0f;  // what the guard leaves alone stays
  module.run({&in, &weight}, {&out});
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < n; ++c) {
      const float got = out.f32()[r * n + c];
      if (r == rows - 1) {
        EXPECT_EQ(got, -7.0f) << r << ", " << c;
      } else {
        const float want = std::exp(in.f32()[r * n + c]) * weight.f32()[r];
        EXPECT_NEAR(got, want, 1e-6f * std::abs(want)) << r << ", " << c;
      }
    }
}

// Compiles the `omp simd` loops that stand where AVX-512 is not (a vector map's, see VectorMaps below).
const std::string kWithoutAvx512 = " -mno-avx512f";

// A softmax row: m[r] is stored, then a simd loop computes exp(x - m[r]). g++ 12 left that loop scalar ("latch block
// not empty": it cannot keep m[r] out of the loop past the stores it may alias), calling scalar expf per element; the
// printer reads m[r] once into a const before the loop, and the loop vectorizes (libmvec's expf) and computes the same.
TEST(CppPrinter, ALoopInvariantLoadBesideAMathCallIsReadOnceSoTheLoopVectorizes) {
  const int64_t rows = 8, n = 40;
  Buffer x = global_buffer("x", {rows, n}), m = global_buffer("m", {rows}), e = global_buffer("e", {rows, n});
  Expr r = var("r"), l = var("l");
  Stmt body = for_loop(
      r, rows, LoopKind::kSerial,
      seq({store(m, r, load(x, r * n) * 0.5),
           for_loop(l, n, LoopKind::kVectorized, store(e, r * n + l, math::exp(load(x, r * n + l) - load(m, r))))}));
  LoopFunction f{"softmax_row", {x}, {m, e}, {}, body};
  PrintedCpp printed = print_cpp_with_lines(f);
  std::smatch hoisted;
  ASSERT_TRUE(std::regex_search(printed.source, hoisted, std::regex(R"(const float (ingot_invariant\d+) = m\[r\];)")))
      << printed.source;
  EXPECT_NE(printed.source.find("ingot_exp_f32(x[r * 40 + l] - " + hoisted[1].str() + ")"), std::string::npos)
      << printed.source;
  CompiledLibrary library = compile_expecting_one_vectorized_loop(printed, kWithoutAvx512);
  KernelModule module(library.path, f);
  HostTensor in(DType::kFloat32, {rows, n}), max(DType::kFloat32, {rows}), out(DType::kFloat32, {rows, n});
  for (int64_t i = 0; i < rows * n; ++i) in.f32()[i] = float(i % 11) * 0.3f - 1.0f;
  module.run({&in}, {&max, &out});
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const float want = std::exp(in.f32()[i * n + j] - in.f32()[i * n] * 0.5f);
      EXPECT_NEAR(out.f32()[i * n + j], want, 4e-6f * want) << i << ", " << j;
    }
}

// A sequence stacked from per-step tensors (ONNX LSTM's Y: a tree of selects on the step, which does not move with the
// vectorized loop) prints as an if/else around one loop per step, each loading only its own tensor; a select whose
// condition moves with the loop stays in it. Both compute the stacked values.
TEST(CppPrinter, ASelectOnAnOuterVariableChoosesBetweenLoops) {
  const int64_t steps = 3, n = 20;
  Buffer h0 = global_buffer("h0", {n}), h1 = global_buffer("h1", {n}), h2 = global_buffer("h2", {n});
  Buffer y = global_buffer("y", {steps, n});
  Expr t = var("t"), j = var("j");
  Expr stacked =
      select(lt(t, Expr(int64_t(1))), load(h0, j), select(lt(t, Expr(int64_t(2))), load(h1, j), load(h2, j)));
  Stmt body =
      for_loop(t, steps, LoopKind::kSerial, for_loop(j, n, LoopKind::kVectorized, store(y, t * n + j, stacked)));
  LoopFunction f{"stack", {h0, h1, h2}, {y}, {}, body};
  PrintedCpp printed = print_cpp_with_lines(f);
  EXPECT_NE(printed.source.find("    if (t < 1) {\n"
                                "      #pragma omp simd\n"
                                "      for (int64_t j = 0; j < 20; ++j) {\n"
                                "        y[t * 20 + j] = h0[j];\n"
                                "      }\n"
                                "    } else {\n"
                                "      if (t < 2) {\n"
                                "        #pragma omp simd\n"
                                "        for (int64_t j = 0; j < 20; ++j) {\n"
                                "          y[t * 20 + j] = h1[j];\n"
                                "        }\n"
                                "      } else {\n"
                                "        #pragma omp simd\n"
                                "        for (int64_t j = 0; j < 20; ++j) {\n"
                                "          y[t * 20 + j] = h2[j];\n"
                                "        }\n"
                                "      }\n"
                                "    }\n"),
            std::string::npos)
      << printed.source;
  KernelModule module(compile_cpp(printed.source).path, f);
  HostTensor a(DType::kFloat32, {n}), b(DType::kFloat32, {n}), c(DType::kFloat32, {n}),
      out(DType::kFloat32, {steps, n});
  for (int64_t i = 0; i < n; ++i) a.f32()[i] = float(i), b.f32()[i] = float(100 + i), c.f32()[i] = float(200 + i);
  module.run({&a, &b, &c}, {&out});
  for (int64_t i = 0; i < steps * n; ++i) EXPECT_EQ(out.f32()[i], float(100 * (i / n) + i % n)) << i;

  // The condition moves with j: one loop, the select inside it.
  LoopFunction moving{
      "halves",
      {h0, h1},
      {y},
      {},
      for_loop(j, n, LoopKind::kVectorized, store(y, j, select(lt(j, Expr(int64_t(10))), load(h0, j), load(h1, j))))};
  const std::string source = print_cpp(moving);
  EXPECT_NE(source.find("y[j] = j < 10 ? h0[j] : h1[j];"), std::string::npos) << source;
}

// A load of the buffer the loop stores is left where it is: hoisted, it would miss the loop's own writes.
TEST(CppPrinter, ALoadOfTheStoredBufferIsNotHoisted) {
  const int64_t n = 16;
  Buffer y = global_buffer("y", {n + 1});
  Expr l = var("l");
  LoopFunction f{"self", {}, {y}, {}, for_loop(l, n, LoopKind::kVectorized, store(y, l + 1, math::exp(load(y, 0))))};
  PrintedCpp printed = print_cpp_with_lines(f);
  EXPECT_EQ(printed.source.find("ingot_invariant"), std::string::npos) << printed.source;
}

// A GEMV register tile in explicit AVX2 vectors (8 lanes) on buffers of its own, so that the program's vectors, and
// with them its vector maps', are AVX2's.
Stmt with_an_avx2_register_tile() {
  Buffer w = make_buffer("tile_w", DType::kFloat32, {4, 16}, MemoryScope::kLocal);
  Buffer v = make_buffer("tile_v", DType::kFloat32, {16}, MemoryScope::kLocal);
  Buffer s = make_buffer("tile_s", DType::kFloat32, {4}, MemoryScope::kLocal);
  Expr r = var("tile_r"), k = var("tile_k");
  Stmt fill = seq(
      {for_loop(k, 16, LoopKind::kSerial, store(v, k, Expr(1.0))),
       for_loop(r, 4, LoopKind::kSerial,
                seq({store(s, r, Expr(0.0)), for_loop(k, 16, LoopKind::kSerial, store(w, r * 16 + k, Expr(2.0)))}))});
  Stmt tile = for_loop(k, 16, LoopKind::kVectorized,
                       for_loop(r, 4, LoopKind::kUnrolled, store(s, r, load(s, r) + load(w, r * 16 + k) * load(v, k))),
                       kAvx2VectorLanes);
  return allocate(w, allocate(v, allocate(s, seq({fill, tile}))));
}

// Runs math function f's printed helper over `values` in one vectorized loop (the source must call it as `call`, and
// g++ must vectorize the loop; extra_flags as compile_expecting_one_vectorized_loop's) and returns its results.
// With a vector map's call (`..._f32x16(`) the loop is compiled for this CPU and run as explicit AVX-512 vectors.
std::vector<float> run_helper(Expr (*f)(Expr), const std::vector<float>& values, const std::string& call,
                              const std::string& extra_flags = "") {
  const int64_t n = int64_t(values.size());
  Buffer x = global_buffer("x", {n}), y = global_buffer("y", {n});
  Expr e = var("e");
  Stmt body = for_loop(e, n, LoopKind::kVectorized, store(y, e, f(load(x, e))));
  if (call.find("_f32x8(") != std::string::npos) body = seq({with_an_avx2_register_tile(), body});
  LoopFunction fn{"helper", {x}, {y}, {}, body};
  PrintedCpp printed = print_cpp_with_lines(fn);
  EXPECT_NE(printed.source.find(call), std::string::npos) << printed.source;
  CompiledLibrary library = call.find("_f32x16(") != std::string::npos || call.find("_f32x8(") != std::string::npos
                                ? compile_cpp(printed.source)
                                : compile_expecting_one_vectorized_loop(printed, extra_flags);
  KernelModule module(library.path, fn);
  HostTensor in(DType::kFloat32, {n}), out(DType::kFloat32, {n});
  std::copy(values.begin(), values.end(), in.f32());
  module.run({&in}, {&out});
  return std::vector<float>(out.f32(), out.f32() + n);
}

// n points from lo up to hi, then the extra values.
std::vector<float> grid(float lo, float hi, const std::vector<float>& extra = {}, int64_t n = 1 << 21) {
  std::vector<float> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[size_t(i)] = lo + (hi - lo) * float(i) / float(n);
  values.insert(values.end(), extra.begin(), extra.end());
  return values;
}

// The worst error in ulp of results[i] against exact(values[i]) (in double) over i in [begin, end), NaN inputs
// left out; printed with where it is.
double worst_ulp(const std::vector<float>& values, const std::vector<float>& results, double (*exact)(double),
                 size_t begin, size_t end, const std::string& what) {
  double worst = 0;
  float worst_at = 0;
  for (size_t i = begin; i < end; ++i) {
    if (std::isnan(values[i])) continue;
    const double want = exact(double(values[i]));
    const float rounded = std::abs(float(want));
    const double ulp = double(std::nextafter(rounded, std::numeric_limits<float>::infinity())) - double(rounded);
    const double error = std::abs(double(results[i]) - want) / ulp;
    if (error > worst) worst = error, worst_at = values[i];
  }
  std::cout << what << ": worst " << worst << " ulp at " << worst_at << "\n";
  return worst;
}

// erf prints as ingot's own polynomial (not libmvec's erff), which a simd loop inlines and vectorizes: within 3
// ulp of erf over [-6, 6], odd (erf(-0) is -0), 1 at infinity and NaN for NaN.
TEST(CppPrinter, ErfIsAnInlinePolynomialWithin3UlpThatVectorizes) {
  const std::vector<float> special = {0.0f,
                                      -0.0f,
                                      1e-30f,
                                      -1e-38f,
                                      1.0f,
                                      0.99999994f,
                                      3.92f,
                                      3.9200001f,
                                      -3.92f,
                                      40.0f,
                                      std::numeric_limits<float>::infinity(),
                                      -std::numeric_limits<float>::infinity(),
                                      std::numeric_limits<float>::quiet_NaN()};
  const std::vector<float> values = grid(-6.0f, 6.0f, special);
  const std::vector<float> got = run_helper(math::erf, values, "ingot_erf_f32(x[e])");
  auto exact = [](double v) { return std::erf(v); };
  std::vector<float> normal_values, normal_got;  // a subnormal input may be flushed to zero (FTZ, DAZ)
  for (size_t i = 0; i < values.size(); ++i) {
    const float v = values[i];
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(got[i]));
      continue;
    }
    EXPECT_EQ(std::signbit(got[i]), std::signbit(v)) << v;
    if (std::abs(v) < std::numeric_limits<float>::min()) {
      EXPECT_LE(std::abs(double(got[i]) - exact(v)), 2.0 * std::numeric_limits<float>::min()) << v;
      continue;
    }
    normal_values.push_back(v);
    normal_got.push_back(got[i]);
  }
  EXPECT_LE(worst_ulp(normal_values, normal_got, exact, 0, normal_values.size(), "erf"), 3.0);
  EXPECT_EQ(got[values.size() - 3], 1.0f);
  EXPECT_EQ(got[values.size() - 2], -1.0f);
}

// The results of f's helper at the special values, each exactly as expected (a NaN for a NaN; zeros by sign).
void expect_special_results(Expr (*f)(Expr), const std::vector<float>& special, const std::vector<float>& expected,
                            const std::string& call, const std::string& extra_flags) {
  const std::vector<float> got = run_helper(f, special, call, extra_flags);
  for (size_t i = 0; i < special.size(); ++i) {
    if (std::isnan(expected[i]))
      EXPECT_TRUE(std::isnan(got[i])) << special[i];
    else
      EXPECT_TRUE(got[i] == expected[i] && std::signbit(got[i]) == std::signbit(expected[i]))
          << special[i] << ": " << got[i];
  }
}

// The forms of a loop that calls exp, tanh or sigmoid, each as its source calls the function, with the flags that
// compile it: the scalar helper under `omp simd` (without AVX-512, on every CPU), and the vector map's explicit
// vectors (lower/vector_maps.h) with AVX2 (in a program whose register tiles are AVX2's) and, where this CPU has
// AVX-512, with AVX-512. vector_call names the AVX-512 form's helper (..._f32x16); the AVX2 form's is ..._f32x8.
std::vector<std::pair<std::string, std::string>> math_forms(const std::string& scalar_call,
                                                            const std::string& vector_call) {
  const std::string avx2_call = std::regex_replace(vector_call, std::regex("_f32x16"), "_f32x8");
  std::vector<std::pair<std::string, std::string>> forms = {{scalar_call, kWithoutAvx512}, {avx2_call, ""}};
  if (__builtin_cpu_supports("avx512f"))
    forms.push_back({vector_call, ""});
  else
    std::cout << "this CPU has no AVX-512: the vector map form of " << vector_call << " was not run\n";
  return forms;
}

// exp prints as ingot's own inline polynomial, not libmvec's expf (whose call per vector spills every register):
// within 1.3 ulp up to 88.37, where 2^n still fits, and 5.2 ulp up to ln(FLT_MAX); infinity above, zero below
// ln(FLT_MIN). The vector map's, whose vscalefps takes 2^128 too, within 1.3 ulp throughout.
TEST(CppPrinter, ExpIsAnInlinePolynomialWithin2UlpThatVectorizes) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  auto exact = [](double v) { return std::exp(v); };
  for (const auto& [call, flags] : math_forms("ingot_exp_f32(x[e])", "ingot_exp_f32x16(ingot_v0)")) {
    SCOPED_TRACE(call);
    const bool vscalefps = call.find("x16") != std::string::npos;
    std::vector<float> values = grid(-87.33f, 88.37f);
    EXPECT_LE(worst_ulp(values, run_helper(math::exp, values, call, flags), exact, 0, values.size(), "exp"), 1.5);
    values = grid(88.37f, 88.72f, {}, 1 << 16);
    EXPECT_LE(
        worst_ulp(values, run_helper(math::exp, values, call, flags), exact, 0, values.size(), "exp near the top"),
        vscalefps ? 1.5 : 5.5);
    expect_special_results(math::exp, {0.0f, -0.0f, 88.73f, 100.0f, inf, -87.34f, -200.0f, -inf, nan},
                           {1.0f, 1.0f, inf, inf, inf, 0.0f, 0.0f, 0.0f, nan}, call, flags);
  }
}

// tanh and sigmoid build on the exp helper: tanh within 1.4 ulp (an odd polynomial near 0, where 1 - 2 / (exp(2x) +
// 1) would cancel), sigmoid within 3.1. So do the vector map's.
TEST(CppPrinter, TanhAndSigmoidAreInlineAndAccurate) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (const auto& [call, flags] : math_forms("ingot_tanh_f32(x[e])", "ingot_tanh_f32x16(ingot_v0)")) {
    SCOPED_TRACE(call);
    std::vector<float> values = grid(-10.0f, 10.0f);
    EXPECT_LE(worst_ulp(
                  values, run_helper(math::tanh, values, call, flags), [](double v) { return std::tanh(v); }, 0,
                  values.size(), "tanh"),
              1.5);
    expect_special_results(math::tanh, {0.0f, -0.0f, 1e-30f, 50.0f, inf, -inf, nan},
                           {0.0f, -0.0f, 1e-30f, 1.0f, 1.0f, -1.0f, nan}, call, flags);
  }
  for (const auto& [call, flags] :
       math_forms("1.0f / (1.0f + ingot_exp_f32(-x[e]))", "1.0f / (1.0f + ingot_exp_f32x16(-ingot_v0))")) {
    SCOPED_TRACE(call);
    std::vector<float> values = grid(-80.0f, 30.0f);
    EXPECT_LE(worst_ulp(
                  values, run_helper(math::sigmoid, values, call, flags),
                  [](double v) { return 1 / (1 + std::exp(-v)); }, 0, values.size(), "sigmoid"),
              3.1);
    expect_special_results(math::sigmoid, {0.0f, 100.0f, -100.0f, inf, -inf, nan}, {0.5f, 1.0f, 0.0f, 1.0f, 0.0f, nan},
                           call, flags);
  }
}

// A SiLU over rows of 44 (a bias per row, min and max around it) is a vector map: whole vectors, then a masked one
// for the rest of the row, the same load used twice loaded once, the bias broadcast; the `omp simd` loop stands where
// the vectors' ISA is not. A halo row's condition goes around the vectors. AVX-512's 16 lanes, or AVX2's 8 in a
// program whose register tiles are AVX2's. Every form computes what the interpreter does.
TEST(CppPrinter, AVectorMapPrintsWholeVectorsThenAMaskedOne) {
  const int64_t rows = 3, n = 44;
  Buffer x = global_buffer("x", {rows, n}), b = global_buffer("b", {rows}), y = global_buffer("y", {rows, n});
  Expr r = var("r"), l = var("l");
  Expr biased = load(x, r * n + l) + load(b, r);
  Expr value = minimum(maximum(biased * math::sigmoid(biased), Expr(-0.25)), Expr(2.5));
  Stmt map = for_loop(r, rows, LoopKind::kSerial,
                      for_loop(l, n, LoopKind::kVectorized, if_then_else(lt(r, rows - 1), store(y, r * n + l, value))));
  for (int64_t lanes : {kAvx512VectorLanes, kAvx2VectorLanes}) {
    SCOPED_TRACE(lanes);
    const bool avx512 = lanes == kAvx512VectorLanes;
    LoopFunction f{"silu_rows", {x, b}, {y}, {}, avx512 ? map : seq({with_an_avx2_register_tile(), map})};
    PrintedCpp printed = print_cpp_with_lines(f);
    const std::string V = avx512 ? "16" : "8", whole = avx512 ? "32" : "40", rest = avx512 ? "12" : "4";
    const std::string silu =
        "ingot_min_f32x" + V + "(ingot_max_f32x" + V + "((ingot_v0 + b[r]) * (1.0f / (1.0f + ingot_exp_f32x" + V +
        "(-(ingot_v0 + b[r])))), ingot_splat_f32x" + V + "(-0.25f)), ingot_splat_f32x" + V + "(2.5f))";
    EXPECT_NE(
        printed.source.find(
            "    " + std::string(avx512 ? "#if defined(__AVX512F__)" : "#if defined(__AVX2__) && defined(__FMA__)") +
            "\n" +
            "    if (r < 2) {\n"
            "      for (int64_t l = 0; l < " +
            whole + "; l += " + std::to_string(lanes) +
            ") {\n"
            "        const ingot_f32x" +
            V + " ingot_v0 = ingot_load_f32x" + V +
            "(&x[r * 44 + l]);\n"
            "        ingot_store_f32x" +
            V + "(&y[r * 44 + l], " + silu +
            ");\n"
            "      }\n"
            "      {\n"
            "        const int64_t l = " +
            whole +
            ";\n"
            "        const ingot_f32x" +
            V + " ingot_v0 = ingot_load_first_f32x" + V + "(" + rest +
            ", &x[r * 44 + l]);\n"
            "        ingot_store_first_f32x" +
            V + "(" + rest + ", &y[r * 44 + l], " + silu +
            ");\n"
            "      }\n"
            "    }\n"
            "    #else\n"),
        std::string::npos)
        << printed.source;
    EXPECT_NE(printed.source.find("    #pragma omp simd\n"), std::string::npos) << printed.source;
    HostTensor in(DType::kFloat32, {rows, n}), bias(DType::kFloat32, {rows});
    for (int64_t i = 0; i < rows * n; ++i) in.f32()[i] = float(i % 17) * 0.7f - 6.0f;
    for (int64_t i = 0; i < rows; ++i) bias.f32()[i] = 0.5f * float(i) - 0.25f;
    for (const std::string& flags : {std::string(avx512 ? " -mno-avx512f" : " -mno-avx2"), std::string()}) {
      SCOPED_TRACE(flags.empty() ? "vector map" : "omp simd");
      if (flags.empty() && !(avx512 ? __builtin_cpu_supports("avx512f") : __builtin_cpu_supports("avx2"))) {
        std::cout << "this CPU cannot run the vector map of " << lanes << " lanes: printed, not run\n";
        continue;
      }
      CompileOptions options;
      options.flags += flags;
      KernelModule module(compile_cpp(printed.source, options).path, f);
      HostTensor out(DType::kFloat32, {rows, n});
      for (int64_t i = 0; i < rows * n; ++i) out.f32()[i] = -7.0f;  // what the condition leaves alone stays
      module.run({&in, &bias}, {&out});
      for (int64_t i = 0; i < rows * n; ++i) {
        if (i / n == rows - 1) {
          EXPECT_EQ(out.f32()[i], -7.0f) << i;
          continue;
        }
        const double v = double(in.f32()[i]) + bias.f32()[i / n];
        const double want = std::min(std::max(v / (1 + std::exp(-v)), -0.25), 2.5);
        EXPECT_NEAR(out.f32()[i], want, 1e-6 * std::max(1.0, std::fabs(want))) << i;
      }
    }
  }
}

// A vector map whose store moves by a plane per lane (a channel tile's epilogue along its channels) scatters each
// vector: AVX-512's scatter, AVX2's lanes one by one, the last vector's first lanes alone. Both run against plain
// arithmetic where this CPU has their ISA.
TEST(CppPrinter, AVectorMapScattersAStoreAPlaneApart) {
  const int64_t pixels = 5, channels = 44;
  Buffer x = global_buffer("x", {pixels, channels}), y = global_buffer("y", {channels, pixels});
  Expr p = var("p"), c = var("c");
  Expr element = load(x, p * channels + c);
  Stmt map = for_loop(
      p, pixels, LoopKind::kSerial,
      for_loop(c, channels, LoopKind::kVectorized, store(y, c * pixels + p, element * math::sigmoid(element))));
  for (int64_t lanes : {kAvx512VectorLanes, kAvx2VectorLanes}) {
    SCOPED_TRACE(lanes);
    const bool avx512 = lanes == kAvx512VectorLanes;
    LoopFunction f{"silu_scatter", {x}, {y}, {}, avx512 ? map : seq({with_an_avx2_register_tile(), map})};
    PrintedCpp printed = print_cpp_with_lines(f);
    const std::string V = avx512 ? "16" : "8", rest = avx512 ? "12" : "4";
    const std::string silu = "ingot_v0 * (1.0f / (1.0f + ingot_exp_f32x" + V + "(-ingot_v0)))";
    EXPECT_NE(printed.source.find("ingot_store_strided_f32x" + V + "(&y[c * 5 + p], 5, " + silu + ");"),
              std::string::npos)
        << printed.source;
    EXPECT_NE(
        printed.source.find("ingot_store_first_strided_f32x" + V + "(" + rest + ", &y[c * 5 + p], 5, " + silu + ");"),
        std::string::npos)
        << printed.source;
    if (!(avx512 ? __builtin_cpu_supports("avx512f") : __builtin_cpu_supports("avx2"))) {
      std::cout << "this CPU cannot run the vector map of " << lanes << " lanes: printed, not run\n";
      continue;
    }
    HostTensor in(DType::kFloat32, {pixels, channels});
    for (int64_t i = 0; i < pixels * channels; ++i) in.f32()[i] = float(i % 13) * 0.9f - 5.0f;
    KernelModule module(compile_cpp(printed.source, CompileOptions{}).path, f);
    HostTensor out(DType::kFloat32, {channels, pixels});
    module.run({&in}, {&out});
    for (int64_t pixel = 0; pixel < pixels; ++pixel)
      for (int64_t channel = 0; channel < channels; ++channel) {
        const double v = in.f32()[pixel * channels + channel], want = v / (1 + std::exp(-v));
        EXPECT_NEAR(out.f32()[channel * pixels + pixel], want, 1e-6 * std::max(1.0, std::fabs(want)))
            << pixel << ", " << channel;
      }
  }
}

// A pair map (lower/vector_maps.h): each pixel's pair of channels rounded and interleaved 16 pixels at a time, the
// rest of the row masked, a padded channel's zero chosen per pair; the plain loops where AVX-512 BF16 is not. Both
// forms round as a bf16 tensor holds its values (to nearest even; the values here are normal floats).
TEST(CppPrinter, APairMapInterleavesTwoRoundedRows) {
  const int64_t channels = 3, pixels = 20;  // two pairs of channels, the last one padded
  Buffer x = global_buffer("x", {channels, pixels}), pairs = global_buffer("pairs", {2, pixels, 2}, DType::kBFloat16);
  Expr c = var("c"), p = var("p"), n = var("n");
  const Expr channel = c * 2 + n;
  Expr value =
      select(lt(channel, Expr(channels)), load(x, minimum(channel, Expr(channels - 1)) * pixels + p), Expr(0.0));
  Stmt body = for_loop(c, 2, LoopKind::kSerial,
                       for_loop(p, pixels, LoopKind::kVectorized,
                                for_loop(n, 2, LoopKind::kUnrolled,
                                         store(pairs, c * (2 * pixels) + p * 2 + n, cast(DType::kBFloat16, value)))));
  LoopFunction f{"pairs", {x}, {pairs}, {}, body};
  const std::string source = print_cpp_with_lines(f).source;
  EXPECT_NE(source.find("ingot_store_bf16_pairs(&pairs[c * 40 + p * 2], (c * 2 < 3) ? _mm512_loadu_ps(&x["),
            std::string::npos)
      << source;
  EXPECT_NE(source.find("ingot_store_first_bf16_pairs(4, &pairs[c * 40 + p * 2], "), std::string::npos) << source;
  HostTensor in(DType::kFloat32, {channels, pixels}), expected(DType::kBFloat16, {2, pixels, 2});
  for (int64_t i = 0; i < channels * pixels; ++i) in.f32()[i] = float(i) * 1.001f - 17.3f;
  for (int64_t pair = 0; pair < 2; ++pair)
    for (int64_t pixel = 0; pixel < pixels; ++pixel)
      for (int64_t element = 0; element < 2; ++element) {
        const int64_t at = pair * 2 * pixels + pixel * 2 + element, from = pair * 2 + element;
        expected.set(at, from < channels ? in.f32()[from * pixels + pixel] : 0.0);
      }
  for (const std::string& flags : {std::string(" -mno-avx512bf16"), std::string()}) {
    SCOPED_TRACE(flags.empty() ? "pair map" : "plain loops");
    if (flags.empty() && !host_has_avx512_bf16()) {
      std::cout << "this CPU has no AVX-512 BF16: the pair map was printed, not run\n";
      continue;
    }
    CompileOptions options;
    options.flags += flags;
    KernelModule module(compile_cpp(source, options).path, f);
    HostTensor out(DType::kBFloat16, {2, pixels, 2});
    module.run({&in}, {&out});
    for (int64_t i = 0; i < out.num_elements(); ++i) EXPECT_EQ(out.get(i), expected.get(i)) << i;
  }
}

// A guarded fold (splits with tail=guard): the guard on the element (r < rows) encloses the whole reduction, the
// guard on the reduction (k < n) stays on each iteration, and the loop still vectorizes.
TEST(CppPrinter, KeepsTheGuardsOfAGuardedSimdReduction) {
  const int64_t rows = 3, n = 40, padded_rows = 4, padded_n = 48;
  Buffer w = global_buffer("W", {rows, n}), x = global_buffer("x", {n}), y = global_buffer("y", {rows});
  Expr r = var("r"), k = var("k");
  Stmt fold =
      if_then_else(logical_and(lt(r, rows), lt(k, n)), store(y, r, load(y, r) + load(w, r * n + k) * load(x, k)));
  Stmt body = for_loop(
      r, padded_rows, LoopKind::kSerial,
      seq({if_then_else(lt(r, rows), store(y, r, Expr(0.0))), for_loop(k, padded_n, LoopKind::kVectorized, fold)}));
  LoopFunction f{"guarded_gemv", {w, x}, {y}, {}, body};
  PrintedCpp printed = print_cpp_with_lines(f);
  EXPECT_NE(printed.source.find("    if (r < 3) {\n"
                                "      float ingot_acc = y[r];\n"
                                "      #pragma omp simd reduction(+:ingot_acc)\n"
                                "      for (int64_t k = 0; k < 48; ++k) {\n"
                                "        if (k < 40) {\n"
                                "          ingot_acc = ingot_acc + W[r * 40 + k] * x[k];\n"
                                "        }\n"
                                "      }\n"
                                "      y[r] = ingot_acc;\n"
                                "    }\n"),
            std::string::npos)
      << printed.source;
  expect_exact_gemv(compile_expecting_one_vectorized_loop(printed).path, f, rows, n);
}

// y = W x (W of 2 * tile rows and n columns) in two blocks of `tile` rows: each block's rows zeroed, then folded inside
// a vectorized k loop whose register tile is held in explicit vectors of `lanes` lanes.
LoopFunction gemv_of_two_row_tiles(const std::string& name, int64_t tile, int64_t n, int64_t lanes) {
  const int64_t rows = 2 * tile;
  Buffer w = global_buffer("W", {rows, n}), x = global_buffer("x", {n}), y = global_buffer("y", {rows});
  Expr ro = var("ro"), ri = var("ri"), k = var("k");
  Expr row = ro * tile + ri;
  Stmt body = for_loop(ro, 2, LoopKind::kSerial,
                       seq({for_loop(ri, tile, LoopKind::kUnrolled, store(y, row, Expr(0.0))),
                            for_loop(k, n, LoopKind::kVectorized,
                                     for_loop(ri, tile, LoopKind::kUnrolled,
                                              store(y, row, load(y, row) + load(w, row * n + k) * load(x, k))),
                                     lanes)}));
  return LoopFunction{name, {w, x}, {y}, {}, body};
}

// A register tile's accumulators are summed four at a time (ingot_sum4_f32xN): a last group of two or three with empty
// vectors for the rest, a last single one alone. Each sum is right, with AVX-512 and with AVX2.
TEST(CppPrinter, ARegisterTileSumsItsAccumulatorsFourAtATime) {
  const int64_t n = 72;
  for (int64_t tile : {5, 6, 7}) {
    const int64_t rows = 2 * tile;
    for (int64_t lanes : {kAvx512VectorLanes, kAvx2VectorLanes}) {
      if (tile > int64_t(max_vector_accumulators(lanes))) continue;
      LoopFunction f = gemv_of_two_row_tiles("tile_of_" + std::to_string(tile), tile, n, lanes);
      std::string source = print_cpp(f);
      const std::string last = tile % 4 == 1 ? "float ingot_acc4 = y[ro * 5 + 4] + ingot_sum_f32xN(ingot_vacc4);"
                                             : "ingot_sum4_f32xN(ingot_vacc4, ingot_vacc5, ";
      EXPECT_NE(source.find("ingot_sum4_f32xN(ingot_vacc0, ingot_vacc1, ingot_vacc2, ingot_vacc3, ingot_sums0);"),
                std::string::npos)
          << source;
      EXPECT_NE(source.find(last), std::string::npos) << tile << "\n" << source;
      if (tile == 6) {
        EXPECT_NE(source.find("ingot_vacc5, ingot_f32xN{}, ingot_f32xN{}, ingot_sums1);"), std::string::npos);
      }
      if (tile == 7) {
        EXPECT_NE(source.find("ingot_vacc6, ingot_f32xN{}, ingot_sums1);"), std::string::npos);
      }
      expect_exact_gemv(compile_cpp(source).path, f, rows, n);
    }
  }
}

// A register tile whose accumulators and operands outnumber the vector registers (a GEMV of 8 rows with AVX2: 8
// accumulators, 8 weight rows and x in 16 registers) loads each operand that one accumulator reads where that
// accumulator's FMA uses it, and only the shared x before: hoisted, g++ kept an accumulator on the stack. With
// AVX-512's 32 registers every operand is loaded first, as before. Both sum right, their scalar tails too (76 = 4 x 16
// + 12 = 9 x 8 + 4).
TEST(CppPrinter, ACrowdedRegisterTileLoadsOperandsOfOneFoldInsideIt) {
  const int64_t tile = 8, rows = 2 * tile, n = 76;
  for (int64_t lanes : {kAvx512VectorLanes, kAvx2VectorLanes}) {
    LoopFunction f = gemv_of_two_row_tiles("gemv_of_8", tile, n, lanes);
    const std::string source = print_cpp(f);
    const bool crowded = lanes == kAvx2VectorLanes;
    EXPECT_NE(source.find("const ingot_f32xN ingot_v1 = ingot_load_f32xN(ingot_p1 + k);"), std::string::npos) << source;
    EXPECT_EQ(source.find("const ingot_f32xN ingot_v0 = ") == std::string::npos, crowded) << source;
    EXPECT_EQ(source.find("ingot_vacc0 += ingot_load_f32xN(ingot_p0 + k) * ingot_v1;") != std::string::npos, crowded)
        << source;
    EXPECT_EQ(source.find("ingot_vacc7 += ingot_load_f32xN(ingot_p8 + k) * ingot_v1;") != std::string::npos, crowded)
        << source;
    expect_exact_gemv(compile_cpp(source).path, f, rows, n);
  }
}

// The flags that compile a printed kernel without the ISA of its explicit vectors of `lanes` lanes, so that their
// fallback loops run.
CompileOptions without_vector_isa(int64_t lanes) {
  CompileOptions options;
  options.flags += lanes == kAvx512VectorLanes ? " -mno-avx512f" : " -mno-avx2";
  return options;
}

// A register tile: unrolled row loops inside the vectorized reduction loop fold, with AVX-512, into one vector
// accumulator per row (GCC vector extensions), each loading x once per iteration for the four rows; then each
// accumulator is summed across its lanes, the 72 - 64 iterations left run in scalars, and the sums are right.
TEST(CppPrinter, FoldsARegisterTileIntoOneVectorAccumulatorPerElement) {
  const int64_t rows = 8, n = 72;
  Buffer w = global_buffer("W", {rows, n}), x = global_buffer("x", {n}), y = global_buffer("y", {rows});
  Expr ro = var("ro"), ri = var("ri"), k = var("k");
  Expr row = ro * 4 + ri;
  // y[row] = sum_k term, four rows at a time: the rows zeroed, then folded inside the vectorized k loop, whose
  // register tile is held in explicit vectors of `lanes` lanes (an explicit_vectors decision), or 0 for none.
  auto four_row_tiles = [&](const Expr& term, int64_t lanes = kAvx512VectorLanes) {
    return for_loop(ro, rows / 4, LoopKind::kSerial,
                    seq({for_loop(ri, 4, LoopKind::kUnrolled, store(y, row, Expr(0.0))),
                         for_loop(k, n, LoopKind::kVectorized,
                                  for_loop(ri, 4, LoopKind::kUnrolled, store(y, row, load(y, row) + term)), lanes)}));
  };
  LoopFunction f{"tiled_gemv", {w, x}, {y}, {}, four_row_tiles(load(w, row * n + k) * load(x, k))};
  PrintedCpp printed = print_cpp_with_lines(f);
  EXPECT_NE(
      printed.source.find("    {\n"
                          "      ingot_f32xN ingot_vacc0 = {};\n"
                          "      ingot_f32xN ingot_vacc1 = {};\n"
                          "      ingot_f32xN ingot_vacc2 = {};\n"
                          "      ingot_f32xN ingot_vacc3 = {};\n"
                          "      const float* ingot_p0 = &W[ro * 288];\n"
                          "      const float* ingot_p1 = &x[0];\n"
                          "      const float* ingot_p2 = &W[ro * 288 + 72];\n"
                          "      const float* ingot_p3 = &W[ro * 288 + 144];\n"
                          "      const float* ingot_p4 = &W[ro * 288 + 216];\n"
                          "      int64_t k = 0;\n"
                          "      for (; k + INGOT_F32_LANES <= 72; k += INGOT_F32_LANES) {\n"
                          "        const ingot_f32xN ingot_v0 = ingot_load_f32xN(ingot_p0 + k);\n"
                          "        const ingot_f32xN ingot_v1 = ingot_load_f32xN(ingot_p1 + k);\n"
                          "        const ingot_f32xN ingot_v2 = ingot_load_f32xN(ingot_p2 + k);\n"
                          "        const ingot_f32xN ingot_v3 = ingot_load_f32xN(ingot_p3 + k);\n"
                          "        const ingot_f32xN ingot_v4 = ingot_load_f32xN(ingot_p4 + k);\n"
                          "        ingot_vacc0 += ingot_v0 * ingot_v1;\n"
                          "        ingot_vacc1 += ingot_v2 * ingot_v1;\n"
                          "        ingot_vacc2 += ingot_v3 * ingot_v1;\n"
                          "        ingot_vacc3 += ingot_v4 * ingot_v1;\n"
                          "      }\n"
                          "      float ingot_sums0[4];\n"
                          "      ingot_sum4_f32xN(ingot_vacc0, ingot_vacc1, ingot_vacc2, ingot_vacc3, ingot_sums0);\n"
                          "      float ingot_acc0 = y[ro * 4] + ingot_sums0[0];\n"
                          "      float ingot_acc1 = y[ro * 4 + 1] + ingot_sums0[1];\n"
                          "      float ingot_acc2 = y[ro * 4 + 2] + ingot_sums0[2];\n"
                          "      float ingot_acc3 = y[ro * 4 + 3] + ingot_sums0[3];\n"
                          "      for (; k < 72; ++k) {\n"
                          "        ingot_acc0 = ingot_acc0 + W[k + ro * 288] * x[k];\n"
                          "        ingot_acc1 = ingot_acc1 + W[k + ro * 288 + 72] * x[k];\n"
                          "        ingot_acc2 = ingot_acc2 + W[k + ro * 288 + 144] * x[k];\n"
                          "        ingot_acc3 = ingot_acc3 + W[k + ro * 288 + 216] * x[k];\n"
                          "      }\n"
                          "      y[ro * 4] = ingot_acc0;\n"
                          "      y[ro * 4 + 1] = ingot_acc1;\n"
                          "      y[ro * 4 + 2] = ingot_acc2;\n"
                          "      y[ro * 4 + 3] = ingot_acc3;\n"
                          "    }\n"),
      std::string::npos)
      << printed.source;
  expect_exact_gemv(compile_cpp(printed.source).path, f, rows, n);
  // Without AVX-512 (16 vector registers) the same source compiles the simd reduction instead, and sums right.
  EXPECT_NE(printed.source.find("    #else\n"
                                "    {\n"
                                "      float ingot_acc0 = y[ro * 4];\n"),
            std::string::npos)
      << printed.source;
  expect_exact_gemv(compile_cpp(printed.source, without_vector_isa(kAvx512VectorLanes)).path, f, rows, n);

  // The AVX2 form: the same tile in 8-lane vectors (4 accumulators and 5 operands of AVX2's 16 registers), and its
  // fallback without AVX2.
  LoopFunction f8{"tiled_gemv", {w, x}, {y}, {}, four_row_tiles(load(w, row * n + k) * load(x, k), kAvx2VectorLanes)};
  std::string avx2_source = print_cpp(f8);
  for (const char* line : {"#if defined(__AVX2__) && defined(__FMA__)\n", "#define INGOT_F32_LANES 8\n",
                           "ingot_vacc3 += ingot_v4 * ingot_v1;\n", "float ingot_acc0 = y[ro * 4] + ingot_sums0[0];"})
    EXPECT_NE(avx2_source.find(line), std::string::npos) << line << avx2_source;
  EXPECT_EQ(avx2_source.find("__AVX512F__"), std::string::npos) << avx2_source;
  expect_exact_gemv(compile_cpp(avx2_source).path, f8, rows, n);
  expect_exact_gemv(compile_cpp(avx2_source, without_vector_isa(kAvx2VectorLanes)).path, f8, rows, n);

  // Operands invariant in k (a scale per row) and constants broadcast across the lanes.
  Buffer scale = global_buffer("s", {rows});
  LoopFunction h{"scaled_tile",
                 {w, x, scale},
                 {y},
                 {},
                 four_row_tiles(load(w, row * n + k) * load(x, k) * load(scale, row) - Expr(2.0))};
  std::string scaled_source = print_cpp(h);
  EXPECT_NE(scaled_source.find("ingot_vacc3 += ingot_v4 * ingot_v1 * s[ro * 4 + 3] - 2.0f;"), std::string::npos)
      << scaled_source;
  KernelModule module(compile_cpp(scaled_source).path, h);
  HostTensor ws(DType::kFloat32, {rows, n}), xs(DType::kFloat32, {n}), ss(DType::kFloat32, {rows}),
      ys(DType::kFloat32, {rows});
  for (int64_t i = 0; i < rows * n; ++i) ws.f32()[i] = float(i % 5) - 2.0f;
  for (int64_t i = 0; i < n; ++i) xs.f32()[i] = float(i % 3);
  for (int64_t i = 0; i < rows; ++i) ss.f32()[i] = float(i) - 3.0f;
  module.run({&ws, &xs, &ss}, {&ys});
  for (int64_t r = 0; r < rows; ++r) {
    float want = 0;
    for (int64_t i = 0; i < n; ++i) want += ws.f32()[r * n + i] * xs.f32()[i] * ss.f32()[r] - 2.0f;
    EXPECT_EQ(ys.f32()[r], want) << r;
  }

  // Without the decision the same tile is an OpenMP simd reduction, one scalar accumulator per row: the printer
  // prints what the schedule asked for.
  std::string plain = print_cpp(LoopFunction{"plain_tile", {w, x}, {y}, {}, four_row_tiles(load(x, k), 0)});
  EXPECT_NE(plain.find("#pragma omp simd reduction(+:ingot_acc0, ingot_acc1, ingot_acc2, ingot_acc3)"),
            std::string::npos)
      << plain;
  EXPECT_EQ(plain.find("ingot_vacc"), std::string::npos) << plain;

  // Terms the vectors cannot compute (a call): lowering refuses the decision (vector_tiles.h), the printer too.
  Stmt exp_tile = four_row_tiles(math::exp(load(w, row * n + k)) * load(x, k));
  EXPECT_EQ(explicit_vector_problems(exp_tile),
            std::vector<std::string>{"loop 'k' holds no register tile that explicit vectors of 16 lanes can compute "
                                     "(docs/schedules.md: a vectorized + reduction of 4 to 24 folds of f32 +, -, * "
                                     "terms, or a spatial tile's vectorized loop)"});
  EXPECT_THROW(print_cpp(LoopFunction{"exp_tile", {w, x}, {y}, {}, exp_tile}), std::invalid_argument);
}

// A padded 3 x 3 convolution over a map `width` wide, four output channels x three rows at a time: serial reduction
// loops around unrolled channels and rows around the vectorized row, its tile held in explicit vectors of `lanes`.
struct StencilTile {
  static constexpr int64_t C = 4, R = 2, H = 6;
  int64_t width;
  LoopFunction f;
};

StencilTile stencil_tile(int64_t width, int64_t lanes) {
  const int64_t C = StencilTile::C, R = StencilTile::R, H = StencilTile::H, W = width;
  Buffer x = global_buffer("X", {R, H, W}), k = global_buffer("K", {C, R, 3, 3}), y = global_buffer("y", {C, H, W});
  Expr co = var("co"), ci = var("ci"), ho = var("ho"), hi = var("hi"), w = var("w");
  Expr rc = var("rc"), ry = var("ry"), rx = var("rx");
  Expr c = co * 2 + ci, h = ho * 3 + hi, yy = h + ry - 1, xx = w + rx - 1;
  Expr inside = logical_and(logical_and(ge(yy, 0), lt(yy, H)), logical_and(ge(xx, 0), lt(xx, W)));
  Expr tap = select(inside, load(x, (rc * H + yy) * W + xx), Expr(0.0)) * load(k, ((c * R + rc) * 3 + ry) * 3 + rx);
  Expr element = (c * H + h) * W + w;
  Stmt tile =
      for_loop(rc, R, LoopKind::kSerial,
               for_loop(ry, 3, LoopKind::kSerial,
                        for_loop(rx, 3, LoopKind::kSerial,
                                 for_loop(ci, 2, LoopKind::kUnrolled,
                                          for_loop(hi, 3, LoopKind::kUnrolled,
                                                   for_loop(w, W, LoopKind::kVectorized,
                                                            store(y, element, load(y, element) + tap), lanes))))));
  Expr flat = var("flat");
  Stmt body = seq({for_loop(flat, C * H * W, LoopKind::kSerial, store(y, flat, Expr(0.0))),
                   for_loop(co, C / 2, LoopKind::kSerial, for_loop(ho, H / 3, LoopKind::kSerial, tile))});
  return StencilTile{W, LoopFunction{"stencil", {x, k}, {y}, {}, body}};
}

// Runs the printed stencil compiled with and without its vectors' ISA; small integers keep every sum exact.
void expect_exact_stencil(const StencilTile& t, const std::string& source, int64_t lanes) {
  const int64_t C = StencilTile::C, R = StencilTile::R, H = StencilTile::H, W = t.width;
  HostTensor xs(DType::kFloat32, {R, H, W}), ks(DType::kFloat32, {C, R, 3, 3});
  for (int64_t i = 0; i < R * H * W; ++i) xs.f32()[i] = float(i % 5) - 2.0f;
  for (int64_t i = 0; i < C * R * 9; ++i) ks.f32()[i] = float(i % 3) - 1.0f;
  std::vector<float> want(C * H * W, 0.0f);
  for (int64_t oc = 0; oc < C; ++oc)
    for (int64_t oh = 0; oh < H; ++oh)
      for (int64_t ow = 0; ow < W; ++ow)
        for (int64_t ic = 0; ic < R; ++ic)
          for (int64_t dy = 0; dy < 3; ++dy)
            for (int64_t dx = 0; dx < 3; ++dx) {
              int64_t iy = oh + dy - 1, ix = ow + dx - 1;
              if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                want[(oc * H + oh) * W + ow] +=
                    xs.f32()[(ic * H + iy) * W + ix] * ks.f32()[((oc * R + ic) * 3 + dy) * 3 + dx];
            }
  for (const CompiledLibrary& library : {compile_cpp(source), compile_cpp(source, without_vector_isa(lanes))}) {
    KernelModule module(library.path, t.f);
    HostTensor ys(DType::kFloat32, {C, H, W});
    module.run({&xs, &ks}, {&ys});
    for (int64_t i = 0; i < C * H * W; ++i) ASSERT_EQ(ys.f32()[i], want[i]) << i;
  }
}

// Four channels x three rows of a 20-wide map: explicit vectors held across the whole reduction (2 x 3 x 2 chunks of
// 16 lanes, the second chunk of each row masked to its 4 lanes), the border guards as lane masks; without AVX-512 the
// same source runs the loops.
TEST(CppPrinter, HoldsASpatialTileInVectorRegistersAcrossItsReduction) {
  StencilTile t = stencil_tile(20, kAvx512VectorLanes);
  std::string source = print_cpp(t.f);
  for (const char* line :
       {"ingot_f32xN ingot_t11 = ingot_load_masked_f32xN((__mmask16)0xF, &y[",
        "ingot_v0 = ingot_load_masked_f32xN(ingot_lane_range(1, (ho * 3 >= 1 && ho * 3 < 7 ? ingot_lane_min(16, 21) : "
        "0)), &X[ho * 60 - 21]);",
        "ingot_t0 += ingot_v0 * K[", "ingot_store_masked_f32xN((__mmask16)0xFFFF, &y[", "#else"})
    EXPECT_NE(source.find(line), std::string::npos) << line << "\n" << source;
  EXPECT_EQ(source.find("ingot_t12"), std::string::npos) << source;  // 12 accumulators, no more
  expect_exact_stencil(t, source, kAvx512VectorLanes);
}

// The stencil with each tile's outputs zeroed just before it (the map zeroed first as well): where the zeros are
// exactly the tile's accumulators (2 channels x 3 rows x the width), the vectors start from zero registers and the
// zeros are stored only before the plain loops; zeros of fewer rows, or of -0.0 (a sum of -0.0 stays -0.0), keep the
// accumulators' loads. Each runs with and without AVX-512 and sums exactly.
TEST(CppPrinter, ASpatialTileZeroedJustBeforeStartsFromZeroRegisters) {
  StencilTile t = stencil_tile(20, kAvx512VectorLanes);
  const int64_t H = StencilTile::H, W = t.width;
  auto zeroing_each_tile = [&](int64_t rows, double zero) {
    const Buffer& y = t.f.outputs[0];
    auto* all = as<SeqNode>(t.f.body);
    auto* co = as<ForNode>(all->stmts[1]);
    auto* ho = as<ForNode>(co->body);
    Expr ci = var("ci"), hi = var("hi"), w = var("w");
    Stmt zeros =
        for_loop(ci, 2, LoopKind::kSerial,
                 for_loop(hi, rows, LoopKind::kSerial,
                          for_loop(w, W, LoopKind::kSerial,
                                   store(y, ((co->var * 2 + ci) * H + ho->var * 3 + hi) * W + w, Expr(zero)))));
    Stmt tiles = for_loop(co->var, co->extent, LoopKind::kSerial,
                          for_loop(ho->var, ho->extent, LoopKind::kSerial, seq({zeros, ho->body})));
    StencilTile zeroed = t;
    zeroed.f.body = seq({all->stmts[0], tiles});
    return zeroed;
  };
  const std::string loaded = "ingot_f32xN ingot_t11 = ingot_load_masked_f32xN((__mmask16)0xF, &y[";
  for (const auto& [rows, zero, from_zero] :
       {std::tuple{int64_t(3), 0.0, true}, std::tuple{int64_t(2), 0.0, false}, std::tuple{int64_t(3), -0.0, false}}) {
    StencilTile zeroed = zeroing_each_tile(rows, zero);
    const std::string source = print_cpp(zeroed.f);
    EXPECT_EQ(source.find("ingot_f32xN ingot_t11 = {};") != std::string::npos, from_zero) << source;
    EXPECT_EQ(source.find(loaded) != std::string::npos, !from_zero) << source;
    // The zeros: before the tile, or (from zero) only after the `#else` of the vectors' guard.
    const size_t guard = source.find("#if defined(__AVX512F__)"), fallback = source.find("#else", guard);
    const size_t zeros = source.find("0.0f;", source.find("for (int64_t ho = 0;"));
    ASSERT_NE(zeros, std::string::npos) << source;
    EXPECT_EQ(zeros > fallback, from_zero) << source;
    expect_exact_stencil(zeroed, source, kAvx512VectorLanes);
  }
}

// The lane ranges' integer helpers and the expression helpers (a bounded loop's ingot_min_i64) have names of their
// own: both in one program once defined ingot_min_i64 twice (11 of 3200 data set candidates did not compile).
TEST(CppPrinter, LaneRangesAndABoundedLoopCompileTogether) {
  StencilTile t = stencil_tile(20, kAvx512VectorLanes);
  Buffer z = global_buffer("z", {56});
  Expr mo = var("m.o"), mi = var("m.i");
  Stmt bounded = for_loop(mo, 2, LoopKind::kSerial,
                          for_loop(mi, 44, LoopKind::kVectorized,
                                   if_then_else(lt(mi + mo * 44, Expr(56)), store(z, mi + mo * 44, Expr(1.0)))));
  LoopFunction both{"both", t.f.inputs, {t.f.outputs[0], z}, {}, seq({t.f.body, bounded})};
  const std::string source = print_cpp(both);
  EXPECT_NE(source.find("ingot_lane_min("), std::string::npos) << source;
  EXPECT_NE(source.find("< ingot_min_i64(44, "), std::string::npos) << source;
  EXPECT_NO_THROW(compile_cpp(source)) << source;
}

// The AVX2 form, over a 12-wide map: 2 x 3 x 2 chunks of 8 lanes (12 of the 16 ymm registers), whole chunks loaded and
// stored plainly, the last of each row and the border through masks made vectors (vmaskmovps).
TEST(CppPrinter, HoldsASpatialTileInAvx2Registers) {
  StencilTile t = stencil_tile(12, kAvx2VectorLanes);
  std::string source = print_cpp(t.f);
  for (const char* line :
       {"#if defined(__AVX2__) && defined(__FMA__)", "#define INGOT_F32_LANES 8",
        "ingot_f32xN ingot_t0 = ingot_load_f32xN(&y[",
        "ingot_f32xN ingot_t11 = ingot_load_masked_f32xN((ingot_mask)0xF, &y[",
        "ingot_v0 = ingot_load_masked_f32xN(ingot_lane_range(1, (ho * 3 >= 1 && ho * 3 < 7 ? ingot_lane_min(8, 13) : "
        "0)), &X[ho * 36 - 13]);",
        "ingot_store_f32xN(&y[", "ingot_store_masked_f32xN((ingot_mask)0xF, &y[", "#else"})
    EXPECT_NE(source.find(line), std::string::npos) << line << "\n" << source;
  EXPECT_EQ(source.find("__AVX512F__"), std::string::npos) << source;
  EXPECT_EQ(source.find("ingot_t12"), std::string::npos) << source;
  expect_exact_stencil(t, source, kAvx2VectorLanes);
  // 3 chunks of a 20-wide row make 18 accumulators, more than AVX2's registers hold: no tile.
  StencilTile wide = stencil_tile(20, kAvx2VectorLanes);
  EXPECT_EQ(explicit_vector_problems(wide.f.body).size(), 1u);
}

// A GEMM tile is an outer product: rows of A times 2 vectors of B's row k. Grouped by operand it would hold every row's
// broadcast at once (14 rows: 28 accumulators + 14 broadcasts + 1 operand overflow AVX-512's 32 registers), so its
// operands are loaded first and its FMAs run row by row, one broadcast live at a time; with AVX-512 also where it fits
// (8 rows). Both compute exactly what a plain loop does, with and without AVX-512. (AVX2 tiles that fit keep operand
// order: the AVX2 goldens.)
constexpr int64_t kGemmTileK = 5;
LoopFunction gemm_tile(int64_t rows, int64_t cols = 32, int64_t lanes = kAvx512VectorLanes) {
  const int64_t K = kGemmTileK;
  Buffer a = global_buffer("A", {rows, K}), b = global_buffer("B", {K, cols}), c = global_buffer("C", {rows, cols});
  Expr k = var("k"), r = var("r"), j = var("j"), flat = var("flat");
  Expr element = r * cols + j;
  Stmt tile = for_loop(
      k, K, LoopKind::kSerial,
      for_loop(r, rows, LoopKind::kUnrolled,
               for_loop(j, cols, LoopKind::kVectorized,
                        store(c, element, load(c, element) + load(a, r * K + k) * load(b, k * cols + j)), lanes)));
  return LoopFunction{"gemm_tile",
                      {a, b},
                      {c},
                      {},
                      seq({for_loop(flat, rows * cols, LoopKind::kSerial, store(c, flat, Expr(0.0))), tile})};
}

// Runs gemm_tile's printed source compiled with and without the ISA of its vectors of `lanes` lanes and checks C = A B
// exactly (small integers keep every sum exact in any order).
void expect_exact_gemm(const std::string& source, const LoopFunction& f, int64_t rows, int64_t cols, int64_t lanes) {
  const int64_t K = kGemmTileK;
  HostTensor as(DType::kFloat32, {rows, K}), bs(DType::kFloat32, {K, cols});
  for (int64_t i = 0; i < rows * K; ++i) as.f32()[i] = float(i % 7) - 3.0f;
  for (int64_t i = 0; i < K * cols; ++i) bs.f32()[i] = float(i % 5) - 2.0f;
  for (const CompiledLibrary& library : {compile_cpp(source), compile_cpp(source, without_vector_isa(lanes))}) {
    KernelModule module(library.path, f);
    HostTensor cs(DType::kFloat32, {rows, cols});
    module.run({&as, &bs}, {&cs});
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t n = 0; n < cols; ++n) {
        float want = 0;
        for (int64_t step = 0; step < K; ++step) want += as.f32()[i * K + step] * bs.f32()[step * cols + n];
        ASSERT_EQ(cs.f32()[i * cols + n], want) << i << ", " << n;
      }
  }
}

TEST(CppPrinter, RunsAnOuterProductTileRowByRow) {
  const char* row_order = R"(      const ingot_f32xN ingot_v0 = ingot_load_masked_f32xN((__mmask16)0xFFFF, &B[k * 32]);
      const ingot_f32xN ingot_v1 = ingot_load_masked_f32xN((__mmask16)0xFFFF, &B[k * 32 + 16]);
      ingot_t0 += A[k] * ingot_v0;
      ingot_t1 += A[k] * ingot_v1;
      ingot_t2 += A[k + 5] * ingot_v0;
      ingot_t3 += A[k + 5] * ingot_v1;
)";
  for (int64_t rows : {14, 8}) {
    SCOPED_TRACE(std::to_string(rows) + " rows");
    LoopFunction f = gemm_tile(rows);
    std::string source = print_cpp(f);
    EXPECT_NE(source.find(row_order), std::string::npos) << source;
    expect_exact_gemm(source, f, rows, 32, kAvx512VectorLanes);
  }
}

// With AVX2's 16 registers, an outer product of 7 rows x 2 whole vectors (14 accumulators, 2 operands and a broadcast:
// 17) keeps the first vector of B in a register and reads the second from memory in each of its FMAs
// (ingot_fma_from_memory). With a row of 12 columns (its last chunk masked) the tile is no tile of plain operands, and
// 14 accumulators are more than another AVX2 tile may hold: the loops as written. Both compute exactly what a plain
// loop does, with and without AVX2.
TEST(CppPrinter, AnAvx2OuterProductReadsTheOperandsThatDoNotFitFromMemory) {
  const int64_t rows = 7;
  for (int64_t cols : {16, 12}) {
    SCOPED_TRACE(std::to_string(cols) + " columns");
    LoopFunction f = gemm_tile(rows, cols, kAvx2VectorLanes);
    const std::string source = print_cpp(f);
    if (cols == 16) {
      EXPECT_TRUE(explicit_vector_problems(f.body).empty());
      EXPECT_NE(source.find("ingot_f32xN ingot_t13 = "), std::string::npos) << source;
      EXPECT_NE(source.find("const ingot_f32xN ingot_v0 = ingot_load_f32xN(&B[k * 16]);"), std::string::npos) << source;
      EXPECT_NE(source.find("ingot_t1 = ingot_fma_from_memory(ingot_t1, A[k], &B[k * 16 + 8]);"), std::string::npos)
          << source;
      EXPECT_EQ(source.find("const ingot_f32xN ingot_v1 = "), std::string::npos) << source;
    } else {
      EXPECT_EQ(explicit_vector_problems(f.body).size(), 1u);
      EXPECT_EQ(source.find("ingot_t0"), std::string::npos) << source;
    }
    expect_exact_gemm(source, f, rows, cols, kAvx2VectorLanes);
  }
}

// Runs a printed y = f(X) kernel compiled with and without the ISA of its vectors of `lanes` lanes and checks y against
// `want` exactly (small integers keep every sum exact in any order).
void expect_exact_both_ways(const std::string& source, const LoopFunction& f, const HostTensor& x,
                            const std::vector<float>& want, int64_t lanes) {
  for (const CompiledLibrary& library : {compile_cpp(source), compile_cpp(source, without_vector_isa(lanes))}) {
    KernelModule module(library.path, f);
    HostTensor y(DType::kFloat32, {int64_t(want.size())});
    module.run({&x}, {&y});
    for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(y.f32()[i], want[i]) << i << "\n" << source;
  }
}

// Spatial tiles whose chunks share an operand or whose accumulators would overlap, and a padded stride-2 window
// whose border comparisons move backwards, in AVX-512's vectors and in AVX2's.
class SpatialTiles : public ::testing::TestWithParam<int64_t> {};

TEST_P(SpatialTiles, KeepEveryLaneTheyRead) {
  const int64_t vector_lanes = GetParam();
  Expr ci = var("ci"), v = var("v"), r = var("r"), flat = var("flat");
  auto tile_of = [&](const Buffer& y, int64_t copies, int64_t lanes, int64_t taps, const Expr& element,
                     const Expr& term) {
    return seq({for_loop(flat, y->num_elements(), LoopKind::kSerial, store(y, flat, Expr(0.0))),
                for_loop(r, taps, LoopKind::kSerial,
                         for_loop(ci, copies, LoopKind::kUnrolled,
                                  for_loop(v, lanes, LoopKind::kVectorized, store(y, element, load(y, element) + term),
                                           vector_lanes)))});
  };
  HostTensor xs(DType::kFloat32, {48});
  for (int64_t i = 0; i < 48; ++i) xs.f32()[i] = float(i % 7) - 3.0f;

  // Rows of 20 lanes (chunks of 16 and 4, or 8, 8 and 4) reading X at 16 ci + v + r: the last chunk of row 0 and the
  // first chunk of row 1 both read X[r + 16 ..], which must be loaded with the wider chunk's lanes.
  Buffer x = global_buffer("X", {48}), y = global_buffer("y", {40});
  LoopFunction shared{"shared", {x}, {y}, {}, tile_of(y, 2, 20, 2, ci * 20 + v, load(x, ci * 16 + v + r))};
  std::string source = print_cpp(shared);
  EXPECT_NE(source.find("ingot_t3 = "), std::string::npos) << source;
  std::vector<float> want(40, 0.0f);
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t l = 0; l < 20; ++l)
      for (int64_t t = 0; t < 2; ++t) want[c * 20 + l] += xs.f32()[c * 16 + l + t];
  expect_exact_both_ways(source, shared, xs, want, vector_lanes);

  // Rows 8 elements apart but 16 lanes wide overlap: no spatial tile (lowering refuses the decision), the loops as
  // written.
  Buffer y24 = global_buffer("y", {24});
  LoopFunction overlap{"overlap", {x}, {y24}, {}, tile_of(y24, 2, 16, 2, ci * 8 + v, load(x, v + r))};
  EXPECT_EQ(explicit_vector_problems(overlap.body).size(), 1u);
  EXPECT_EQ(explicit_vector_problems(shared.body).size(), 0u);
  source = print_cpp(overlap);
  EXPECT_EQ(source.find("ingot_t0"), std::string::npos) << source;
  want.assign(24, 0.0f);
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t l = 0; l < 16; ++l)
      for (int64_t t = 0; t < 2; ++t) want[c * 8 + l] += xs.f32()[l + t];
  expect_exact_both_ways(source, overlap, xs, want, vector_lanes);

  // A padded stride-2 window of 3 taps over a row of 40 (18 outputs, one chunk): X[2 v + r - 1] inside
  // 0 <= 2 v + r - 1 <= 39, written as comparisons that move forwards and backwards by two lanes.
  Buffer y36 = global_buffer("y", {36});
  Expr at = v * 2 + r - 1;
  Expr inside = logical_and(logical_and(ge(at, 0), ge(int64_t(39) - at, 0)), lt(int64_t(0) - at, 1));
  LoopFunction strided{"strided",
                       {x},
                       {y36},
                       {},
                       tile_of(y36, 2, 18, 3, ci * 18 + v, select(inside, load(x, at), Expr(0.0)) * load(x, ci + 40))};
  source = print_cpp(strided);
  EXPECT_NE(source.find("ingot_load_even_f32xN(ingot_lane_max("), std::string::npos) << source;
  EXPECT_NE(source.find("ingot_ceil_div("), std::string::npos) << source;
  want.assign(36, 0.0f);
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t l = 0; l < 18; ++l)
      for (int64_t t = 0; t < 3; ++t)
        if (2 * l + t - 1 >= 0 && 2 * l + t - 1 <= 39) want[c * 18 + l] += xs.f32()[2 * l + t - 1] * xs.f32()[c + 40];
  expect_exact_both_ways(source, strided, xs, want, vector_lanes);
}

INSTANTIATE_TEST_SUITE_P(Avx512AndAvx2, SpatialTiles, ::testing::Values(kAvx512VectorLanes, kAvx2VectorLanes));

// A tile of one element (an unrolled loop of extent 1, as hand-written IR may have) still names no loop variable
// that the printed code does not declare.
TEST(CppPrinter, FoldsATileOfOneElement) {
  const int64_t rows = 3, n = 32;
  Buffer w = global_buffer("W", {rows, n}), x = global_buffer("x", {n}), y = global_buffer("y", {rows});
  Expr r = var("r"), one = var("solo"), k = var("k");
  Stmt tile = for_loop(one, 1, LoopKind::kUnrolled,
                       store(y, r + one, load(y, r + one) + load(w, (r + one) * n + k) * load(x, k)));
  LoopFunction f{
      "one_row",
      {w, x},
      {y},
      {},
      for_loop(r, rows, LoopKind::kSerial, seq({store(y, r, Expr(0.0)), for_loop(k, n, LoopKind::kVectorized, tile)}))};
  PrintedCpp printed = print_cpp_with_lines(f);
  EXPECT_EQ(printed.source.find("solo"), std::string::npos) << printed.source;
  expect_exact_gemv(compile_expecting_one_vectorized_loop(printed).path, f, rows, n);
}

// What a register tile cannot be: a guard inside the unrolled loop, or two unrolled iterations folding into one
// element (a reduction axis unrolled inside). The loop is then printed plainly, not simd, and still sums right.
TEST(CppPrinter, PrintsAnUnfoldableTilePlainly) {
  const int64_t rows = 6, n = 16;
  Buffer w = global_buffer("W", {rows, n}), x = global_buffer("x", {n}), y = global_buffer("y", {rows});
  Expr ro = var("ro"), ri = var("ri"), k = var("k");
  Expr row = ro * 4 + ri;
  Stmt guarded = for_loop(ri, 4, LoopKind::kUnrolled,
                          if_then_else(lt(row, rows), store(y, row, load(y, row) + load(w, row * n + k) * load(x, k))));
  Stmt body = for_loop(ro, 2, LoopKind::kSerial,
                       seq({for_loop(ri, 4, LoopKind::kUnrolled, if_then_else(lt(row, rows), store(y, row, Expr(0.0)))),
                            for_loop(k, n, LoopKind::kVectorized, guarded)}));
  LoopFunction f{"guarded_tile", {w, x}, {y}, {}, body};
  PrintedCpp printed = print_cpp_with_lines(f);
  EXPECT_TRUE(printed.vectorized_loops.empty()) << printed.source;
  EXPECT_NE(printed.source.find("not marked simd"), std::string::npos) << printed.source;
  expect_exact_gemv(compile_cpp(printed.source).path, f, rows, n);

  Expr ki = var("ki");
  Stmt same_element = for_loop(ki, 2, LoopKind::kUnrolled,
                               store(y, ro, load(y, ro) + load(w, ro * n + k * 2 + ki) * load(x, k * 2 + ki)));
  LoopFunction g{"unrolled_reduction",
                 {w, x},
                 {y},
                 {},
                 for_loop(ro, rows, LoopKind::kSerial,
                          seq({store(y, ro, Expr(0.0)), for_loop(k, n / 2, LoopKind::kVectorized, same_element)}))};
  printed = print_cpp_with_lines(g);
  EXPECT_EQ(printed.source.find("ingot_acc"), std::string::npos) << printed.source;
  expect_exact_gemv(compile_cpp(printed.source).path, g, rows, n);
}

// log in a simd loop calls glibc's SIMD version (libmvec) where the build links it: the source declares it `omp
// declare simd`, g++ vectorizes the loop and calls _ZGV*_logf. exp, sigmoid, tanh and erf are ingot's own inline
// helpers in the same loop; the values are within a few ulp of the exact functions'.
TEST(CppPrinter, CallsVectorMathInSimdLoops) {
  const int64_t n = 1000;
  Buffer x = global_buffer("x", {n}), y = global_buffer("y", {n});
  Expr i = var("i");
  Expr v = load(x, i);
  Expr value = math::sigmoid(v) + math::tanh(v) * math::erf(v) + math::exp(v) * Expr(0.01) + math::log(v * v + 1.0);
  LoopFunction f{"math", {x}, {y}, {}, for_loop(i, n, LoopKind::kVectorized, store(y, i, value))};
  PrintedCpp printed = print_cpp_with_lines(f);
  EXPECT_NE(printed.source.find("#if defined(INGOT_LIBMVEC)  // glibc's SIMD math (libmvec), linked with -lmvec\n"
                                "#pragma omp declare simd notinbranch\nextern \"C\" float logf(float);\n#endif"),
            std::string::npos)
      << printed.source;
  for (const char* fn : {"expf", "tanhf"}) EXPECT_EQ(printed.source.find(fn), std::string::npos) << fn;
  for (const char* call :
       {"1.0f / (1.0f + ingot_exp_f32(-x[i]))", "ingot_tanh_f32(x[i])", "ingot_erf_f32(x[i])", "ingot_exp_f32(x[i])"})
    EXPECT_NE(printed.source.find(call), std::string::npos) << call << "\n" << printed.source;
  CompiledLibrary library = compile_expecting_one_vectorized_loop(printed);
  KernelModule module(library.path, f);
  HostTensor in(DType::kFloat32, {n}), out(DType::kFloat32, {n});
  for (int64_t j = 0; j < n; ++j) in.f32()[j] = -6.0f + 12.0f * float(j) / float(n);
  module.run({&in}, {&out});
  for (int64_t j = 0; j < n; ++j) {
    double a = in.f32()[j];
    double want = 1 / (1 + std::exp(-a)) + std::tanh(a) * std::erf(a) + std::exp(a) * 0.01 + std::log(a * a + 1);
    EXPECT_NEAR(out.f32()[j], want, 1e-5 * std::max(1.0, std::fabs(want))) << "x = " << a;
  }
  if (!vector_math_flags().empty()) {
    std::string symbols;
    FILE* nm = popen(("nm -D " + library.path).c_str(), "r");
    ASSERT_NE(nm, nullptr);
    for (char buf[512]; fgets(buf, sizeof buf, nm);) symbols += buf;
    pclose(nm);
    EXPECT_TRUE(std::regex_search(symbols, std::regex("_ZGV[a-z]N[0-9]+v_logf"))) << symbols;
    EXPECT_FALSE(std::regex_search(symbols, std::regex("expf|tanhf"))) << symbols;
  }
}

TEST(CppPrinter, SanitizesNamesIntoDistinctIdentifiers) {
  Buffer a = global_buffer("layer.0/w", {2}), b = global_buffer("layer_0_w", {2}), c = global_buffer("int", {2});
  Buffer d = global_buffer("0bias", {2}), e = global_buffer("ingot_run", {2});
  Expr i = var("i.outer");
  LoopFunction f{"names",
                 {a, b, c, d},
                 {e},
                 {},
                 for_loop(i, 2, LoopKind::kSerial, store(e, i, load(a, i) + load(b, i) + load(c, i) + load(d, i)))};
  std::string source = print_cpp(f);
  for (const char* decl :
       {"const float* layer_0_w = ", "const float* layer_0_w_1 = ", "const float* int_1 = ", "const float* v_0bias = ",
        "float* v_ingot_run = ", "for (int64_t i_outer = 0; i_outer < 2; ++i_outer)",
        "v_ingot_run[i_outer] = layer_0_w[i_outer] + layer_0_w_1[i_outer] + int_1[i_outer] + "
        "v_0bias[i_outer];"})
    EXPECT_NE(source.find(decl), std::string::npos) << decl << "\nin:\n" << source;
}

TEST(CppPrinter, UsesPlainDivisionOnlyWhenOperandsAreNonNegative) {
  Buffer y = global_buffer("y", {8}, DType::kInt64), z = global_buffer("z", {8}, DType::kInt64);
  Expr i = var("i");
  LoopFunction f{
      "div",
      {},
      {y, z},
      {},
      for_loop(i, 8, LoopKind::kSerial, seq({store(y, i, i / 4 + i % 3), store(z, i, (i - 4) / 4 + (i - 4) % 3)}))};
  std::string source = print_cpp(f);
  EXPECT_NE(source.find("y[i] = i / 4 + i % 3;"), std::string::npos) << source;
  EXPECT_NE(source.find("z[i] = ingot_floordiv_i64(i - 4, 4) + ingot_floormod_i64(i - 4, 3);"), std::string::npos)
      << source;
}

TEST(CppPrinter, ParenthesizesByPrecedence) {
  Buffer x = global_buffer("x", {8}), y = global_buffer("y", {8});
  Expr i = var("i");
  Expr v = load(x, i);
  LoopFunction f{"prec",
                 {x},
                 {y},
                 {},
                 for_loop(i, 8, LoopKind::kSerial,
                          store(y, i, (v - (v - 1.0)) * (v + 2.0) / (v * v) + select(lt(v, 0.0), -v, v)))};
  EXPECT_NE(print_cpp(f).find("y[i] = (x[i] - (x[i] - 1.0f)) * (x[i] + 2.0f) / (x[i] * x[i]) + "
                              "(x[i] < 0.0f ? 0.0f - x[i] : x[i]);"),
            std::string::npos)
      << print_cpp(f);
}

// Every f32 constant must reach the compiled code bit for bit, including infinities, NaN and -0.
TEST(CppPrinter, FloatLiteralsRoundTripExactly) {
  std::vector<double> values = {0.1,
                                1.0 / 3.0,
                                3.0,
                                -2.5,
                                1e20,
                                3.4028234663852886e38,
                                1.401298464324817e-45,
                                1.17549435e-38,
                                -0.0,
                                16777216.0,
                                123456.789,
                                std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity()};
  Buffer y = global_buffer("y", {int64_t(values.size()) + 1});
  std::vector<Stmt> stores;
  for (size_t n = 0; n < values.size(); ++n) stores.push_back(store(y, int64_t(n), float_imm(values[n])));
  stores.push_back(store(y, int64_t(values.size()), float_imm(std::numeric_limits<double>::quiet_NaN())));
  LoopFunction f{"literals", {}, {y}, {}, seq(stores)};
  std::string source = print_cpp(f);
  EXPECT_NE(source.find("y[0] = 0.1f;"), std::string::npos) << source;
  EXPECT_NE(source.find("y[2] = 3.0f;"), std::string::npos) << source;
  EXPECT_NE(source.find("y[4] = 1e+20f;"), std::string::npos) << source;
  EXPECT_NE(source.find("__builtin_inff()"), std::string::npos) << source;

  KernelModule module(compile_cpp(source).path, f);
  HostTensor out(DType::kFloat32, {int64_t(values.size()) + 1});
  module.run({}, {&out});
  for (size_t n = 0; n < values.size(); ++n)
    EXPECT_EQ(std::bit_cast<uint32_t>(out.f32()[n]), std::bit_cast<uint32_t>(float(values[n])))
        << "value " << values[n] << " came back as " << out.f32()[n];
  EXPECT_TRUE(std::isnan(out.f32()[values.size()]));
}

TEST(CppPrinter, LargeLocalBuffersGoOnTheHeap) {
  Buffer y = global_buffer("y", {4}), big = make_buffer("big", DType::kFloat32, {65536}, MemoryScope::kLocal);
  Expr i = var("i");
  LoopFunction f{
      "heap",
      {},
      {y},
      {},
      for_loop(
          i, 4, LoopKind::kParallel,
          allocate(big, seq({store(big, 65535 - i, cast(DType::kFloat32, i)), store(y, i, load(big, 65535 - i))})))};
  std::string source = print_cpp(f);
  EXPECT_NE(source.find("void* big_storage = std::malloc(262207);"), std::string::npos) << source;
  EXPECT_NE(source.find("std::free(big_storage);"), std::string::npos) << source;
  EXPECT_EQ(source.find("float big["), std::string::npos) << source;
  KernelModule module(compile_cpp(source).path, f);
  HostTensor out(DType::kFloat32, {4});
  module.run({}, {&out});
  for (int n = 0; n < 4; ++n) EXPECT_EQ(out.f32()[n], float(n));
}

// bf16 buffers hold bit patterns that casts convert: f32(b) widens exactly, bf16(x) rounds to nearest even (and keeps
// a NaN a NaN), as HostTensor does, so a compiled program and the interpreter agree bit for bit.
TEST(CppPrinter, Bf16BuffersAreConvertedByCasts) {
  Expr i = var("i");
  Buffer in = global_buffer("in", {6}, DType::kBFloat16), out = global_buffer("out", {6}, DType::kBFloat16);
  Buffer wide = global_buffer("wide", {6});
  Stmt body = for_loop(i, 6, LoopKind::kVectorized,
                       seq({store(wide, i, cast(DType::kFloat32, load(in, i)) * 2.0),
                            store(out, i, cast(DType::kBFloat16, load(wide, i) + float_imm(1.0 / 128)))}));
  LoopFunction f{"bf16", {in}, {out, wide}, {}, body};
  const std::string source = print_cpp(f);
  EXPECT_NE(source.find("const uint16_t* in"), std::string::npos) << source;
  EXPECT_NE(source.find("ingot_f32_to_bf16(wide[i] + 0.0078125f)"), std::string::npos) << source;
  KernelModule module(compile_cpp(source).path, f);
  const std::vector<double> values = {1.0, -3.5, 1.0 + 1.0 / 128, 0.0, 1e30, std::nan("")};
  HostTensor input(DType::kBFloat16, {6}), result(DType::kBFloat16, {6}), doubled(DType::kFloat32, {6});
  for (int n = 0; n < 6; ++n) input.set(n, values[size_t(n)]);
  module.run({&input}, {&result, &doubled});
  HostTensor expected(DType::kBFloat16, {6});
  for (int n = 0; n < 6; ++n) {
    if (n < 5) {
      EXPECT_EQ(doubled.f32()[n], float(2 * input.get(n))) << n;
    }
    expected.set(n, double(float(2 * input.get(n)) + float(1.0 / 128)));
    if (n < 5) {
      EXPECT_EQ(result.get(n), expected.get(n)) << n;
    }
  }
  EXPECT_TRUE(std::isnan(result.get(5)));
  // Ties, both to even: 2 + 2^-7 lies halfway between 2 and 2 + 2^-6, 2 + 2^-6 + 2^-7 between 2 + 2^-6 and 2 + 2^-5.
  EXPECT_EQ(result.get(0), 2.0);
  EXPECT_EQ(result.get(2), 2.0 + 1.0 / 32);
}

// A GEMV tile of bf16 products under a guard that does not move with k (the tail of a split of its rows) keeps the
// guard around its vdpbf16ps steps: the padded rows 8 .. 11 are not written.
TEST(CppPrinter, ABf16GemvTileKeepsItsOuterGuard) {
  const int64_t rows = 8, padded = 12, n = 64;
  Buffer w = global_buffer("W", {padded, n}, DType::kBFloat16), x = global_buffer("x", {n});
  Buffer y = global_buffer("y", {padded});
  Expr ro = var("ro"), ri = var("ri"), k = var("k");
  Expr row = ro * 4 + ri;
  Expr term = cast(DType::kFloat32, cast(DType::kBFloat16, load(x, k))) * cast(DType::kFloat32, load(w, row * n + k));
  Stmt tile = if_then_else(lt(ro, rows / 4), for_loop(ri, 4, LoopKind::kUnrolled, store(y, row, load(y, row) + term)));
  Stmt body =
      for_loop(ro, padded / 4, LoopKind::kSerial,
               seq({if_then_else(lt(ro, rows / 4), for_loop(ri, 4, LoopKind::kUnrolled, store(y, row, Expr(0.0)))),
                    for_loop(k, n, LoopKind::kVectorized, tile, kAvx512VectorLanes)}));
  LoopFunction f{"guarded_bf16_gemv", {w, x}, {y}, {}, body};
  const std::string source = print_cpp(f);
  EXPECT_NE(source.find("#if defined(__AVX512BF16__) && defined(__AVX512BW__)\n    if (ro < 2) {\n"), std::string::npos)
      << source;
  if (!host_has_avx512_bf16()) GTEST_SKIP() << "this CPU has no AVX-512 BF16: the tile was printed, not run";
  HostTensor weights(DType::kBFloat16, {padded, n}), input(DType::kFloat32, {n}), out(DType::kFloat32, {padded});
  for (int64_t i = 0; i < padded * n; ++i) weights.set(i, double((i * 7) % 13) / 8 - 0.75);
  for (int64_t i = 0; i < n; ++i) input.f32()[i] = float((i * 5) % 11) / 4 - 1.25f;
  for (int64_t i = 0; i < padded; ++i) out.f32()[i] = -7.0f;
  KernelModule module(compile_cpp(source).path, f);
  module.run({&weights, &input}, {&out});
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;  // the inputs are bf16 values already: exact products, sums of few bits
    for (int64_t i = 0; i < n; ++i) sum += weights.get(r * n + i) * double(input.f32()[i]);
    EXPECT_NEAR(out.f32()[r], sum, 1e-4 * (1 + std::fabs(sum))) << r;
  }
  for (int64_t r = rows; r < padded; ++r) EXPECT_EQ(out.f32()[r], -7.0f) << r;
}

void expect_rejected(const LoopFunction& f, const std::string& fragment) {
  try {
    print_cpp(f);
    FAIL() << "printing must fail with a message containing '" << fragment << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(CppPrinter, RejectsWhatTheCpuBackendCannotRun) {
  Expr i = var("i");
  Buffer h = global_buffer("h", {4}, DType::kFloat16), y = global_buffer("y", {4});
  expect_rejected(LoopFunction{"half", {h}, {y}, {}, for_loop(i, 4, LoopKind::kSerial, store(y, i, 1.0))}, "f16");
  Buffer bh = global_buffer("bh", {4}, DType::kBFloat16);
  expect_rejected(
      LoopFunction{
          "bhalf", {}, {bh}, {}, for_loop(i, 4, LoopKind::kSerial, store(bh, i, float_imm(1.0, DType::kBFloat16)))},
      "bf16");
  expect_rejected(LoopFunction{"unbound", {}, {y}, {}, store(y, var("j"), 1.0)}, "variable 'j'");
  Buffer ghost = global_buffer("ghost", {4});
  expect_rejected(LoopFunction{"unknown", {}, {y}, {}, for_loop(i, 4, LoopKind::kSerial, store(ghost, i, 1.0))},
                  "buffer 'ghost'");
  expect_rejected(LoopFunction{"nested barrier",
                               {},
                               {y},
                               {},
                               for_loop(i, 4, LoopKind::kSerial, seq({store(y, i, 1.0), barrier(BarrierKind::kGrid)}))},
                  "grid barrier");
  expect_rejected(LoopFunction{"global alloc", {}, {y}, {}, allocate(global_buffer("g", {4}), store(y, 0, 1.0))},
                  "global buffer 'g'");
}

// A prefetch between two stages: each thread fetches its static share of the buffer's 64-byte lines into L2,
// without waiting for the others, then meets them at the barrier. It changes no value.
TEST(CppPrinter, PrefetchesEachThreadsShareOfTheLinesBeforeTheBarrier) {
  const int64_t n = 1000;  // 4000 bytes: 63 lines, the last one partly used
  Buffer x = global_buffer("x", {n}), w = global_buffer("w", {n}), t = global_buffer("t", {n}),
         y = global_buffer("y", {n});
  Expr i = var("i"), j = var("j");
  LoopFunction f{
      "prefetched",
      {x, w},
      {y},
      {t},
      seq({for_loop(i, n, LoopKind::kParallel, store(t, i, load(x, i) * 2.0)), prefetch(w), barrier(BarrierKind::kGrid),
           for_loop(j, n, LoopKind::kParallel, store(y, j, load(t, n - 1 - j) * load(w, j)))})};
  std::string source = print_cpp(f);
  EXPECT_NE(source.find(R"(    ingot_stage_0(x, t);
    #pragma omp for schedule(static) nowait
    for (int64_t ingot_line = 0; ingot_line < 63; ++ingot_line)
      __builtin_prefetch(reinterpret_cast<const char*>(w) + ingot_line * 64, 0, 2);  // read, into L2
    #pragma omp barrier
    ingot_stage_1(t, w, y);
)"),
            std::string::npos)
      << source;
  KernelModule module(compile_cpp(source).path, f);
  HostTensor xs(DType::kFloat32, {n}), ws(DType::kFloat32, {n}), out(DType::kFloat32, {n});
  for (int64_t k = 0; k < n; ++k) {
    xs.f32()[k] = float(k % 13) - 6.0f;
    ws.f32()[k] = float(k % 7) * 0.5f;
  }
  module.run({&xs, &ws}, {&out});
  for (int64_t k = 0; k < n; ++k) ASSERT_EQ(out.f32()[k], xs.f32()[n - 1 - k] * 2.0f * ws.f32()[k]) << k;
  // Only between top-level stages.
  expect_rejected(
      LoopFunction{
          "nested prefetch", {w}, {y}, {}, for_loop(i, 4, LoopKind::kSerial, seq({prefetch(w), store(y, i, 1.0)}))},
      "prefetch of 'w' inside a loop");
}

// A 1 x 1 convolution's plane tile broadcasts one weight per row at each input channel: with 512 channels each row
// is prefetched 256 elements ahead at every step; the map it loads as vectors is not, nor are rows shorter than that.
TEST(CppPrinter, PrefetchesTheWeightRowsALongReductionBroadcasts) {
  auto prefetches = [](int64_t in_channels) {
    Program p =
        make_workload("task:resnext_conv1x1", {{"in_channels", in_channels}, {"out_channels", 64}, {"map_size", 8}});
    std::string source =
        compile_to_cpp_source(p, make_strategy_program(p, "global", test_support::avx512_cpu()).schedule).source;
    std::vector<std::string> lines;
    static const std::regex prefetch(R"(__builtin_prefetch\(&[^;]*;)");
    for (auto it = std::sregex_iterator(source.begin(), source.end(), prefetch); it != std::sregex_iterator(); ++it)
      lines.push_back(it->str());
    return lines;
  };
  std::vector<std::string> long_rows = prefetches(512);
  ASSERT_EQ(long_rows.size(), 4u);  // the tile's four output channels
  EXPECT_EQ(long_rows[0], "__builtin_prefetch(&conv_weight[conv_rc + relu_i_j_o * 2048 + 256]);");
  for (const std::string& line : long_rows) EXPECT_NE(line.find("conv_weight["), std::string::npos) << line;
  EXPECT_TRUE(prefetches(128).empty());
}

// On a 28 x 28 map the plane tile loads 112 of a plane's 784 pixels per step (7 vectors, then a gap to the next input
// channel's plane): each step also prefetches those 7 lines 8 steps ahead. An 8 x 8 plane (above) is read whole, a
// stream without gaps, and is not.
TEST(CppPrinter, PrefetchesTheMapRowsAPlaneTileLoadsAPlaneApart) {
  Program p = make_workload("task:resnext_conv1x1", {{"in_channels", 256}, {"out_channels", 64}, {"map_size", 28}});
  const std::string source =
      compile_to_cpp_source(p, make_strategy_program(p, "global", test_support::avx512_cpu()).schedule).source;
  std::vector<std::string> map_rows;
  static const std::regex prefetch(R"(__builtin_prefetch\(&feature_map\[([^\]]*)\]\);)");
  for (auto it = std::sregex_iterator(source.begin(), source.end(), prefetch); it != std::sregex_iterator(); ++it)
    map_rows.push_back((*it)[1].str());
  ASSERT_EQ(map_rows.size(), 7u) << source;
  for (size_t n = 0; n < map_rows.size(); ++n) {
    const std::string ahead = " + " + std::to_string(8 * 784 + 16 * int64_t(n));  // 8 planes, then the n-th vector
    EXPECT_EQ(map_rows[n].rfind(ahead), map_rows[n].size() - ahead.size()) << map_rows[n];
    EXPECT_EQ(map_rows[n].find("conv_rc * 784"), 0u) << map_rows[n];
  }
}

// A channel tile of a 1 x 1 convolution on a 14 x 14 map (its weight packed) broadcasts 14 pixels of each input
// channel, a plane (196 elements) from the last step's: each step prefetches the lines of those pixels 16 steps
// ahead, the first and the last pixel (14 floats span one or two lines); and its packed weight's panel 32 steps ahead,
// the two lines its two vectors of output channels read at a step.
TEST(CppPrinter, PrefetchesTheStridedPixelsAChannelTileBroadcasts) {
  Tensor x = placeholder("x", {1, 256, 14, 14}), w = placeholder("w", {64, 256, 1, 1}), b = placeholder("b", {64});
  Program p({relu("y", conv2d("c", x, w, b))}, "pointwise_relu");
  FixedScheduleOptions options;
  options.weights = {"w", "b"};
  options.simd_fp32_lanes = 16;
  const Target target = test_support::avx512_cpu();
  const std::string source =
      compile_to_cpp_source(p, strategy_schedule(p, make_plan("global", p, target), options)).source;
  ASSERT_NE(source.find("ingot_store_strided_f32xN(16, "), std::string::npos) << source;  // a channel tile
  std::vector<std::string> lines;
  static const std::regex prefetch(R"(__builtin_prefetch\(&[^;]*;)");
  for (auto it = std::sregex_iterator(source.begin(), source.end(), prefetch); it != std::sregex_iterator(); ++it)
    lines.push_back(it->str());
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "__builtin_prefetch(&x[c_conv_rc * 196 + y_i_l_m_o_j_o / 2 * 14 + 3136]);",  // 16 x 196
                       "__builtin_prefetch(&x[c_conv_rc * 196 + y_i_l_m_o_j_o / 2 * 14 + 3149]);",
                       "__builtin_prefetch(&w[c_conv_rc * 32 + y_i_l_m_o_j_o % 2 * 8192 + 1024]);",  // 32 x 32
                       "__builtin_prefetch(&w[c_conv_rc * 32 + y_i_l_m_o_j_o % 2 * 8192 + 1040]);"}))
      << source;
}

// A depthwise 5 x 5 convolution's stencil tile (4 channels x 7 rows of a 14 x 14 map) writes its 25 taps out, so that
// each input row is loaded once for every row whose window covers it (4 channels x 11 rows x 5 shifts: 220 loads for
// 700 FMAs, not 700) and its border masks are constants; a 7 x 7 stride-2 stem's channel tile, whose taps read
// weights of their own, keeps them loops (its taps outside its 3 input channels, which the compiler unrolls, as a row's
// 7 taps); a 1 x 1 convolution's channel tile keeps its 256 input channels a loop.
TEST(CppPrinter, AStencilTileWritesItsTapsOutAndAChannelTileUnrollsThem) {
  auto tile_of = [](const Program& p, const FixedScheduleOptions& options) {
    const std::string source =
        compile_to_cpp_source(p, strategy_schedule(p, make_plan("global", p, test_support::avx512_cpu()), options))
            .source;
    const size_t begin = source.find("#if defined(__AVX512F__)\n", source.find("ingot_stage_0"));
    EXPECT_NE(begin, std::string::npos) << source;
    return begin == std::string::npos ? std::string() : source.substr(begin, source.find("#else", begin) - begin);
  };
  auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  auto reduction_loops = [](const std::string& source) {
    std::vector<std::string> found;  // "<pragma or nothing> | loop variable" of each reduction loop
    static const std::regex loop(R"(((#pragma GCC unroll \d+)\s+)?for \(int64_t (\w+_r[cyx]) = 0;)");
    for (auto it = std::sregex_iterator(source.begin(), source.end(), loop); it != std::sregex_iterator(); ++it)
      found.push_back((*it)[2].str() + " | " + (*it)[3].str());
    return found;
  };
  FixedScheduleOptions options;
  options.simd_fp32_lanes = 16;
  Conv2dAttrs depthwise;
  depthwise.padding = {2, 2, 2, 2};
  depthwise.groups = 256;
  Tensor x = placeholder("x", {1, 256, 14, 14}), w = placeholder("w", {256, 1, 5, 5});
  const std::string dw = tile_of(Program({conv2d("c", x, w, Tensor(), depthwise)}, "depthwise"), options);
  EXPECT_TRUE(reduction_loops(dw).empty()) << dw;
  EXPECT_EQ(count(dw, " += "), 4u * 7u * 25u) << dw;
  EXPECT_EQ(count(dw, "const ingot_f32xN ingot_v"), 4u * 11u * 5u) << dw;

  Conv2dAttrs stem;
  stem.stride = {2, 2};
  stem.padding = {3, 3, 3, 3};
  Tensor image = placeholder("image", {1, 3, 64, 64}), stem_w = placeholder("stem_w", {64, 3, 7, 7});
  options.weights = {"stem_w"};
  const std::string channel_tile = tile_of(Program({conv2d("s", image, stem_w, Tensor(), stem)}, "stem"), options);
  ASSERT_NE(channel_tile.find("ingot_store_strided_f32xN"), std::string::npos) << channel_tile;  // a channel tile
  EXPECT_EQ(reduction_loops(channel_tile),
            (std::vector<std::string>{" | s_ry", "#pragma GCC unroll 7 | s_rx", "#pragma GCC unroll 3 | s_rc"}))
      << channel_tile;

  Tensor y = placeholder("y", {1, 256, 14, 14}), v = placeholder("v", {64, 256, 1, 1});
  options.weights = {"v"};
  EXPECT_EQ(reduction_loops(tile_of(Program({conv2d("d", y, v)}, "pointwise"), options)),
            (std::vector<std::string>{" | d_rc", " | d_ry", " | d_rx"}));
}

// The next-panel prefetches (next_panel_prefetches) of a GEMM's packed weight, as printed: each line of the form
//   __builtin_prefetch(reinterpret_cast<const char*>(&w[ingot_min_i64(P + 1, last) * S]) + (step) * share, 0, 2);
std::vector<std::smatch> next_panel_prefetches(const std::string& source) {
  static const std::regex line(
      R"(__builtin_prefetch\(reinterpret_cast<const char\*>\(&w\[ingot_min_i64\((\w+) \+ 1, (\d+)\) \* (\d+)\]\) \+ \(([^;]*)\) \* (\d+), 0, 2\);)");
  std::vector<std::smatch> found;
  for (auto it = std::sregex_iterator(source.begin(), source.end(), line); it != std::sregex_iterator(); ++it)
    found.push_back(*it);
  return found;
}

// A 128 x 256 x 512 GEMM with its weight packed in panels: each step of the panel loop reads one panel (256 rows of
// the panel's columns) in every block of rows of x. Its tile prefetches the next panel into L2, spread over the
// blocks of rows and the steps of k: the whole panel (its bytes = the panel's elements x 4) over blocks x 256 steps,
// never more than a line a step, and every panel but the first is prefetched once. With 8 rows of x there is one
// block of rows, which reads the panel once: nothing to prefetch it for.
TEST(CppPrinter, PrefetchesTheNextPanelOfAPackedWeightWhileTheBlocksOfRowsReadThisOne) {
  FixedScheduleOptions options;
  options.weights = {"w"};
  options.simd_fp32_lanes = 16;
  const Target target = test_support::avx512_cpu();
  Tensor x = placeholder("x", {128, 256}), w = placeholder("w", {256, 512});
  Program gemm({matmul("y", x, w)}, "gemm");
  const Schedule schedule = strategy_schedule(gemm, make_plan("global", gemm, target), options);
  const std::string source = compile_to_cpp_source(gemm, schedule).source;
  static const std::regex packed(R"(f32\[\d+, 256, \d+\] w \(input\))");  // panels x k x columns
  ASSERT_TRUE(std::regex_search(source, packed)) << source;
  const std::vector<std::smatch> found = next_panel_prefetches(source);
  ASSERT_EQ(found.size(), 1u) << source;
  const std::smatch& m = found[0];
  const int64_t last = std::stoll(m[2]), panel = std::stoll(m[3]), share = std::stoll(m[5]);
  EXPECT_EQ((last + 1) * panel, 256 * 512);  // panels of the whole weight
  const std::regex panel_loop("for \\(int64_t " + m[1].str() + " = 0; " + m[1].str() + " < " +
                              std::to_string(last + 1) + "; \\+\\+" + m[1].str() + "\\)");
  EXPECT_TRUE(std::regex_search(source, panel_loop)) << "the prefetch's panel loop, " << last + 1 << " steps";
  const int64_t row_blocks = panel * 4 / share / 256;  // the panel's bytes over its steps, 256 of k per block
  EXPECT_EQ(row_blocks * 256 * share, panel * 4) << m.str();
  EXPECT_GE(row_blocks, 2) << m.str();
  EXPECT_LE(share, 64) << m.str();
  EXPECT_NE(m[4].str().find("_k"), std::string::npos) << m.str();  // the step counts k

  Tensor few = placeholder("x", {8, 256});
  Program once({matmul("y", few, w)}, "gemm_once");
  const Schedule once_schedule = strategy_schedule(once, make_plan("global", once, target), options);
  const std::string once_source = compile_to_cpp_source(once, once_schedule).source;
  ASSERT_TRUE(std::regex_search(once_source, packed)) << once_source;
  EXPECT_TRUE(next_panel_prefetches(once_source).empty()) << once_source;
}

// A grouped 3 x 3 convolution's stencil tile reads a few rows of one input channel per step of its channel loop;
// at the top of each step it prefetches the lines of the next channel's rows (196 elements on), except at the last:
// two output rows and three taps read rows -1 to 2 of the 14 x 14 plane, elements -15 to 42 (58 floats: 5 lines).
TEST(CppPrinter, PrefetchesTheNextChannelsRowsOfAStencil) {
  Program p = make_workload("task:resnext_conv3x3_grouped", {{"channels", 64}, {"groups", 8}, {"map_size", 14}});
  std::string source =
      compile_to_cpp_source(p, make_strategy_program(p, "global", test_support::avx512_cpu()).schedule).source;
  EXPECT_NE(source.find(R"(for (int64_t conv_rc = 0; conv_rc < 8; ++conv_rc) {
              if (conv_rc + 1 < 8)
                for (int64_t ingot_line = 0; ingot_line < 5; ++ingot_line)
                  __builtin_prefetch(reinterpret_cast<const char*>(&feature_map[conv_rc * 196 + relu_i_j_o_l_o / 14 * 1568 + relu_i_j_o_l_o % 7 * 28 + 181]) + ingot_line * 64);
              const ingot_f32xN ingot_v0 = )"),
            std::string::npos)
      << source;
}

TEST(CppPrinter, WorkspaceBuffersAre64ByteAligned) {
  Buffer a = global_buffer("a", {3}), b = global_buffer("b", {5}, DType::kInt64),
         c = global_buffer("c", {1}, DType::kBool);
  LoopFunction f{"ws", {}, {}, {a, b, c}, nullptr};
  CppWorkspaceLayout layout = cpp_workspace_layout(f);
  EXPECT_EQ(layout.offsets, (std::vector<int64_t>{0, 64, 128}));
  EXPECT_EQ(layout.total_bytes, 192);
  EXPECT_NE(print_cpp(f).find("ingot_workspace_bytes(void) { return 192; }"), std::string::npos);
}

}  // namespace
}  // namespace ingot

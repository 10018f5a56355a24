// Dense layers in bf16: which weights the rewrite takes, the program it makes, the weights rounded, the interpreter's
// reference, and the generated code (vdpbf16ps tiles where the CPU has AVX-512 BF16).
#include "workloads/bf16_products.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/target.h"
#include "codegen/pipeline.h"
#include "lower/lower.h"
#include "ops/conv.h"
#include "ops/linear.h"
#include "ops/norm.h"
#include "runtime/local_run.h"
#include "space/strategy_schedule.h"
#include "tests/support/fixed_targets.h"

namespace ingot {
namespace {

float round_to_bf16(float f) {
  HostTensor t(DType::kBFloat16, {1});
  t.set(0, f);
  return float(t.get(0));
}

// sum_k bf16(a[a0 + k a_step]) * bf16(b[b0 + k b_step]) for k < n, in double: the products of the rounded values.
double rounded_dot(const HostTensor& a, int64_t a0, int64_t a_step, const HostTensor& b, int64_t b0, int64_t b_step,
                   int64_t n) {
  double sum = 0;
  for (int64_t k = 0; k < n; ++k)
    sum += double(round_to_bf16(float(a.get(a0 + k * a_step)))) * double(round_to_bf16(float(b.get(b0 + k * b_step))));
  return sum;
}

// y = x * w^T (PyTorch Linear: w is [out, in]) and z = a * v (v is [in, out]).
Program two_layers(int64_t in = 8) {
  Tensor x = placeholder("x", {4, in}), w = placeholder("w", {6, in});
  Tensor a = placeholder("a", {2, in}), v = placeholder("v", {in, 3});
  return Program({dense("y", x, w), matmul("z", a, v)}, "layers");
}

TEST(Bf16Products, DenseLayersMultiplyBf16PairsOfTheirWeightsAndSumInF32) {
  Bf16Program bf16 = bf16_products(two_layers(), {"v", "w"});
  EXPECT_EQ(bf16.program.name(), "layers@bf16");
  EXPECT_EQ(bf16.weights, (std::vector<Bf16Weight>{{"v", {8, 3}, 0}, {"w", {6, 8}, 1}}));
  EXPECT_EQ(tensor_definition(bf16.program.find("w")), "w: bf16[6, 8] = placeholder");
  EXPECT_EQ(tensor_definition(bf16.program.find("v")), "v: bf16[8, 3] = placeholder");
  EXPECT_EQ(tensor_definition(bf16.program.find("y")),
            "y: f32[4, 6] = compute(i, j) sum((f32(bf16(x[i, k])) * f32(w[j, k])), axes=[k:8])");
  EXPECT_EQ(tensor_definition(bf16.program.find("z")),
            "z: f32[2, 3] = compute(i, j) sum((f32(bf16(a[i, k])) * f32(v[k, j])), axes=[k:8])");
}

// A layer of 16 rows or more over a k that is a multiple of 32 reads them from a tensor of x rounded once, which every
// such layer that reads x shares (BERT's query, key and value), named apart from the program's tensors; a GEMV (an
// LSTM cell's one row) or a layer over another k rounds x where it reads it.
TEST(Bf16Products, LayersOfSixteenRowsOrMoreReadTheirRowsRoundedOnce) {
  Tensor x = placeholder("x", {16, 32}), w = placeholder("w", {6, 32}), v = placeholder("v", {4, 32});
  Tensor taken = compute("x_bf16", {16, 32}, [&](const std::vector<Expr>& i) { return x(i[0], i[1]) * 2.0; });
  Tensor h = placeholder("h", {1, 32}), u = placeholder("u", {6, 32});
  Tensor odd = placeholder("odd", {16, 8}), o = placeholder("o", {6, 8});
  Program f32({dense("y", x, w), dense("z", x, v), taken, dense("gate", h, u), dense("p", odd, o)}, "shared");
  Bf16Program bf16 = bf16_products(f32, {"o", "u", "v", "w"});
  EXPECT_EQ(tensor_definition(bf16.program.find("x_bf16_1")), "x_bf16_1: bf16[16, 32] = compute(i, j) bf16(x[i, j])");
  EXPECT_EQ(tensor_definition(bf16.program.find("y")),
            "y: f32[16, 6] = compute(i, j) sum((f32(x_bf16_1[i, k]) * f32(w[j, k])), axes=[k:32])");
  EXPECT_EQ(tensor_definition(bf16.program.find("z")),
            "z: f32[16, 4] = compute(i, j) sum((f32(x_bf16_1[i, k]) * f32(v[j, k])), axes=[k:32])");
  EXPECT_EQ(tensor_definition(bf16.program.find("gate")),
            "gate: f32[1, 6] = compute(i, j) sum((f32(bf16(h[i, k])) * f32(u[j, k])), axes=[k:32])");
  EXPECT_EQ(tensor_definition(bf16.program.find("p")),
            "p: f32[16, 6] = compute(i, j) sum((f32(bf16(odd[i, k])) * f32(o[j, k])), axes=[k:8])");
  EXPECT_FALSE(bf16.program.find("h_bf16"));
  EXPECT_FALSE(bf16.program.find("odd_bf16"));
}

TEST(Bf16Products, WeightsReadOtherwiseOrSummedOverAnOddExtentStayF32) {
  Tensor x = placeholder("x", {4, 8}), w = placeholder("w", {6, 8});
  Tensor doubled = compute("doubled", {6, 8}, [&](const std::vector<Expr>& i) {
    return read(w, {i[0], i[1]}) * float_imm(2.0);
  });
  Tensor odd_x = placeholder("odd_x", {4, 7}), odd_w = placeholder("odd_w", {5, 7});
  Program f32({dense("y", x, w), doubled, dense("odd", odd_x, odd_w)}, "others");
  Bf16Program bf16 = bf16_products(f32, {"odd_w", "w"});
  EXPECT_TRUE(bf16.weights.empty());
  EXPECT_EQ(tensor_definition(bf16.program.find("y")), tensor_definition(f32.find("y")));
  EXPECT_EQ(tensor_definition(bf16.program.find("odd")), tensor_definition(f32.find("odd")));
  // Not a weight: activations times activations (attention's products) stay f32.
  EXPECT_TRUE(bf16_products(two_layers(), {}).weights.empty());
}

TEST(Bf16Products, InputsAreTheWeightsRoundedToNearestEven) {
  Program f32 = two_layers();
  Bf16Program bf16 = bf16_products(f32, {"v", "w"});
  TensorMap inputs = random_inputs(f32, 3);
  inputs.at("v").set(0, 1.0 + 1.0 / 256);  // a tie between 1 and 1 + 2^-7: to even, 1
  inputs.at("v").set(3, 1.0 + 3.0 / 256);  // the tie above 1 + 2^-7: to even, 1 + 2^-6
  TensorMap pairs = bf16_inputs(bf16, inputs);
  EXPECT_EQ(pairs.at("x").get(5), inputs.at("x").get(5));
  const HostTensor &v = pairs.at("v"), &w = pairs.at("w");
  ASSERT_EQ(v.dtype(), DType::kBFloat16);
  ASSERT_EQ(v.shape(), (std::vector<int64_t>{8, 3}));
  for (int64_t i = 0; i < 8 * 3; ++i) EXPECT_EQ(v.get(i), round_to_bf16(float(inputs.at("v").get(i))));
  EXPECT_EQ(v.get(0), 1.0);
  EXPECT_EQ(v.get(3), 1.0 + 1.0 / 64);
  for (int64_t i = 0; i < 6 * 8; ++i) EXPECT_EQ(w.get(i), round_to_bf16(float(inputs.at("w").get(i))));
  inputs.erase("w");
  EXPECT_THAT([&] { bf16_inputs(bf16, inputs); },
              testing::ThrowsMessage<std::invalid_argument>(testing::HasSubstr("no data for weight 'w'")));
}

// A tensor of pairs is named apart from the program's tensors.
TEST(Bf16Products, PairsAreNamedApartFromTheProgramsTensors) {
  Tensor x = placeholder("x", {1, 8, 4, 4}), w = placeholder("w", {6, 8, 1, 1});
  Tensor taken = compute("conv_pairs", {1, 8, 4, 4}, [&](const std::vector<Expr>& i) { return x(i) * 2.0; });
  Program f32({conv2d("conv", x, w), taken}, "named");
  Bf16Program bf16 = bf16_products(f32, {"w"});
  EXPECT_EQ(tensor_definition(bf16.program.find("conv_pairs_1")),
            "conv_pairs_1: bf16[1, 4, 4, 4, 2] = compute(i, j, l, m, n) bf16(x[i, ((j * 2) + n), l, m])");
}

// A 1 x 1 convolution over a map reads its input through bf16 pairs of input channels, strided or not; other
// convolutions (3 x 3, grouped, padded) and a 1 x 1 map (a squeeze-excitation's GEMV, for any batch) keep f32.
TEST(Bf16Products, OneByOneConvolutionsReadPairsOfInputChannels) {
  Tensor x = placeholder("x", {1, 8, 4, 4}), w = placeholder("w", {6, 8, 1, 1});
  Tensor down_w = placeholder("down_w", {6, 8, 1, 1}), w3 = placeholder("w3", {6, 8, 3, 3});
  Tensor grouped_w = placeholder("grouped_w", {6, 4, 1, 1}), padded_w = placeholder("padded_w", {6, 8, 1, 1});
  Tensor pooled = placeholder("pooled", {2, 8, 1, 1}), gate_w = placeholder("gate_w", {6, 8, 1, 1});  // batch 2
  Conv2dAttrs stride2, grouped, padded;
  stride2.stride = {2, 2};
  grouped.groups = 2;
  padded.padding = {1, 1, 1, 1};
  Program f32({conv2d("conv", x, w), conv2d("down", x, down_w, Tensor(), stride2), conv2d("conv3", x, w3),
               conv2d("grouped", x, grouped_w, Tensor(), grouped), conv2d("padded", x, padded_w, Tensor(), padded),
               conv2d("gate", pooled, gate_w)},
              "convs");
  Bf16Program bf16 = bf16_products(f32, {"w", "down_w", "w3", "grouped_w", "padded_w", "gate_w"});
  EXPECT_EQ(bf16.weights, (std::vector<Bf16Weight>{{"w", {6, 8, 1, 1}, 1}, {"down_w", {6, 8, 1, 1}, 1}}));
  EXPECT_EQ(tensor_definition(bf16.program.find("conv_pairs")),
            "conv_pairs: bf16[1, 4, 4, 4, 2] = compute(i, j, l, m, n) bf16(x[i, ((j * 2) + n), l, m])");
  EXPECT_EQ(tensor_definition(bf16.program.find("conv")),
            "conv: f32[1, 6, 4, 4] = compute(i, j, l, m) sum((f32(conv_pairs[i, (rc / 2), l, m, (rc % 2)]) * "
            "f32(w[j, rc, 0, 0])), axes=[rc:8])");
  EXPECT_EQ(tensor_definition(bf16.program.find("down_pairs")),
            "down_pairs: bf16[1, 4, 2, 2, 2] = compute(i, j, l, m, n) bf16(x[i, ((j * 2) + n), (l * 2), (m * 2)])");
  for (const char* kept : {"conv3", "grouped", "padded", "gate"})
    EXPECT_EQ(tensor_definition(bf16.program.find(kept)), tensor_definition(f32.find(kept))) << kept;
  EXPECT_FALSE(bf16.program.find("gate_pairs"));
  // The interpreter's reference: products of the rounded values, summed in f32.
  TensorMap inputs = random_inputs(f32, 4);
  TensorMap out = interpret(bf16.program, bf16_inputs(bf16, inputs));
  for (int64_t c = 0; c < 6; ++c)
    for (int64_t p = 0; p < 16; ++p) {
      const double sum = rounded_dot(inputs.at("x"), p, 16, inputs.at("w"), c * 8, 1, 8);
      EXPECT_NEAR(out.at("conv").get(c * 16 + p), sum, 1e-5 * (1 + std::fabs(sum)));
    }
  inputs.at("w") = HostTensor(DType::kFloat32, {6, 8});
  EXPECT_THAT([&] { bf16_inputs(bf16, inputs); },
              testing::ThrowsMessage<std::invalid_argument>(
                  testing::HasSubstr("weight 'w' is not the f32 tensor of shape [6,8,1,1] that the program reads")));
}

// For AMX's tiles (32 values of k a step), a 1 x 1 convolution's input channels pad to a multiple of 32: zero pairs
// past the real channels (which read the last real one, in bounds), the weight padded with zeros by bf16_inputs. The
// padded program computes what the unpadded one does; a GEMM's weight is not padded.
TEST(Bf16Products, OneByOneConvolutionsPadTheirInputChannelsToTheMultiple) {
  Tensor x = placeholder("x", {1, 24, 4, 4}), w = placeholder("w", {6, 24, 1, 1});
  Tensor y = placeholder("y", {4, 24}), v = placeholder("v", {8, 24});
  Program f32({conv2d("conv", x, w), dense("d", y, v)}, "padded");
  Bf16Program bf16 = bf16_products(f32, {"w", "v"}, 32);
  EXPECT_EQ(bf16.weights, (std::vector<Bf16Weight>{{"w", {6, 24, 1, 1}, 1, 8}, {"v", {8, 24}, 1}}));
  EXPECT_EQ(bf16.weights[0].bf16_shape(), (std::vector<int64_t>{6, 32, 1, 1}));
  EXPECT_EQ(bf16.program.find("w")->shape, (std::vector<int64_t>{6, 32, 1, 1}));
  EXPECT_EQ(tensor_definition(bf16.program.find("conv_pairs")),
            "conv_pairs: bf16[1, 16, 4, 4, 2] = compute(i, j, l, m, n) bf16(select((((j * 2) + n) < 24), x[i, "
            "min(((j * 2) + n), 23), l, m], 0.0))");
  EXPECT_EQ(tensor_definition(bf16.program.find("conv")),
            "conv: f32[1, 6, 4, 4] = compute(i, j, l, m) sum((f32(conv_pairs[i, (rc / 2), l, m, (rc % 2)]) * "
            "f32(w[j, rc, 0, 0])), axes=[rc:32])");
  Bf16Program unpadded = bf16_products(f32, {"w", "v"});
  TensorMap inputs = random_inputs(f32, 6), padded_inputs = bf16_inputs(bf16, inputs);
  TensorMap unpadded_inputs = bf16_inputs(unpadded, inputs);
  const HostTensor &padded_w = padded_inputs.at("w"), &rounded_w = unpadded_inputs.at("w");
  ASSERT_EQ(padded_w.shape(), (std::vector<int64_t>{6, 32, 1, 1}));
  for (int64_t o = 0; o < 6; ++o)
    for (int64_t i = 0; i < 32; ++i)
      EXPECT_EQ(padded_w.get(o * 32 + i), i < 24 ? rounded_w.get(o * 24 + i) : 0.0) << o << ", " << i;
  TensorMap out = interpret(bf16.program, padded_inputs), expected = interpret(unpadded.program, unpadded_inputs);
  for (int64_t i = 0; i < out.at("conv").num_elements(); ++i)
    EXPECT_EQ(out.at("conv").get(i), expected.at("conv").get(i)) << i;
  EXPECT_THAT([&] { bf16_products(f32, {"w"}, 3); },
              testing::ThrowsMessage<std::invalid_argument>(testing::HasSubstr("an even multiple, not 3")));
}

// The interpreter's reference of the bf16 program: products of the rounded values, summed in f32.
TEST(Bf16Products, TheInterpreterMultipliesRoundedValues) {
  Program f32 = two_layers(64);
  Bf16Program bf16 = bf16_products(f32, {"v", "w"});
  TensorMap inputs = random_inputs(f32, 5);
  TensorMap out = interpret(bf16.program, bf16_inputs(bf16, inputs)), exact = interpret(f32, inputs);
  double largest_change = 0;
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 6; ++j) {
      const double sum = rounded_dot(inputs.at("x"), i * 64, 1, inputs.at("w"), j * 64, 1, 64);
      EXPECT_NEAR(out.at("y").get(i * 6 + j), sum, 1e-5 * (1 + std::fabs(sum)));
      largest_change = std::max(largest_change, std::fabs(out.at("y").get(i * 6 + j) - exact.at("y").get(i * 6 + j)));
    }
  EXPECT_GT(largest_change, 1e-4);  // bf16 keeps 8 bits: the products moved
}

// The fixed global schedule of a bf16 program whose weight is "w", for AVX-512 with AMX or without.
StrategyProgram fixed_global_schedule(const Bf16Program& bf16, bool amx_target, int64_t l2_bytes = 0) {
  FixedScheduleOptions options;
  options.weights = {"w"};
  Target target = test_support::avx512_cpu();
  target.cpu.amx_bf16 = amx_target;
  if (l2_bytes > 0) target.cpu.l2_bytes = l2_bytes;
  return make_strategy_program(bf16.program, "global", target, options);
}

// Where the CPU has AVX-512 BF16, the bf16 program under `schedule` gives the bf16 interpreter's answer; elsewhere the
// test is skipped (its code was printed and checked, not run). extra_flags: " -mno-amx-tile" runs the vdpbf16ps
// tiles where AMX would run, " -mno-avx512bf16" the plain loops.
void expect_the_interpreters_answer(const Program& f32, const Bf16Program& bf16, const Schedule& schedule,
                                    const std::string& extra_flags = "") {
  if (!host_has_avx512_bf16()) GTEST_SKIP() << "this CPU has no AVX-512 BF16: the tiles were printed, not run";
  TensorMap inputs = bf16_inputs(bf16, random_inputs(f32, 9));
  TensorMap expected = interpret(bf16.program, inputs);
  LocalRunOptions run;
  run.compile.flags += extra_flags;
  run.min_repeat_ms = 0;
  run.min_repeats = 1;
  LocalRunResult r = local_run(bf16.program, schedule, inputs, expected, run);
  for (const Comparison& c : r.checks) EXPECT_TRUE(c.ok) << c.message;
  EXPECT_TRUE(r.correct);
}

// The fixed global schedule of a GEMM and of a GEMV (1 row, an LSTM cell's shape) print as vdpbf16ps: the GEMM's
// register tiles over weights packed with their pairs of k together, the GEMV's reduction 32 elements of k at a time,
// its row of x converted to bf16 on the way. A GEMM of 16 rows or more reads its rows rounded once (x_bf16), fewer
// round them as they are read. A GEMM whose k is a multiple of 32 prints its tiles as AMX tiles too, run where the CPU
// and Linux let it, with 16 rows where the target has AMX (fewer where 16 rows of its panel's vectors would be more
// accumulators than a pair tile has), the rows' tile loaded in place from x_bf16 or copied into a buffer, and k in
// blocks of 256 where it is a larger multiple of 256. Where the CPU has AVX-512 BF16 each matches the interpreter.
struct Bf16Shape {
  int64_t rows, columns, k;
  bool amx;                 // AMX tiles are printed
  bool amx_target = false;  // the target has AMX
  std::string tile_shape;   // the AMX tiles' shape: LDTILECFG's bytes and rows of its 8 tiles
};
class Bf16Kernels : public testing::TestWithParam<Bf16Shape> {};

TEST_P(Bf16Kernels, RunAsDotProductsOfPairs) {
  const Bf16Shape shape = GetParam();
  Tensor x = placeholder("x", {shape.rows, shape.k}), w = placeholder("w", {shape.columns, shape.k});
  Program f32({dense("y", x, w)}, "gemm");
  Bf16Program bf16 = bf16_products(f32, {"w"});
  StrategyProgram s = fixed_global_schedule(bf16, shape.amx_target);
  const std::string source = compile_to_cpp_source(bf16.program, s.schedule).source;
  EXPECT_THAT(source, testing::HasSubstr("_mm512_dpbf16_ps"));
  const bool rounded_once = shape.rows >= 16 && shape.k % 32 == 0;
  EXPECT_EQ(bool(bf16.program.find("x_bf16")), rounded_once);
  EXPECT_THAT(source, testing::HasSubstr(rounded_once     ? "= ingot_pair_bf16(&x_bf16["
                                         : shape.rows > 1 ? "= ingot_pair_bf16_of_f32(&x["
                                                          : "_mm512_cvtne2ps_pbh(_mm512_loadu_ps("));
  EXPECT_EQ(source.find("_tile_dpbf16ps(") != std::string::npos, shape.amx);
  if (shape.amx) {
    if (rounded_once) {
      EXPECT_THAT(source, testing::ContainsRegex("_tile_loadd\\([34], &x_bf16\\["));  // after 3 or 4 C tiles
      EXPECT_THAT(source, testing::Not(testing::HasSubstr("ingot_rows")));
    } else {
      EXPECT_THAT(source, testing::HasSubstr("ingot_bf16x32_of_f32(&ingot_rows[32], &x["));
    }
    EXPECT_THAT(source, testing::HasSubstr(" += 32) {"));
    EXPECT_THAT(source, testing::HasSubstr("ingot_amx_shape = {1, 0, {}, " + shape.tile_shape + "};"));
  }
  // A stage's function holds the shape its tiles took (ingot_amx_configure), not a thread_local.
  EXPECT_EQ(source.find("const ingot_amx_tiles* ingot_amx_taken = nullptr;") != std::string::npos, shape.amx);
  EXPECT_THAT(source, testing::Not(testing::HasSubstr("thread_local")));
  const bool k_blocks = shape.amx_target && shape.k > 256 && shape.k % 256 == 0;
  EXPECT_EQ(source.find("y_k_o < " + std::to_string(shape.k / 256) + ";") != std::string::npos, k_blocks);
  // Zeroed just before the tile, its accumulators start from tilezero; in blocks of k they are loaded again.
  EXPECT_EQ(source.find("_tile_zero(0);") != std::string::npos, shape.amx && !k_blocks);
  expect_the_interpreters_answer(f32, bf16, s.schedule);
}

// 3 chunks of 16 columns, each one C tile (tiles 0-2), the rows' tile 3, weight tiles 4-6: 8 rows where the registers
// bound them, 16 with AMX; 4 chunks of 64 columns (1024): 48 / 4 = 12 accumulators a column, 8 rows of 64. 8 rows of
// x are rounded as they are read, 16 and more once.
INSTANTIATE_TEST_SUITE_P(
    GemmAndGemv, Bf16Kernels,
    testing::Values(
        Bf16Shape{64, 192, 256, true, false, "{64, 64, 64, 64, 64, 64, 64, 0}, {8, 8, 8, 8, 16, 16, 16, 0}"},
        Bf16Shape{64, 192, 256, true, true, "{64, 64, 64, 64, 64, 64, 64, 0}, {16, 16, 16, 16, 16, 16, 16, 0}"},
        Bf16Shape{40, 192, 256, true, false, "{64, 64, 64, 64, 64, 64, 64, 0}, {8, 8, 8, 8, 16, 16, 16, 0}"},
        Bf16Shape{64, 1024, 256, true, true, "{64, 64, 64, 64, 64, 64, 64, 64}, {8, 8, 8, 8, 8, 16, 16, 16}"},
        Bf16Shape{8, 192, 256, true, true, "{64, 64, 64, 64, 64, 64, 64, 0}, {8, 8, 8, 8, 16, 16, 16, 0}"},
        Bf16Shape{64, 192, 768, true, true, "{64, 64, 64, 64, 64, 64, 64, 0}, {16, 16, 16, 16, 16, 16, 16, 0}"},
        Bf16Shape{64, 192, 768, true, false, "{64, 64, 64, 64, 64, 64, 64, 0}, {8, 8, 8, 8, 16, 16, 16, 0}"},
        Bf16Shape{64, 192, 48, false, false, ""}, Bf16Shape{1, 192, 256, false, false, ""}),
    [](const testing::TestParamInfo<Bf16Shape>& info) {  // rows x columns x k, and whether the target has AMX
      const Bf16Shape& shape = info.param;
      return std::to_string(shape.rows) + "x" + std::to_string(shape.columns) + "x" + std::to_string(shape.k) +
             (shape.amx_target ? "_amx_target" : "");
    });

// A GEMM over a batch of one (Swin's patch merging: [1, tokens, channels]) blocks k where the target has AMX, its
// blocks inside the panel loop fused with the batch's (lowering refused the fuse with the blocks between them).
TEST(Bf16Products, ABatchOfOneKeepsItsLoopFusedWithThePanelsWhereKIsBlocked) {
  Tensor x = placeholder("x", {1, 64, 512}), w = placeholder("w", {192, 512});
  Program f32({dense("y", x, w)}, "batched");
  Bf16Program bf16 = bf16_products(f32, {"w"});
  StrategyProgram s = fixed_global_schedule(bf16, true);
  const std::string source = compile_to_cpp_source(bf16.program, s.schedule).source;
  EXPECT_THAT(source, testing::HasSubstr("y_k_o < 2;"));
  expect_the_interpreters_answer(f32, bf16, s.schedule);
}

// A GEMM over windows of 7 x 7 tokens ([windows, 7, 7, k], as Swin's Q K V) whose weight does not fit half an L2 runs
// its panels outside all rows; with AMX its tiles take two whole rows of 7 tokens (14 of a tile's 16 rows) from
// across the windows, the window, row and token axes fused and split by 14, k in blocks of 256 inside the panel loop.
// Without AMX in the target the registers' tile keeps one row of 7; with a weight that fits half an L2 the rows run
// outside the panels (rows_before_panels), k blocked too: alone the tile keeps its 7; under its bias the GEMM takes two
// windows per parallel step in tiles of 14 (rows_in_blocks). Alone, and under its bias.
TEST(Bf16Products, AmxTilesOverWindowsTakeWholeRowsFromAcrossThem) {
  for (int64_t columns : {768, 96}) {  // the weight: 768 KB of bf16, more than half the L2; 96 KB
    Tensor x = placeholder("x", {4, 7, 7, 512}), w = placeholder("w", {columns, 512}), b = placeholder("b", {columns});
    IterVar k = reduce_axis(512, "k");
    Tensor y = compute("y", {4, 7, 7, columns}, [&](const std::vector<Expr>& i) {
      return sum(x(i[0], i[1], i[2], k.var) * w(i[3], k.var), {k});
    });
    Tensor biased = compute("biased", y->shape, [&](const std::vector<Expr>& i) { return y(i) + b(i[3]); });
    for (const Program& f32 : {Program({y}, "windows"), Program({biased}, "windows_biased")}) {
      SCOPED_TRACE(f32.name() + " " + std::to_string(columns));
      Bf16Program bf16 = bf16_products(f32, {"w"});
      const std::string host = f32.name() == "windows" ? "y" : "biased";
      for (bool amx : {true, false}) {
        StrategyProgram s = fixed_global_schedule(bf16, amx, 512 * 1024);
        const std::string json = s.schedule.to_json();
        // Under its bias, with rows first, the GEMM computes two windows per parallel step (rows_in_blocks).
        const bool blocks = amx && columns == 96 && host == "biased", across = (amx && columns == 768) || blocks;
        EXPECT_EQ(
            json.find(R"({"axis":"i+j+l","factor":14,"kind":"split","stage":"y","tail":"exact"})") != std::string::npos,
            across)
            << json;
        const std::string rows_first = R"({"axis":"i+j+m.o","kind":"parallel","stage":")" + host + "\"}";
        EXPECT_EQ(json.find(rows_first) != std::string::npos, columns == 96 && !blocks) << json;
        const std::string two_windows = R"({"axis":"i.o+m.o","kind":"parallel","stage":"biased"})";
        EXPECT_EQ(json.find(two_windows) != std::string::npos, blocks) << json;
        const std::string source = compile_to_cpp_source(bf16.program, s.schedule).source;
        EXPECT_EQ(source.find("{14, 14, 14, 14, 16, 16, 16, 0}") != std::string::npos, across) << source;
        EXPECT_EQ(source.find("y_k_o < 2;") != std::string::npos, amx);
        expect_the_interpreters_answer(f32, bf16, s.schedule);
      }
      if (columns == 96) {  // reuse_operand_order=0: the panels outside all rows, the tile still one row of 7
        FixedScheduleOptions own_order;
        own_order.weights = {"w"};
        own_order.knobs.reuse_operand_order = false;
        Target target = test_support::avx512_cpu();
        target.cpu.amx_bf16 = true;
        target.cpu.l2_bytes = 512 * 1024;
        const std::string json = make_strategy_program(bf16.program, "global", target, own_order).schedule.to_json();
        EXPECT_EQ(json.find(R"("axis":"i+j+l")"), std::string::npos) << json;
        EXPECT_EQ(json.find(R"("axis":"i+j+m.o")"), std::string::npos) << json;
      }
    }
  }
}

// Windows of 49 tokens ([windows, 49, k], as Swin's ONNX file has them): a tile of 16 rows cannot take whole rows, but
// x is read contiguously across windows and tokens, so the two axes are fused and split by 14 (of 196), each tile row's
// index window * 49 + token put back together. Read across the other way round (x[token, window, k]) the rows stay 7
// (tokens split by 7).
TEST(Bf16Products, AmxTilesOverWindowsOf49TokensTakeRowsAcrossThemWhereReadContiguously) {
  for (bool contiguous : {true, false}) {
    Tensor x = placeholder("x", contiguous ? std::vector<int64_t>{4, 49, 256} : std::vector<int64_t>{49, 4, 256});
    Tensor w = placeholder("w", {768, 256});
    IterVar k = reduce_axis(256, "k");
    Tensor y = compute("y", {4, 49, 768}, [&](const std::vector<Expr>& i) {
      return sum((contiguous ? x(i[0], i[1], k.var) : x(i[1], i[0], k.var)) * w(i[2], k.var), {k});
    });
    Program f32({y}, "windows49");
    Bf16Program bf16 = bf16_products(f32, {"w"});
    StrategyProgram s = fixed_global_schedule(bf16, true, 512 * 1024);
    const std::string json = s.schedule.to_json();
    EXPECT_EQ(json.find(R"({"axis":"i+j","factor":14,"kind":"split","stage":"y","tail":"exact"})") != std::string::npos,
              contiguous)
        << json;
    EXPECT_EQ(json.find(R"({"axis":"j","factor":7,"kind":"split","stage":"y","tail":"exact"})") != std::string::npos,
              !contiguous)
        << json;
    const std::string source = compile_to_cpp_source(bf16.program, s.schedule).source;
    EXPECT_THAT(source,
                testing::HasSubstr(contiguous ? "{14, 14, 14, 14, 16, 16, 16, 0}" : "{7, 7, 7, 7, 16, 16, 16, 0}"));
    expect_the_interpreters_answer(f32, bf16, s.schedule);
  }
}

// A GEMM under its epilogue (a bias and a ReLU, computed at the epilogue's panel loop) blocks k too, and the ReLU's
// output, which only the next layer's sum reads, is written as that layer's bf16 rows by the first layer's stage: no
// f32 tensor of it is stored.
TEST(Bf16Products, AGemmUnderItsEpilogueBlocksKAndWritesTheNextLayersRows) {
  Tensor x = placeholder("x", {64, 512}), w = placeholder("w", {96, 512}), b = placeholder("b", {96});
  Tensor v = placeholder("v", {48, 96});
  Tensor y = dense("y", x, w, b);
  Tensor relu = compute("relu", y->shape, [&](const std::vector<Expr>& i) { return maximum(y(i), float_imm(0.0)); });
  Program f32({dense("z", relu, v)}, "two_layers");
  Bf16Program bf16 = bf16_products(f32, {"v", "w"});
  FixedScheduleOptions options;
  options.weights = {"v", "w"};
  Target target = test_support::avx512_cpu();
  target.cpu.amx_bf16 = true;
  StrategyProgram s = make_strategy_program(bf16.program, "global", target, options);
  const std::string source = compile_to_cpp_source(bf16.program, s.schedule).source;
  EXPECT_THAT(source, testing::HasSubstr("y_matmul_k_o < 2;"));
  const std::string loops = to_string(lower(bf16.program, s.schedule));
  EXPECT_THAT(loops, testing::HasSubstr("alloc y_matmul: f32["));  // computed at the epilogue's panel loop
  EXPECT_THAT(loops, testing::HasSubstr("workspace relu_bf16: bf16[64, 96]"));
  EXPECT_THAT(loops, testing::Not(testing::HasSubstr("workspace relu:")));
  expect_the_interpreters_answer(f32, bf16, s.schedule);
}

// Rows rounded to bf16 once (relu_bf16: 196 x 2048, 4 KB apart) that the layer's tile reads 14 at a time would share
// one set of the L1 cache: they get a line more per row (32 values), where the target has no AMX (its tiles' loads
// were not measured so). Where the CPU has AVX-512 BF16 the padded program matches the interpreter. (The rows come
// from an elementwise stage, so that the interpreter and the program round the same values.)
TEST(Bf16Products, RowsRoundedOnceInOneL1SetArePaddedWithoutAmx) {
  Tensor x = placeholder("x", {196, 2048}), v = placeholder("v", {128, 2048});
  Tensor relu = compute("relu", x->shape, [&](const std::vector<Expr>& i) { return maximum(x(i), float_imm(0.0)); });
  Program f32({dense("z", relu, v)}, "layer");
  Bf16Program bf16 = bf16_products(f32, {"v"});
  FixedScheduleOptions options;
  options.weights = {"v"};
  for (bool amx : {false, true}) {
    Target target = test_support::avx512_cpu();
    target.cpu.amx_bf16 = amx;
    StrategyProgram s = make_strategy_program(bf16.program, "global", target, options);
    const std::string json = s.schedule.to_json();
    EXPECT_EQ(json.find(R"({"dim":1,"elements":32,"kind":"pad","stage":"relu_bf16"})") != std::string::npos, !amx)
        << json;
    EXPECT_THAT(
        to_string(lower(bf16.program, s.schedule)),
        testing::HasSubstr(amx ? "workspace relu_bf16: bf16[196, 2048]" : "workspace relu_bf16: bf16[196, 2080]"));
    if (!amx) expect_the_interpreters_answer(f32, bf16, s.schedule);
  }
}

// A layer norm read only through a shift of its rows by a dense layer (Swin's first norm before its shifted windows):
// its stage is the one that rounds the shifted rows to bf16 (analysis/strategies.cc), where it is inlined, so no f32
// tensor of it is stored; its statistics are. So is a copy of it in its own stage (an ONNX file's Pad of nothing),
// which goes with it. In f32 the shifted rows fold into the GEMM's loads and the norm keeps its own stage and tensor.
TEST(Bf16Products, ALayerNormReadThroughAShiftIsComputedWhereItsRowsAreRounded) {
  for (const bool copied : {false, true}) {
    Tensor x = placeholder("x", {64, 256}), w = placeholder("w", {96, 256});
    Tensor n = layer_norm("n", x, Tensor(), Tensor());
    Tensor read = copied ? compute("padded", n->shape, [&](const std::vector<Expr>& i) { return n(i); }) : n;
    Tensor shifted = compute("shifted", n->shape,
                             [&](const std::vector<Expr>& i) { return read((i[0] + int64_t(5)) % int64_t(64), i[1]); });
    Program f32({dense("y", shifted, w)}, "norm_shift_dense");
    Bf16Program bf16 = bf16_products(f32, {"w"});
    ASSERT_TRUE(bf16.program.find("shifted_bf16"));
    StrategyProgram s = fixed_global_schedule(bf16, true);
    const std::string loops = to_string(lower(bf16.program, s.schedule));
    EXPECT_THAT(loops, testing::HasSubstr("workspace shifted_bf16: bf16[64, 256]"));
    EXPECT_THAT(loops, testing::HasSubstr("workspace n_var:"));
    EXPECT_THAT(loops, testing::Not(testing::HasSubstr("workspace n:")));
    EXPECT_THAT(loops, testing::Not(testing::HasSubstr("workspace padded:")));
    FixedScheduleOptions options;
    options.weights = {"w"};
    StrategyProgram f32_schedule = make_strategy_program(f32, "global", test_support::avx512_cpu(), options);
    EXPECT_THAT(to_string(lower(f32, f32_schedule.schedule)),
                testing::ContainsRegex(copied ? "workspace (n|padded):" : "workspace n:"));
    expect_the_interpreters_answer(f32, bf16, s.schedule);
  }
}

// A 1 x 1 convolution in bf16 under its batch norm and ReLU, in the fixed global schedule: where the target has AMX,
// 16 or 32 output channels (rows) times whole rows of the map (the columns: at most 5 chunks of 16 pixels, the last one
// partial or not), the weight's rows loaded as the rows' tile in place, the input's pairs as the chunks' tiles; without
// AMX in the target the registers' tile (vdpbf16ps), too wide for AMX tiles. Where the CPU has AVX-512 BF16 each
// matches the interpreter (on an AMX CPU, the AMX tiles).
struct Bf16ConvShape {
  int64_t in, out, map, stride;
  bool amx_target;
  std::string tile_shape;      // LDTILECFG's bytes and rows of its 8 tiles; empty: no AMX tile
  bool two_row_tiles = false;  // 32 output channels: the second row tile's products are printed
  int64_t pad_to = 2;          // the input channels' multiple (bf16_products)
};
class Bf16ConvKernels : public testing::TestWithParam<Bf16ConvShape> {};

TEST_P(Bf16ConvKernels, RunOnPairsOfInputChannels) {
  const Bf16ConvShape shape = GetParam();
  Tensor x = placeholder("x", {1, shape.in, shape.map, shape.map}), w = placeholder("w", {shape.out, shape.in, 1, 1});
  Tensor scale = placeholder("scale", {shape.out});
  Conv2dAttrs attrs;
  attrs.stride = {shape.stride, shape.stride};
  Tensor conv = conv2d("conv", x, w, Tensor(), attrs);
  Tensor relu = compute("relu", conv->shape,
                        [&](const std::vector<Expr>& i) { return maximum(conv(i) * scale(i[1]), float_imm(0.0)); });
  Program f32({relu}, "conv1x1");
  Bf16Program bf16 = bf16_products(f32, {"w"}, shape.pad_to);
  ASSERT_EQ(bf16.weights.size(), 1u);
  const int64_t in = bf16.weights[0].bf16_shape()[1];
  StrategyProgram s = fixed_global_schedule(bf16, shape.amx_target);
  const std::string source = compile_to_cpp_source(bf16.program, s.schedule).source;
  EXPECT_THAT(source, testing::HasSubstr("_mm512_dpbf16_ps"));
  EXPECT_EQ(source.find("_tile_dpbf16ps(") != std::string::npos, !shape.tile_shape.empty());
  // The pairs' stage runs over the plane as one loop where the convolution reads it whole, else row by row.
  EXPECT_EQ(source.find("for (int64_t conv_pairs_l_m = 0;") != std::string::npos, shape.stride == 1);
  if (!shape.tile_shape.empty()) {
    EXPECT_THAT(source, testing::HasSubstr("ingot_amx_shape = {1, 0, {}, " + shape.tile_shape + "};"));
    EXPECT_THAT(source, testing::HasSubstr("&w[conv_rc + "));             // the rows' tile, in place
    EXPECT_THAT(source, testing::Not(testing::HasSubstr("ingot_rows")));  // no copy
    // The accumulators start from tilezero (the vdpbf16ps form from zero registers); the zeros before them are
    // stored only before the plain loops.
    EXPECT_THAT(source, testing::HasSubstr("_tile_zero(0);"));
    EXPECT_THAT(source, testing::Not(testing::HasSubstr("_tile_loadd(0, &conv[")));
    EXPECT_THAT(source, testing::HasSubstr("ingot_f32xN ingot_t0 = {};"));
    EXPECT_THAT(
        source,
        testing::ContainsRegex(
            "#else\n *#pragma GCC unroll [0-9]+\n *for \\([^\n]*\n[^\n]*\n[^\n]*\n *conv\\[[^\n]*\\] = 0\\.0f;"));
    // Row tile 1 (tiles 2, 3; rows 5) from the weight's row 16, times each chunk's pairs (tiles 6, 7).
    const std::string second_rows = " + " + std::to_string(16 * in) + "], " + std::to_string(2 * in) + ");";
    EXPECT_EQ(source.find("_tile_dpbf16ps(3, 5, 7);") != std::string::npos, shape.two_row_tiles);
    EXPECT_EQ(source.find(second_rows) != std::string::npos, shape.two_row_tiles) << second_rows;
  } else {  // the registers' tile: 4 channels x 98 pixels (7 vectors), 28 accumulators
    EXPECT_THAT(source, testing::HasSubstr("ingot_t27 = "));
    EXPECT_THAT(source, testing::Not(testing::HasSubstr("ingot_t28 ")));
  }
  expect_the_interpreters_answer(f32, bf16, s.schedule);
  // The forms that an AMX CPU leaves unrun, each starting from the zeros its own way: the vdpbf16ps tiles (from zero
  // registers) and the plain loops (after the zeros).
  expect_the_interpreters_answer(f32, bf16, s.schedule, " -mno-amx-tile");
  expect_the_interpreters_answer(f32, bf16, s.schedule, " -mno-avx512bf16");
}

// 14 x 14: two rows, 28 pixels (a chunk of 16 and one of 12, whose weight tile is the last register), 32 output
// channels in two row tiles (tiles 4 and 5) where there are more than 32, else 16 or fewer (100 channels: one tile of
// 10, since 25 rows would not split into two tiles); 48 input channels (no multiple of 32): no AMX tile, the
// registers' tile; 7 x 7 (or a stride-2 1 x 1 convolution from 14 x 14): the plane, 49 pixels (3 chunks and 1 pixel);
// 8 x 8: 64 pixels, 4 chunks of 16 sharing weight tiles 5-7. Padded to a multiple of 32, 48 input channels take AMX
// tiles (64 channels, the last 16 zero pairs); a 112 x 112 map, whose rows are wider than 5 chunks, half rows of 56
// pixels (3 chunks of 16 and one of 8).
INSTANTIATE_TEST_SUITE_P(
    OneByOne, Bf16ConvKernels,
    testing::Values(
        Bf16ConvShape{64, 32, 14, 1, true, "{64, 48, 64, 64, 0, 0, 0, 48}, {16, 16, 16, 16, 0, 0, 0, 16}"},
        Bf16ConvShape{64, 64, 14, 1, true, "{64, 48, 64, 48, 64, 64, 64, 48}, {16, 16, 16, 16, 16, 16, 16, 16}", true},
        Bf16ConvShape{64, 100, 14, 1, true, "{64, 48, 64, 64, 0, 0, 0, 48}, {10, 10, 10, 16, 0, 0, 0, 16}"},
        Bf16ConvShape{48, 32, 14, 1, true, ""},
        Bf16ConvShape{64, 32, 7, 1, true, "{64, 64, 64, 4, 64, 64, 64, 4}, {16, 16, 16, 16, 16, 16, 16, 16}"},
        Bf16ConvShape{64, 32, 14, 2, true, "{64, 64, 64, 4, 64, 64, 64, 4}, {16, 16, 16, 16, 16, 16, 16, 16}"},
        Bf16ConvShape{96, 48, 8, 1, true, "{64, 64, 64, 64, 64, 64, 64, 64}, {16, 16, 16, 16, 16, 16, 16, 16}"},
        Bf16ConvShape{64, 32, 14, 1, false, ""},
        Bf16ConvShape{48, 32, 14, 1, true, "{64, 48, 64, 64, 0, 0, 0, 48}, {16, 16, 16, 16, 0, 0, 0, 16}", false, 32},
        Bf16ConvShape{32, 32, 112, 1, true, "{64, 64, 64, 32, 64, 64, 64, 32}, {16, 16, 16, 16, 16, 16, 16, 16}", false,
                      32}),
    [](const testing::TestParamInfo<Bf16ConvShape>& info) {  // in x out channels, map, stride, AMX in the target
      const Bf16ConvShape& shape = info.param;
      return std::to_string(shape.in) + "x" + std::to_string(shape.out) + "_map" + std::to_string(shape.map) +
             "_stride" + std::to_string(shape.stride) + (shape.amx_target ? "_amx_target" : "") +
             (shape.pad_to > 2 ? "_padded_to" + std::to_string(shape.pad_to) : "");
    });

}  // namespace
}  // namespace ingot

// Register tiles in loop IR: the loop shapes the C++ printer can hold in explicit vectors (a vectorized reduction's
// folds, a spatial tile's accumulators), found and checked here so that lowering can validate a schedule's
// explicit_vectors decisions and the printer prints only what they asked for. Use on lowered loop IR.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/stmt.h"

namespace ingot {

// The widths of the explicit vectors the C++ printer writes, each guarded by its ISA's macro with the plain loops as
// the fallback: AVX-512's 16 fp32 lanes (32 zmm registers, 16-bit masks) and AVX2's 8 (16 ymm registers, masks as
// vectors).
constexpr int64_t kAvx512VectorLanes = 16;
constexpr int64_t kAvx2VectorLanes = 8;
bool is_explicit_vector_width(int64_t lanes);
// The vector registers of the ISA whose vectors have that many fp32 lanes: 32 at 16 lanes, 16 at 8.
int64_t vector_registers(int64_t lanes);

// `#pragma omp simd` promises the compiler there is no dependence between iterations. A store whose index does not
// move with the loop variable (an accumulation into one element) would break that promise.
bool safe_to_simd(const ForNode* loop);

// A vectorized loop whose one statement folds every iteration into one element, acc[i] = acc[i] OP e with i fixed
// (an innermost reduction loop, which lowering lets a schedule vectorize): the folds and the OpenMP reduction
// operator. An OpenMP simd reduction reassociates the iterations, as every vectorized sum does; without it a
// reduction along memory (a GEMV over W[row, k]) stays scalar.
// A guarded fold (a split with tail=guard) keeps its guard: the conjuncts that do not use the loop variable guard the
// whole reduction, element load included (they keep a spatial tail's element in bounds); the others guard each
// iteration.
// A register tile (unguarded unrolled spatial loops inside the loop, at most kMaxAccumulators elements) gives one
// fold per element, each with its own accumulator: the folds share the loads of the operand they have in common
// (x in a GEMV, A's row in a GEMM), and their independent chains hide the FMA latency that one dot product waits on.
struct SimdReduction {
  std::vector<Stmt> folds;  // StoreNodes, the unrolled loop variables replaced by constants
  const char* op;
  std::vector<Expr> outer_guard, iteration_guard;
};
constexpr int64_t kMaxAccumulators = 32;
std::optional<SimdReduction> simd_reduction(const ForNode* loop);

// Register tiles of kMinVectorAccumulators to max_vector_accumulators(lanes) folds can be explicit vectors
// (the printer's print_vector_reduction). More would not leave registers for the operands (8 of them: a 4 x 4 GEMM
// tile loads 4 rows of each operand, 24 accumulators on AVX-512, 8 on AVX2); fewer wait on the latency of their few
// add chains: GEMV tiles of two rows made the paper LSTM 1.2-1.45x slower as vectors than as an OpenMP simd
// reduction, which g++ unrolls.
constexpr size_t kMinVectorAccumulators = 4;
size_t max_vector_accumulators(int64_t lanes);

// The term each fold adds (acc = acc + term, either order), when every fold of an unguarded + tile of
// kMinVectorAccumulators to max_vector_accumulators(vector_lanes) folds is f32 constants, loads invariant in the loop
// or moving by one element per iteration, and +, -, * of those, and the loop has at least vector_lanes iterations;
// std::nullopt otherwise.
// The load under a bf16 value of a bf16 product: a load of a bf16 buffer, or bf16(x) of an f32 load; null otherwise.
const BufferLoadNode* bf16_value_load(const Expr& bf16_value);

// Or, with 16 lanes, every term f32(S) * f32(V) of two bf16 values (bf16 loads or bf16(x) of f32 loads) that move by
// one element per iteration, and the loop has at least 32: AVX-512 BF16's dot product of pairs then takes 32
// iterations at once (bf16_vector_terms says which kind).
std::optional<std::vector<Expr>> vector_terms(const ForNode* loop, const SimdReduction& r, int64_t vector_lanes);
bool bf16_vector_terms(const std::vector<Expr>& terms, const std::string& loop_var);

// A spatial register tile: serial loops (a reduction: the accumulators' index uses none of them), then unrolled loops
// (two or more elements in all), then one vectorized loop that folds acc[i] = acc[i] + term with i moving by a
// constant number of elements per iteration: by one (a convolution's rows of output pixels, several channels and rows
// at once), or by more (a 1 x 1 convolution's output channels, whose planes lie a plane apart: its weights packed by
// output channel move by one, its input pixels are broadcast). Held in explicit vectors across the whole reduction:
// vector_lanes lanes of the vectorized loop each, the last chunk masked, loads at a padded border masked lane by lane;
// strided accumulators are gathered before the reduction (or start from zero registers where zeroed just before) and
// scattered after it, once per tile. Left to g++, a ResNeXt
// 3 x 3 grouped convolution ran at 12 GFLOP/s one row at a time, 55 with four channels x seven rows written as loops (a
// 14-lane loop became pieces of 8, 4 and 2 lanes, and the accumulators lived on the stack), and 167 as explicit vectors
// (hand-written, 2 cores).
struct SpatialTile {
  std::vector<const ForNode*> reduction;                      // serial loops, outermost first
  std::vector<std::unordered_map<std::string, Expr>> combos;  // the unrolled loops' values, innermost fastest
  const ForNode* lanes = nullptr;                             // the vectorized loop
  const StoreNode* fold = nullptr;                            // acc[i] = acc[i] + term, as written
  Expr term;
  int64_t vector_lanes = 0;        // lanes of one vector
  int64_t chunks = 0;              // vectors per row of the tile
  int64_t accumulator_stride = 1;  // elements between two lanes of an accumulator
  // Per accumulator (combo-major, then chunk): the fold's index and term with the unrolled loops' values and the
  // vectorized loop at the chunk's first lane (its variable then counts lanes within the chunk).
  std::vector<Expr> indices, terms;
  // A tile of bf16 products (workloads/bf16_products.h): every term is f32(S) * f32(V), S and V bf16 (a load of a bf16
  // buffer, or bf16(x) of an f32 load), S the same in every lane, V moving by two elements per lane, and both at
  // adjacent elements for k and k + 1 when the innermost reduction loop's variable k is even (its extent is). AVX-512
  // BF16's vdpbf16ps then adds both products of a pair to 16 lanes at once: the printer steps k by two. Per
  // accumulator, S and V of its term.
  bool bf16_pairs = false;
  std::vector<Expr> pair_scalars, pair_vectors;

  // The lanes of accumulator n's chunk: vector_lanes, or fewer in the last chunk of a row.
  int64_t lanes_of(size_t n) const;
};
// Of the vector registers, all but 4 (those hold operands): 28 with AVX-512, 12 with AVX2.
int64_t max_tile_accumulators(int64_t lanes);
// A tile of whole vectors whose terms read one or two operands that move with the lanes, plain contiguous loads,
// everything else broadcast (a channel tile of one or two vectors of weights x pixels), needs two registers besides
// its accumulators: the first operand and the broadcast in turn, as each is written into its FMA; a second operand is
// read from memory by each of its FMAs (the C++ printer's ingot_fma_from_memory, for a tile whose terms are an outer
// product, as channel tiles' and GEMM panels' are; another such tile would keep an accumulator on the stack, slower
// but right). With AVX2 it may take the other 14; with AVX-512, 28 as any tile.
int64_t max_plain_operand_tile_accumulators(int64_t lanes);
// A tile of bf16 products may have up to AMX's tiles: 16 rows (an AMX tile's) x 5 chunks or 32 rows x 2 chunks (the
// printer's AMX pair tile: 8 tile registers hold the chunks' accumulators, the rows and the weight tiles), whose
// vdpbf16ps form (where AMX is not there) keeps some accumulators on the stack.
constexpr int64_t kAmxTileRows = 16, kMaxAmxTileChunks = 5;
// An AMX bf16 tile's row: 32 values of k (64 bytes). A pair tile's k must be a multiple of it.
constexpr int64_t kAmxTileK = 32;
constexpr int64_t kMaxPairTileAccumulators = kAmxTileRows * kMaxAmxTileChunks;
// The tile that starts at `loop` (its outermost serial loop), or std::nullopt.
std::optional<SpatialTile> spatial_tile(const Stmt& loop, int64_t vector_lanes);

// The spatial tile starting at `loop` whose vectorized loop is marked explicit (ForNode::explicit_lanes), matched
// with those lanes; std::nullopt otherwise.
std::optional<SpatialTile> explicit_spatial_tile(const Stmt& loop);

// How far d moves per iteration of loop_var when that is a constant other than 0; 0 otherwise.
int64_t lane_step(const Expr& d, const std::string& loop_var);
// The conjuncts of a && b && ...
void conjuncts(const Expr& e, std::vector<Expr>& out);
// The one statement of a sequence of one, else body itself.
Stmt single_statement(Stmt body);
// The loads and selects of a spatial term that move with `lanes`, each once, in order.
void collect_lane_operands(const Expr& e, const std::string& lanes, std::vector<Expr>& out);

// The vectorized loops of `body` whose register tiles explicit vectors of vector_lanes lanes could hold (by loop
// variable name), found as the printer walks: a spatial tile at its outermost serial loop, else a vectorized
// reduction. What an explicit_vectors decision may name.
std::vector<std::string> explicit_vector_sites(const Stmt& body, int64_t vector_lanes);

// One message per loop marked explicit (ForNode::explicit_lanes) that is not such a site for its lanes.
std::vector<std::string> explicit_vector_problems(const Stmt& body);

}  // namespace ingot

#include "lower/vector_tiles.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "ir/functor.h"
#include "ir/simplify.h"

namespace ingot {

bool is_explicit_vector_width(int64_t lanes) { return lanes == kAvx512VectorLanes || lanes == kAvx2VectorLanes; }

int64_t vector_registers(int64_t lanes) { return lanes >= kAvx512VectorLanes ? 32 : 16; }

size_t max_vector_accumulators(int64_t lanes) { return size_t(vector_registers(lanes) - 8); }

int64_t max_tile_accumulators(int64_t lanes) { return vector_registers(lanes) - 4; }

int64_t max_plain_operand_tile_accumulators(int64_t lanes) {
  return lanes >= kAvx512VectorLanes ? max_tile_accumulators(lanes) : vector_registers(lanes) - 2;
}

bool safe_to_simd(const ForNode* loop) {
  bool safe = true;
  for_each_stmt(loop->body, [&](const Stmt& s) {
    if (auto* st = as<StoreNode>(s))
      if (!uses_var(st->index, loop->name())) safe = false;
  });
  return safe;
}

void conjuncts(const Expr& e, std::vector<Expr>& out) {
  if (auto* l = e.as<LogicalNode>(); l && l->op == LogicalOp::kAnd) {
    conjuncts(l->a, out);
    conjuncts(l->b, out);
  } else {
    out.push_back(e);
  }
}

Stmt single_statement(Stmt body) {
  if (auto* seq = as<SeqNode>(body); seq && seq->stmts.size() == 1) return seq->stmts[0];
  return body;
}

// The OpenMP operator of a store acc[i] = acc[i] OP e (or e OP acc[i]) where e does not read acc, i does not use
// loop_var; nullptr when the store is not such a fold.
static const char* fold_operator(const StoreNode* store, const std::string& loop_var) {
  if (uses_var(store->index, loop_var)) return nullptr;
  auto* combine = store->value.as<BinaryNode>();
  if (!combine) return nullptr;
  const char* op = combine->op == BinaryOp::kAdd   ? "+"
                   : combine->op == BinaryOp::kMul ? "*"
                   : combine->op == BinaryOp::kMax ? "max"
                   : combine->op == BinaryOp::kMin ? "min"
                                                   : nullptr;
  if (!op) return nullptr;
  auto is_element = [&](const Expr& e) {
    auto* load = e.as<BufferLoadNode>();
    return load && load->buffer->name == store->buffer->name && structural_equal(load->index, store->index);
  };
  auto reads_buffer = [&](const Expr& e) {
    bool reads = false;
    for_each_node(e, [&](const Expr& n) {
      if (auto* load = n.as<BufferLoadNode>()) reads |= load->buffer->name == store->buffer->name;
    });
    return reads;
  };
  bool element_first = is_element(combine->a) && !reads_buffer(combine->b);
  bool element_second = is_element(combine->b) && !reads_buffer(combine->a);
  return element_first || element_second ? op : nullptr;
}

std::optional<SimdReduction> simd_reduction(const ForNode* loop) {
  Stmt body = single_statement(loop->body);
  std::vector<Expr> outer_guard, iteration_guard;
  if (auto* guard = as<IfThenElseNode>(body); guard && !guard->else_case) {
    std::vector<Expr> parts;
    conjuncts(guard->cond, parts);
    for (const Expr& c : parts) (uses_var(c, loop->name()) ? iteration_guard : outer_guard).push_back(c);
    body = single_statement(guard->then_case);
  }
  // The register tile: every combination of the unrolled loops' values, innermost fastest.
  std::vector<std::unordered_map<std::string, Expr>> tile(1);
  while (auto* unrolled = as<ForNode>(body)) {
    if (unrolled->loop_kind != LoopKind::kUnrolled || !iteration_guard.empty() ||
        int64_t(tile.size()) * unrolled->extent > kMaxAccumulators)
      return std::nullopt;
    std::vector<std::unordered_map<std::string, Expr>> wider;
    for (const auto& values : tile)
      for (int64_t v = 0; v < unrolled->extent; ++v) {
        wider.push_back(values);
        wider.back()[unrolled->name()] = Expr(v);
      }
    tile = std::move(wider);
    body = single_statement(unrolled->body);
  }
  auto* store = as<StoreNode>(body);
  if (!store) return std::nullopt;
  const char* op = fold_operator(store, loop->name());
  if (!op) return std::nullopt;
  SimdReduction r{{}, op, outer_guard, iteration_guard};
  for (const auto& values : tile) {
    Stmt fold = values.empty() ? body : simplify(map_exprs(body, [&](const Expr& e) { return substitute(e, values); }));
    auto* s = as<StoreNode>(fold);
    if (!s || !fold_operator(s, loop->name())) return std::nullopt;
    for (const Stmt& other : r.folds)
      if (structural_equal(as<StoreNode>(other)->index, s->index)) return std::nullopt;  // one element, two chains
    r.folds.push_back(fold);
  }
  return r;
}

int64_t lane_step(const Expr& d, const std::string& loop_var) {
  if (!uses_var(d, loop_var)) return 0;
  Expr step = simplify(substitute(d, {{loop_var, var(loop_var) + int64_t(1)}}) - d);
  auto* imm = step.as<IntImmNode>();
  return imm ? imm->value : 0;
}

const BufferLoadNode* bf16_value_load(const Expr& bf16_value) {
  if (auto* load = bf16_value.as<BufferLoadNode>()) return load->dtype == DType::kBFloat16 ? load : nullptr;
  auto* rounded = bf16_value.as<CastNode>();
  return rounded && rounded->dtype == DType::kBFloat16 && rounded->value.dtype() == DType::kFloat32
             ? rounded->value.as<BufferLoadNode>()
             : nullptr;
}

// The load under f32(S), S a bf16 value (bf16_value_load); null otherwise.
static const BufferLoadNode* bf16_operand_load(const Expr& e) {
  auto* to_f32 = e.as<CastNode>();
  if (!to_f32 || to_f32->dtype != DType::kFloat32) return nullptr;
  return bf16_value_load(to_f32->value);
}

// f32(S) * f32(V) in either order as {S, V} (the bf16 values), S invariant in `lanes` and V moving by two elements per
// lane; std::nullopt otherwise.
static std::optional<std::pair<Expr, Expr>> bf16_pair_product(const Expr& e, const std::string& lanes) {
  auto* product = e.as<BinaryNode>();
  if (!product || product->op != BinaryOp::kMul) return std::nullopt;
  for (bool scalar_first : {true, false}) {
    const Expr& s = scalar_first ? product->a : product->b;
    const Expr& v = scalar_first ? product->b : product->a;
    const BufferLoadNode *scalar = bf16_operand_load(s), *vector = bf16_operand_load(v);
    if (scalar && vector && !uses_var(scalar->index, lanes) && lane_step(vector->index, lanes) == 2)
      return std::pair{s.as<CastNode>()->value, v.as<CastNode>()->value};
  }
  return std::nullopt;
}

// A bf16 product of a vectorized reduction: f32(S) * f32(V), S and V bf16 values (bf16_operand_load) both moving by
// one element per iteration, so that 32 iterations are one vdpbf16ps of 32 bf16 each.
static bool bf16_vector_product(const Expr& e, const std::string& loop_var) {
  auto* product = e.as<BinaryNode>();
  if (!product || product->op != BinaryOp::kMul) return false;
  const BufferLoadNode *a = bf16_operand_load(product->a), *b = bf16_operand_load(product->b);
  return a && b && lane_step(a->index, loop_var) == 1 && lane_step(b->index, loop_var) == 1;
}

// What the explicit-vector form can compute of a fold's term: f32 constants, f32 loads at an index invariant in the
// loop or moving by one element per iteration, and +, -, * of those.
static bool vector_term(const Expr& e, const std::string& loop_var) {
  if (e.dtype() != DType::kFloat32) return false;
  if (e.as<FloatImmNode>()) return true;
  if (auto* load = e.as<BufferLoadNode>()) {
    return !uses_var(load->index, loop_var) || lane_step(load->index, loop_var) == 1;
  }
  if (auto* b = e.as<BinaryNode>())
    return (b->op == BinaryOp::kAdd || b->op == BinaryOp::kSub || b->op == BinaryOp::kMul) &&
           vector_term(b->a, loop_var) && vector_term(b->b, loop_var);
  return false;
}

// The term each fold adds (acc = acc + term, either order), when every fold of an unguarded + tile of
// kMinVectorAccumulators to kMaxVectorAccumulators folds is one vector_term; std::nullopt otherwise.
std::optional<std::vector<Expr>> vector_terms(const ForNode* loop, const SimdReduction& r, int64_t vector_lanes) {
  if (std::string(r.op) != "+" || !r.iteration_guard.empty() || r.folds.size() < kMinVectorAccumulators ||
      r.folds.size() > max_vector_accumulators(vector_lanes) || loop->extent < vector_lanes)
    return std::nullopt;
  std::vector<Expr> terms;
  for (const Stmt& fold : r.folds) {
    auto* store = as<StoreNode>(fold);
    auto* sum = store->value.as<BinaryNode>();
    if (store->buffer->dtype != DType::kFloat32 || !sum) return std::nullopt;
    auto* first = sum->a.as<BufferLoadNode>();
    bool element_first =
        first && first->buffer->name == store->buffer->name && structural_equal(first->index, store->index);
    Expr term = element_first ? sum->b : sum->a;
    if (!vector_term(term, loop->name()) && !bf16_vector_product(term, loop->name())) return std::nullopt;
    terms.push_back(term);
  }
  // bf16 products all (AVX-512 BF16's, 32 iterations at a time) or none.
  const size_t products = size_t(
      std::count_if(terms.begin(), terms.end(), [&](const Expr& t) { return bf16_vector_product(t, loop->name()); }));
  if (products > 0 && (products < terms.size() || vector_lanes != kAvx512VectorLanes || loop->extent < 32))
    return std::nullopt;
  return terms;
}

bool bf16_vector_terms(const std::vector<Expr>& terms, const std::string& loop_var) {
  return !terms.empty() && bf16_vector_product(terms[0], loop_var);
}

// A condition on a padded border that a range of lanes can express: a comparison of integers that moves by one or
// two per iteration of `lanes` (a stride-2 window's), or one that `lanes` does not change.
static bool lane_condition(const Expr& c, const std::string& lanes) {
  std::vector<Expr> parts;
  conjuncts(c, parts);
  for (const Expr& part : parts) {
    if (!uses_var(part, lanes)) continue;
    auto* cmp = part.as<CompareNode>();
    if (!cmp || cmp->op == CompareOp::kEQ || cmp->op == CompareOp::kNE || !is_int(cmp->a.dtype())) return false;
    int64_t step = lane_step(simplify(cmp->a - cmp->b), lanes);
    if (step == 0 || step < -2 || step > 2) return false;
  }
  return true;
}

// Whether the load under the bf16 value reads adjacent elements at k = 2 u and k = 2 u + 1.
static bool pair_adjacent(const Expr& bf16_value, const std::string& k) {
  const BufferLoadNode* load = bf16_value_load(bf16_value);
  const Expr u = var(k + ".pair");
  const Expr even = substitute(load->index, {{k, u * int64_t(2)}});
  const Expr odd = substitute(load->index, {{k, u * int64_t(2) + int64_t(1)}});
  return is_const_int(simplify(odd - even), 1);
}

// What print_spatial_tile computes of a term: f32 constants, f32 loads invariant in `lanes` or moving by one element
// per iteration (or two: a strided window, whose even elements a permute picks from two vectors), such a moving load
// under a lane_condition (select(cond, load, 0): a padded border), and +, -, *; or a bf16 pair product
// (bf16_pair_product).
static bool spatial_term(const Expr& e, const std::string& lanes) {
  if (bf16_pair_product(e, lanes)) return true;
  if (e.dtype() != DType::kFloat32) return false;
  if (e.as<FloatImmNode>()) return true;
  auto moving_load = [&](const BufferLoadNode* load) {
    int64_t step = lane_step(load->index, lanes);
    return step == 1 || step == 2;
  };
  if (auto* load = e.as<BufferLoadNode>()) return !uses_var(load->index, lanes) || moving_load(load);
  if (auto* sel = e.as<SelectNode>()) {
    auto* zero = sel->false_value.as<FloatImmNode>();
    auto* load = sel->true_value.as<BufferLoadNode>();
    // Masked lanes are +0.0: a -0.0 fill would change the sign of a zero sum. A select that does not move with the
    // lanes (a channel tile's broadcast pixel at a padded border) is one scalar, broadcast.
    if (!zero || zero->value != 0.0 || std::signbit(zero->value) || !load) return false;
    return uses_var(e, lanes) ? moving_load(load) && lane_condition(sel->cond, lanes) : true;
  }
  if (auto* b = e.as<BinaryNode>())
    return (b->op == BinaryOp::kAdd || b->op == BinaryOp::kSub || b->op == BinaryOp::kMul) &&
           spatial_term(b->a, lanes) && spatial_term(b->b, lanes);
  return false;
}

std::optional<SpatialTile> spatial_tile(const Stmt& loop, int64_t vector_lanes) {
  SpatialTile tile;
  tile.vector_lanes = vector_lanes;
  Stmt body = loop;
  while (auto* serial = as<ForNode>(body)) {
    if (serial->loop_kind != LoopKind::kSerial) break;
    tile.reduction.push_back(serial);
    body = single_statement(serial->body);
  }
  if (tile.reduction.empty()) return std::nullopt;
  tile.combos.resize(1);
  while (auto* unrolled = as<ForNode>(body)) {
    if (unrolled->loop_kind != LoopKind::kUnrolled) break;
    std::vector<std::unordered_map<std::string, Expr>> wider;
    for (const auto& values : tile.combos)
      for (int64_t v = 0; v < unrolled->extent; ++v) {
        wider.push_back(values);
        wider.back()[unrolled->name()] = Expr(v);
      }
    tile.combos = std::move(wider);
    if (int64_t(tile.combos.size()) > std::max(max_tile_accumulators(vector_lanes), kMaxPairTileAccumulators))
      return std::nullopt;
    body = single_statement(unrolled->body);
  }
  // A tile is what a schedule asks for by unrolling loops inside the reduction; a lone row stays a simd loop.
  if (tile.combos.size() < 2) return std::nullopt;
  tile.lanes = as<ForNode>(body);
  if (!tile.lanes || tile.lanes->loop_kind != LoopKind::kVectorized) return std::nullopt;
  const std::string& v = tile.lanes->name();
  tile.fold = as<StoreNode>(single_statement(tile.lanes->body));
  if (!tile.fold || tile.fold->buffer->dtype != DType::kFloat32) return std::nullopt;
  tile.accumulator_stride = lane_step(tile.fold->index, v);
  if (tile.accumulator_stride < 1) return std::nullopt;
  for (const ForNode* r : tile.reduction)
    if (uses_var(tile.fold->index, r->name())) return std::nullopt;
  auto* sum = tile.fold->value.as<BinaryNode>();
  if (!sum || sum->op != BinaryOp::kAdd) return std::nullopt;
  auto is_element = [&](const Expr& e) {
    auto* load = e.as<BufferLoadNode>();
    return load && load->buffer->name == tile.fold->buffer->name && structural_equal(load->index, tile.fold->index);
  };
  tile.term = is_element(sum->a) ? sum->b : is_element(sum->b) ? sum->a : Expr();
  if (!tile.term || !spatial_term(tile.term, v)) return std::nullopt;
  bool reads_accumulators = false;
  for_each_node(tile.term, [&](const Expr& n) {
    if (auto* load = n.as<BufferLoadNode>()) reads_accumulators |= load->buffer->name == tile.fold->buffer->name;
  });
  if (reads_accumulators) return std::nullopt;
  tile.chunks = (tile.lanes->extent + vector_lanes - 1) / vector_lanes;
  const int64_t accumulators = int64_t(tile.combos.size()) * tile.chunks;
  if (accumulators > std::max(max_tile_accumulators(vector_lanes), kMaxPairTileAccumulators)) return std::nullopt;
  for (const auto& combo : tile.combos)
    for (int64_t q = 0; q < tile.chunks; ++q) {
      auto values = combo;
      values[v] = var(v) + q * vector_lanes;
      Expr index = simplify(substitute(tile.fold->index, values)), term = simplify(substitute(tile.term, values));
      if (!spatial_term(term, v)) return std::nullopt;
      tile.indices.push_back(index);
      tile.terms.push_back(term);
    }
  size_t pairs = 0;
  for (const Expr& term : tile.terms)
    if (std::optional<std::pair<Expr, Expr>> pair = bf16_pair_product(term, v)) {
      tile.pair_scalars.push_back(pair->first);
      tile.pair_vectors.push_back(pair->second);
      ++pairs;
    }
  if (pairs > 0) {
    const ForNode* k = tile.reduction.back();
    if (pairs != tile.terms.size() || vector_lanes != kAvx512VectorLanes || tile.accumulator_stride != 1 ||
        k->extent % 2 != 0)
      return std::nullopt;
    for (size_t n = 0; n < pairs; ++n)
      if (!pair_adjacent(tile.pair_scalars[n], k->name()) || !pair_adjacent(tile.pair_vectors[n], k->name()))
        return std::nullopt;
    tile.bf16_pairs = true;
  }
  std::vector<Expr> operands;
  for (const Expr& term : tile.terms) collect_lane_operands(term, v, operands);
  const bool plain_operands = !operands.empty() && operands.size() <= 2 && tile.lanes->extent % vector_lanes == 0 &&
                              std::all_of(operands.begin(), operands.end(), [&](const Expr& operand) {
                                const auto* moving = operand.as<BufferLoadNode>();
                                return moving && lane_step(moving->index, v) == 1;
                              });
  if (accumulators > (tile.bf16_pairs  ? kMaxPairTileAccumulators
                      : plain_operands ? max_plain_operand_tile_accumulators(vector_lanes)
                                       : max_tile_accumulators(vector_lanes)))
    return std::nullopt;
  // Accumulators whose lanes overlap would each store the shared elements at the end, and one would lose its sums:
  // every two must lie a constant distance apart that is no whole number of lanes within the lower one's lanes (of
  // stride elements each: a distance that is no multiple of the stride interleaves them).
  const int64_t stride = tile.accumulator_stride;
  for (size_t a = 0; a < tile.indices.size(); ++a)
    for (size_t b = a + 1; b < tile.indices.size(); ++b) {
      Expr distance = simplify(tile.indices[b] - tile.indices[a]);
      auto* gap = distance.as<IntImmNode>();
      if (!gap) return std::nullopt;
      if (gap->value % stride != 0) continue;
      const int64_t lanes_apart = gap->value / stride;
      if (lanes_apart < tile.lanes_of(a) && -lanes_apart < tile.lanes_of(b)) return std::nullopt;
    }
  return tile;
}

void collect_lane_operands(const Expr& e, const std::string& lanes, std::vector<Expr>& out) {
  if ((e.as<BufferLoadNode>() || e.as<SelectNode>()) && uses_var(e, lanes)) {
    for (const Expr& known : out)
      if (structural_equal(known, e)) return;
    out.push_back(e);
  } else if (auto* b = e.as<BinaryNode>()) {
    collect_lane_operands(b->a, lanes, out);
    collect_lane_operands(b->b, lanes, out);
  }
}

int64_t SpatialTile::lanes_of(size_t n) const {
  return std::min(vector_lanes, lanes->extent - int64_t(n) % chunks * vector_lanes);
}

namespace {

// Walks loop IR as the C++ printer does: a serial loop that starts a spatial tile ends the walk down that nest, so
// does a vectorized loop (a reduction prints whole; a plain simd loop holds no tile).
void walk_tiles(const Stmt& s, const std::function<bool(const Stmt&)>& at_serial,
                const std::function<void(const ForNode*)>& at_vectorized) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::kSeq:
      for (const Stmt& c : as<SeqNode>(s)->stmts) walk_tiles(c, at_serial, at_vectorized);
      return;
    case StmtKind::kAllocate: walk_tiles(as<AllocateNode>(s)->body, at_serial, at_vectorized); return;
    case StmtKind::kIfThenElse:
      walk_tiles(as<IfThenElseNode>(s)->then_case, at_serial, at_vectorized);
      walk_tiles(as<IfThenElseNode>(s)->else_case, at_serial, at_vectorized);
      return;
    case StmtKind::kFor: {
      auto* loop = as<ForNode>(s);
      if (loop->loop_kind == LoopKind::kSerial && at_serial(s)) return;
      if (loop->loop_kind == LoopKind::kVectorized) return at_vectorized(loop);
      walk_tiles(loop->body, at_serial, at_vectorized);
      return;
    }
    default: return;
  }
}

// The vectorized loop a spatial tile starting at the serial loop s would end with, or nullptr.
const ForNode* innermost_vectorized(const Stmt& s) {
  Stmt body = s;
  while (auto* loop = as<ForNode>(body)) {
    if (loop->loop_kind == LoopKind::kVectorized) return loop;
    body = single_statement(loop->body);
  }
  return nullptr;
}

}  // namespace

std::optional<SpatialTile> explicit_spatial_tile(const Stmt& s) {
  const ForNode* lanes = innermost_vectorized(s);
  if (!lanes || lanes->explicit_lanes == 0) return std::nullopt;
  return spatial_tile(s, lanes->explicit_lanes);
}

namespace {

bool is_vector_reduction(const ForNode* loop, int64_t vector_lanes) {
  if (safe_to_simd(loop)) return false;
  std::optional<SimdReduction> r = simd_reduction(loop);
  return r && vector_terms(loop, *r, vector_lanes);
}

}  // namespace

std::vector<std::string> explicit_vector_sites(const Stmt& body, int64_t vector_lanes) {
  std::vector<std::string> sites;
  walk_tiles(
      body,
      [&](const Stmt& s) {
        std::optional<SpatialTile> tile = spatial_tile(s, vector_lanes);
        if (tile) sites.push_back(tile->lanes->name());
        return tile.has_value();
      },
      [&](const ForNode* loop) {
        if (is_vector_reduction(loop, vector_lanes)) sites.push_back(loop->name());
      });
  return sites;
}

std::vector<std::string> explicit_vector_problems(const Stmt& body) {
  std::set<const ForNode*> valid;
  walk_tiles(
      body,
      [&](const Stmt& s) {
        std::optional<SpatialTile> tile = explicit_spatial_tile(s);
        if (tile) valid.insert(tile->lanes);
        return tile.has_value();
      },
      [&](const ForNode* loop) {
        if (loop->explicit_lanes > 0 && is_vector_reduction(loop, loop->explicit_lanes)) valid.insert(loop);
      });
  std::vector<std::string> problems;
  for_each_stmt(body, [&](const Stmt& s) {
    auto* loop = as<ForNode>(s);
    if (loop && loop->explicit_lanes > 0 && !valid.count(loop))
      problems.push_back("loop '" + loop->name() + "' holds no register tile that explicit vectors of " +
                         std::to_string(loop->explicit_lanes) +
                         " lanes can compute (docs/schedules.md: a vectorized + reduction of " +
                         std::to_string(kMinVectorAccumulators) + " to " +
                         std::to_string(max_vector_accumulators(loop->explicit_lanes)) +
                         " folds of f32 +, -, * terms, or a spatial tile's vectorized loop)");
  });
  return problems;
}

}  // namespace ingot

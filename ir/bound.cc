#include "ir/bound.h"

#include <algorithm>
#include <limits>

namespace ingot {

namespace {

// Intermediate results are computed in 128 bits so that products and sums of two i64 bounds cannot
// overflow; a bound that does not fit back into i64 is reported as unknown.
using Wide = __int128;

constexpr Wide kI64Min = std::numeric_limits<int64_t>::min();
constexpr Wide kI64Max = std::numeric_limits<int64_t>::max();

Wide floor_div(Wide a, Wide b) {
  Wide q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

Wide floor_mod(Wide a, Wide b) { return a - b * floor_div(a, b); }

std::optional<IntRange> make_range(Wide lo, Wide hi) {
  if (lo < kI64Min || hi > kI64Max || lo > hi) return std::nullopt;
  return IntRange{int64_t(lo), int64_t(hi)};
}

// The smallest and largest of four corner values.
std::optional<IntRange> corners(Wide a, Wide b, Wide c, Wide d) {
  return make_range(std::min({a, b, c, d}), std::max({a, b, c, d}));
}

std::optional<IntRange> divide(const IntRange& x, const IntRange& d) {
  // Floor division is monotone in the dividend and, on either side of zero, in the divisor, so the extremes
  // are at the corners once the divisor range excludes zero.
  if (d.lo <= 0 && d.hi >= 0) return std::nullopt;
  return corners(floor_div(x.lo, d.lo), floor_div(x.lo, d.hi), floor_div(x.hi, d.lo), floor_div(x.hi, d.hi));
}

std::optional<IntRange> modulo(const IntRange& x, const IntRange& d) {
  if (d.lo <= 0 && d.hi >= 0) return std::nullopt;
  if (d.lo == d.hi && floor_div(x.lo, d.lo) == floor_div(x.hi, d.lo)) {
    // Inside one period x % c = x - c * q for a single q, which is increasing in x.
    return make_range(floor_mod(x.lo, d.lo), floor_mod(x.hi, d.lo));
  }
  if (d.lo > 0) {
    // The result follows the divisor's sign: [0, c - 1]; a non-negative dividend never exceeds itself.
    Wide hi = Wide(d.hi) - 1;
    if (x.lo >= 0) hi = std::min<Wide>(hi, x.hi);
    return make_range(0, hi);
  }
  Wide lo = Wide(d.lo) + 1;
  if (x.hi <= 0) lo = std::max<Wide>(lo, x.lo);
  return make_range(lo, 0);
}

std::optional<IntRange> bound(const Expr& e, const VarRanges& ranges);

std::optional<IntRange> bound_binary(const BinaryNode* n, const VarRanges& ranges) {
  auto a = bound(n->a, ranges);
  if (!a) return std::nullopt;
  auto b = bound(n->b, ranges);
  if (!b) return std::nullopt;
  switch (n->op) {
    case BinaryOp::kAdd: return make_range(Wide(a->lo) + b->lo, Wide(a->hi) + b->hi);
    case BinaryOp::kSub: return make_range(Wide(a->lo) - b->hi, Wide(a->hi) - b->lo);
    case BinaryOp::kMul:
      return corners(Wide(a->lo) * b->lo, Wide(a->lo) * b->hi, Wide(a->hi) * b->lo, Wide(a->hi) * b->hi);
    case BinaryOp::kDiv: return divide(*a, *b);
    case BinaryOp::kMod: return modulo(*a, *b);
    case BinaryOp::kMin: return IntRange{std::min(a->lo, b->lo), std::min(a->hi, b->hi)};
    case BinaryOp::kMax: return IntRange{std::max(a->lo, b->lo), std::max(a->hi, b->hi)};
  }
  return std::nullopt;
}

std::optional<IntRange> bound_cast(const CastNode* n, const VarRanges& ranges) {
  DType from = n->value.dtype();
  if (from == DType::kBool) return IntRange{0, 1};
  if (!is_int(from)) return std::nullopt;
  auto v = bound(n->value, ranges);
  if (!v) return std::nullopt;
  if (n->dtype == DType::kInt32) {
    constexpr int64_t lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
    // A value outside i32 wraps, so only the whole i32 range is sound then.
    if (v->lo < lo || v->hi > hi) return IntRange{lo, hi};
  }
  return v;
}

std::optional<IntRange> bound(const Expr& e, const VarRanges& ranges) {
  if (!e || !is_int(e.dtype())) return std::nullopt;
  switch (e.kind()) {
    case ExprKind::kIntImm: {
      int64_t v = e.as<IntImmNode>()->value;
      return IntRange{v, v};
    }
    case ExprKind::kVar: {
      auto it = ranges.find(e.as<VarNode>()->name);
      if (it == ranges.end() || it->second.lo > it->second.hi) return std::nullopt;
      return it->second;
    }
    case ExprKind::kBinary: return bound_binary(e.as<BinaryNode>(), ranges);
    case ExprKind::kSelect: {
      auto* n = e.as<SelectNode>();
      auto t = bound(n->true_value, ranges);
      if (!t) return std::nullopt;
      auto f = bound(n->false_value, ranges);
      if (!f) return std::nullopt;
      return IntRange{std::min(t->lo, f->lo), std::max(t->hi, f->hi)};
    }
    case ExprKind::kCast: return bound_cast(e.as<CastNode>(), ranges);
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<IntRange> const_bound(const Expr& e, const VarRanges& ranges) { return bound(e, ranges); }

}  // namespace ingot

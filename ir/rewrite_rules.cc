#include "ir/rewrite_rules.h"

#include <array>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

namespace ingot {

namespace {

// ---- Patterns ------------------------------------------------------------------------------------------
// A pattern is a small expression tree whose leaves may be wildcards: x, y, z match any expression (a
// wildcard used twice must match structurally equal expressions), c0, c1, c2 match integer constants.
// Integer literals match integer constants, float literals floating constants, true/false bool constants.
// In a result, operations are built with the simplifier's constructors, so c0 / c1 folds to a constant.
// Beware C++ on literals: !true is the bool false, not a pattern; write !Pat(true).

enum class PatKind : uint8_t {
  kWild,
  kConst,
  kIntLit,
  kFloatLit,
  kBoolLit,
  kBinary,
  kCompare,
  kLogical,
  kNot,
  kSelect
};

struct PatNode {
  PatKind kind;
  uint8_t op = 0;    // BinaryOp, CompareOp or LogicalOp
  uint8_t slot = 0;  // wildcard number
  int64_t int_value = 0;
  double float_value = 0;
  std::shared_ptr<const PatNode> a, b, c;
};

class Pat {
 public:
  Pat(int value) : node_(leaf(PatKind::kIntLit)) { mutable_node().int_value = value; }         // NOLINT
  Pat(double value) : node_(leaf(PatKind::kFloatLit)) { mutable_node().float_value = value; }  // NOLINT
  Pat(bool value) : node_(leaf(PatKind::kBoolLit)) { mutable_node().int_value = value; }       // NOLINT

  static Pat wild(uint8_t slot) { return Pat(PatKind::kWild, slot); }
  static Pat constant(uint8_t slot) { return Pat(PatKind::kConst, slot); }
  static Pat op(PatKind kind, uint8_t op, const Pat& a, const Pat& b = Pat(), const Pat& c = Pat()) {
    auto n = std::make_shared<PatNode>();
    n->kind = kind;
    n->op = op;
    n->a = a.node_;
    n->b = b.node_;
    n->c = c.node_;
    return Pat(std::move(n));
  }
  const PatNode& node() const { return *node_; }

 private:
  Pat() = default;
  explicit Pat(std::shared_ptr<PatNode> n) : node_(std::move(n)) {}
  Pat(PatKind kind, uint8_t slot) : node_(leaf(kind)) { mutable_node().slot = slot; }
  static std::shared_ptr<PatNode> leaf(PatKind kind) {
    auto n = std::make_shared<PatNode>();
    n->kind = kind;
    return n;
  }
  PatNode& mutable_node() { return const_cast<PatNode&>(*node_); }
  std::shared_ptr<const PatNode> node_;
};

Pat binary_pat(BinaryOp op, const Pat& a, const Pat& b) { return Pat::op(PatKind::kBinary, uint8_t(op), a, b); }
Pat compare_pat(CompareOp op, const Pat& a, const Pat& b) { return Pat::op(PatKind::kCompare, uint8_t(op), a, b); }

Pat operator+(const Pat& a, const Pat& b) { return binary_pat(BinaryOp::kAdd, a, b); }
Pat operator-(const Pat& a, const Pat& b) { return binary_pat(BinaryOp::kSub, a, b); }
Pat operator*(const Pat& a, const Pat& b) { return binary_pat(BinaryOp::kMul, a, b); }
Pat operator/(const Pat& a, const Pat& b) { return binary_pat(BinaryOp::kDiv, a, b); }
Pat operator%(const Pat& a, const Pat& b) { return binary_pat(BinaryOp::kMod, a, b); }
Pat min(const Pat& a, const Pat& b) { return binary_pat(BinaryOp::kMin, a, b); }
Pat max(const Pat& a, const Pat& b) { return binary_pat(BinaryOp::kMax, a, b); }
Pat operator<(const Pat& a, const Pat& b) { return compare_pat(CompareOp::kLT, a, b); }
Pat operator<=(const Pat& a, const Pat& b) { return compare_pat(CompareOp::kLE, a, b); }
Pat operator>(const Pat& a, const Pat& b) { return compare_pat(CompareOp::kGT, a, b); }
Pat operator>=(const Pat& a, const Pat& b) { return compare_pat(CompareOp::kGE, a, b); }
Pat operator==(const Pat& a, const Pat& b) { return compare_pat(CompareOp::kEQ, a, b); }
Pat operator!=(const Pat& a, const Pat& b) { return compare_pat(CompareOp::kNE, a, b); }
Pat operator&&(const Pat& a, const Pat& b) { return Pat::op(PatKind::kLogical, uint8_t(LogicalOp::kAnd), a, b); }
Pat operator||(const Pat& a, const Pat& b) { return Pat::op(PatKind::kLogical, uint8_t(LogicalOp::kOr), a, b); }
Pat operator!(const Pat& a) { return Pat::op(PatKind::kNot, 0, a); }
Pat select(const Pat& c, const Pat& t, const Pat& f) { return Pat::op(PatKind::kSelect, 0, c, t, f); }

const Pat x = Pat::wild(0), y = Pat::wild(1), z = Pat::wild(2);
const Pat c0 = Pat::constant(0), c1 = Pat::constant(1), c2 = Pat::constant(2);

// ---- Matches and conditions ----------------------------------------------------------------------------

struct Match {
  Expr x, y, z;  // set once the whole pattern matched (conditions and results read these)
  int64_t c0 = 0, c1 = 0, c2 = 0;
  RewriteContext* ctx = nullptr;
  // While matching, wildcards point into the matched expression, which saves reference counting on the
  // many attempts that fail.
  std::array<const Expr*, 3> wild_binding{};
  std::array<DType, 3> const_type{};
  uint8_t bound_consts = 0;  // bit i: ci is bound

  const Expr& wild(int slot) const { return slot == 0 ? x : slot == 1 ? y : z; }
  int64_t& constant(int slot) { return slot == 0 ? c0 : slot == 1 ? c1 : c2; }
  int64_t constant(int slot) const { return slot == 0 ? c0 : slot == 1 ? c1 : c2; }
  // Takes the bindings; false when a wildcard bound a floating-point expression.
  bool take_bindings() {
    bool has_float = false;
    for (int i = 0; i < 3; ++i) {
      if (!wild_binding[i]) continue;
      has_float |= is_float(wild_binding[i]->dtype());
      (i == 0 ? x : i == 1 ? y : z) = *wild_binding[i];
    }
    return !has_float;
  }

  // Provable facts about integer expressions, from the bounds the simplifier knows.
  std::optional<IntRange> diff(const Expr& a, const Expr& b) const { return ctx->difference_bound(a, b); }
  bool le(const Expr& a, const Expr& b) const {
    auto d = diff(a, b);
    return d && d->hi <= 0;
  }
  bool lt(const Expr& a, const Expr& b) const {
    auto d = diff(a, b);
    return d && d->hi < 0;
  }
  bool eq(const Expr& a, const Expr& b) const {
    auto d = diff(a, b);
    return d && d->lo == 0 && d->hi == 0;
  }
  bool ne(const Expr& a, const Expr& b) const {
    auto d = diff(a, b);
    return d && (d->lo > 0 || d->hi < 0);
  }
  bool within(const Expr& a, int64_t lo, int64_t hi) const {
    auto r = ctx->bound(a);
    return r && r->lo >= lo && r->hi <= hi;
  }
  bool nonzero(const Expr& a) const {
    auto r = ctx->bound(a);
    return r && (r->lo > 0 || r->hi < 0);
  }
};

bool add_fits(int64_t a, int64_t b) {
  int64_t r;
  return !__builtin_add_overflow(a, b, &r);
}
bool sub_fits(int64_t a, int64_t b) {
  int64_t r;
  return !__builtin_sub_overflow(a, b, &r);
}
bool mul_fits(int64_t a, int64_t b) {
  int64_t r;
  return !__builtin_mul_overflow(a, b, &r);
}
// b divides a exactly (and a / b cannot overflow).
bool divides(int64_t b, int64_t a) { return b != 0 && !(b == -1 && a == INT64_MIN) && a % b == 0; }

using Condition = bool (*)(const Match&);
using M = const Match&;

// Moving a constant right must not swap two constants back and forth (they are folded, or left alone when
// folding would overflow).
bool x_not_constant(M m) { return !as_const_int(m.x); }

struct Rule {
  Pat before, after;
  Condition condition;
  bool any_type;  // false: only when no wildcard binds a floating-point expression
};

Rule rule(Pat before, Pat after, Condition condition = nullptr) { return {before, after, condition, false}; }
// A rule that is also exact for floating-point operands (IEEE results unchanged, -0.0 and NaN included).
Rule float_safe(Pat before, Pat after, Condition condition = nullptr) { return {before, after, condition, true}; }

// ---- The table -----------------------------------------------------------------------------------------
// Rules are tried in order for the root of a node whose children are simplified; the first that matches and
// whose condition holds wins, and its result is simplified again. Every rule removes operations, folds
// constants, or moves constants right and div/mod inward, so rewriting terminates (the simplifier also caps
// its work should a cycle ever appear). Integer / and % are floor division and modulo, which is
// what makes the div/mod rules exact for negative values. i64 sums are also canonicalized by the simplifier
// itself (affine order, like terms merged, div/mod of sums of any length); these rules cover the short forms
// for every integer type.
std::vector<Rule> make_rules() {
  return {
      // Addition.
      rule(x + 0, x),
      rule(0 + x, x),
      rule(c0 + x, x + c0, x_not_constant),
      rule((x + c0) + c1, x + (c0 + c1), [](M m) { return add_fits(m.c0, m.c1); }),
      rule((x - c0) + c1, x + (c1 - c0), [](M m) { return sub_fits(m.c1, m.c0); }),
      rule(x + (0 - y), x - y),
      rule((0 - x) + y, y - x),
      rule((x - y) + y, x),
      rule(y + (x - y), x),
      rule((x / c0) * c0 + x % c0, x, [](M m) { return m.c0 != 0; }),
      rule(x % c0 + (x / c0) * c0, x, [](M m) { return m.c0 != 0; }),

      // Subtraction.
      rule(x - 0, x),
      rule(x - x, 0),
      rule(0 - (0 - x), x),
      rule((x + y) - x, y),
      rule((x + y) - y, x),
      rule((x + c0) - c1, x + (c0 - c1), [](M m) { return sub_fits(m.c0, m.c1); }),
      rule(x - (x / c0) * c0, x % c0, [](M m) { return m.c0 != 0; }),

      // Multiplication.
      rule(x * 0, 0),
      rule(0 * x, 0),
      rule(x * 1, x),
      rule(1 * x, x),
      rule(c0 * x, x * c0, x_not_constant),
      rule((x * c0) * c1, x * (c0 * c1), [](M m) { return mul_fits(m.c0, m.c1); }),
      rule((x + c0) * c1, x * c1 + c0 * c1, [](M m) { return mul_fits(m.c0, m.c1); }),

      // Floor division.
      rule(x / 1, x),
      rule(x / -1, 0 - x),
      rule(x / x, 1, [](M m) { return m.nonzero(m.x); }),
      rule(x / c0, 0, [](M m) { return m.c0 > 0 && m.within(m.x, 0, m.c0 - 1); }),
      rule((x * c0) / c1, x * (c0 / c1), [](M m) { return divides(m.c1, m.c0); }),
      rule((x * c0) / c1, x / (c1 / c0), [](M m) { return divides(m.c0, m.c1); }),
      rule((x * c0 + y) / c1, x * (c0 / c1) + y / c1, [](M m) { return divides(m.c1, m.c0); }),
      rule((y + x * c0) / c1, y / c1 + x * (c0 / c1), [](M m) { return divides(m.c1, m.c0); }),
      rule((x * c0 + y) / c1, x / (c1 / c0),
           [](M m) { return m.c0 > 0 && divides(m.c0, m.c1) && m.within(m.y, 0, m.c0 - 1); }),
      rule((y + x * c0) / c1, x / (c1 / c0),
           [](M m) { return m.c0 > 0 && divides(m.c0, m.c1) && m.within(m.y, 0, m.c0 - 1); }),
      rule((x + c0) / c1, x / c1 + c0 / c1, [](M m) { return divides(m.c1, m.c0); }),
      rule((x / c0) / c1, x / (c0 * c1), [](M m) { return m.c0 > 0 && m.c1 > 0 && mul_fits(m.c0, m.c1); }),

      // Floor modulo.
      rule(x % 1, 0),
      rule(x % -1, 0),
      rule(x % c0, x, [](M m) { return m.c0 > 0 && m.within(m.x, 0, m.c0 - 1); }),
      rule((x * c0) % c1, 0, [](M m) { return divides(m.c1, m.c0); }),
      rule((x * c0 + y) % c1, y % c1, [](M m) { return divides(m.c1, m.c0); }),
      rule((y + x * c0) % c1, y % c1, [](M m) { return divides(m.c1, m.c0); }),
      rule((x * c0 + y) % c1, (x % (c1 / c0)) * c0 + y,
           [](M m) { return m.c0 > 0 && divides(m.c0, m.c1) && m.within(m.y, 0, m.c0 - 1); }),
      rule((y + x * c0) % c1, y + (x % (c1 / c0)) * c0,
           [](M m) { return m.c0 > 0 && divides(m.c0, m.c1) && m.within(m.y, 0, m.c0 - 1); }),
      rule((x + c0) % c1, x % c1, [](M m) { return divides(m.c1, m.c0); }),
      rule((x % c0) % c1, x % c1, [](M m) { return divides(m.c1, m.c0); }),
      rule((x * c0) % c1, (x % (c1 / c0)) * c0, [](M m) { return divides(m.c0, m.c1); }),

      // Min and max: constants right, nested constants merged, and decided by bounds when one side is
      // provably no greater (min(x, x + 1), min(i, 16) with i in [0, 15], ...).
      float_safe(min(x, x), x),
      float_safe(max(x, x), x),
      rule(min(c0, x), min(x, c0), x_not_constant),
      rule(max(c0, x), max(x, c0), x_not_constant),
      rule(min(min(x, c0), c1), min(x, min(c0, c1))),
      rule(max(max(x, c0), c1), max(x, max(c0, c1))),
      rule(min(x, y), x, [](M m) { return m.le(m.x, m.y); }),
      rule(min(x, y), y, [](M m) { return m.le(m.y, m.x); }),
      rule(max(x, y), y, [](M m) { return m.le(m.x, m.y); }),
      rule(max(x, y), x, [](M m) { return m.le(m.y, m.x); }),

      // Integer comparisons decided by bounds (x == x, x < x + 1, i < 16 with i in [0, 15], ...).
      rule(x < y, true, [](M m) { return m.lt(m.x, m.y); }),
      rule(x < y, false, [](M m) { return m.le(m.y, m.x); }),
      rule(x <= y, true, [](M m) { return m.le(m.x, m.y); }),
      rule(x <= y, false, [](M m) { return m.lt(m.y, m.x); }),
      rule(x > y, true, [](M m) { return m.lt(m.y, m.x); }),
      rule(x > y, false, [](M m) { return m.le(m.x, m.y); }),
      rule(x >= y, true, [](M m) { return m.le(m.y, m.x); }),
      rule(x >= y, false, [](M m) { return m.lt(m.x, m.y); }),
      rule(x == y, true, [](M m) { return m.eq(m.x, m.y); }),
      rule(x == y, false, [](M m) { return m.ne(m.x, m.y); }),
      rule(x != y, true, [](M m) { return m.ne(m.x, m.y); }),
      rule(x != y, false, [](M m) { return m.eq(m.x, m.y); }),

      // Integer comparisons: constant on the right, then constants moved across.
      rule(c0 < x, (x > c0), x_not_constant),
      rule(c0 <= x, x >= c0, x_not_constant),
      rule(c0 > x, x < c0, x_not_constant),
      rule(c0 >= x, x <= c0, x_not_constant),
      rule(c0 == x, x == c0, x_not_constant),
      rule(c0 != x, x != c0, x_not_constant),
      rule(x + c0 < c1, x < c1 - c0, [](M m) { return sub_fits(m.c1, m.c0); }),
      rule(x + c0 <= c1, x <= c1 - c0, [](M m) { return sub_fits(m.c1, m.c0); }),
      rule(x + c0 > c1, x > c1 - c0, [](M m) { return sub_fits(m.c1, m.c0); }),
      rule(x + c0 >= c1, x >= c1 - c0, [](M m) { return sub_fits(m.c1, m.c0); }),
      rule(x + c0 == c1, x == c1 - c0, [](M m) { return sub_fits(m.c1, m.c0); }),
      rule(x + c0 != c1, x != c1 - c0, [](M m) { return sub_fits(m.c1, m.c0); }),
      rule(x - c0 < c1, x < c1 + c0, [](M m) { return add_fits(m.c1, m.c0); }),
      rule(x - c0 <= c1, x <= c1 + c0, [](M m) { return add_fits(m.c1, m.c0); }),
      rule(x - c0 > c1, x > c1 + c0, [](M m) { return add_fits(m.c1, m.c0); }),
      rule(x - c0 >= c1, x >= c1 + c0, [](M m) { return add_fits(m.c1, m.c0); }),
      rule(x - c0 == c1, x == c1 + c0, [](M m) { return add_fits(m.c1, m.c0); }),
      rule(x - c0 != c1, x != c1 + c0, [](M m) { return add_fits(m.c1, m.c0); }),

      // Logic. Negating an ordering is exact only without NaN, hence integers only; == and != are exact.
      float_safe(true && x, x),
      float_safe(x && true, x),
      float_safe(false && x, false),
      float_safe(x && false, false),
      float_safe(x && x, x),
      float_safe(x && !x, false),
      float_safe(!x && x, false),
      float_safe(true || x, true),
      float_safe(x || true, true),
      float_safe(false || x, x),
      float_safe(x || false, x),
      float_safe(x || x, x),
      float_safe(x || !x, true),
      float_safe(!x || x, true),
      float_safe(!Pat(true), false),
      float_safe(!Pat(false), true),
      float_safe(!!x, x),
      float_safe(!(x == y), x != y),
      float_safe(!(x != y), x == y),
      rule(!(x < y), x >= y),
      rule(!(x <= y), x > y),
      rule(!(x > y), x <= y),
      rule(!(x >= y), x < y),

      // Select.
      float_safe(select(true, x, y), x),
      float_safe(select(false, x, y), y),
      float_safe(select(x, y, y), y),
      float_safe(select(!x, y, z), select(x, z, y)),
      float_safe(select(x, true, false), x),
      float_safe(select(x, false, true), !x),

      // Floating-point identities that hold bit for bit (x + 0.0 does not: -0.0 + 0.0 is +0.0).
      float_safe(x * 1.0, x),
      float_safe(1.0 * x, x),
      float_safe(x - 0.0, x),
      float_safe(x / 1.0, x),
  };
}

// ---- Matching and building -----------------------------------------------------------------------------

// Rules are indexed by the kind and operator of their root so that a node tries only the rules that can match.
constexpr int kBinaryKeys = 7, kCompareKeys = 6, kLogicalKeys = 2;
constexpr int kNotKey = kBinaryKeys + kCompareKeys + kLogicalKeys, kSelectKey = kNotKey + 1, kNumKeys = kSelectKey + 1;

int root_key(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::kBinary: return int(e.as<BinaryNode>()->op);
    case ExprKind::kCompare: return kBinaryKeys + int(e.as<CompareNode>()->op);
    case ExprKind::kLogical: return kBinaryKeys + kCompareKeys + int(e.as<LogicalNode>()->op);
    case ExprKind::kNot: return kNotKey;
    case ExprKind::kSelect: return kSelectKey;
    default: return -1;
  }
}

int root_key(const PatNode& p) {
  switch (p.kind) {
    case PatKind::kBinary: return p.op;
    case PatKind::kCompare: return kBinaryKeys + p.op;
    case PatKind::kLogical: return kBinaryKeys + kCompareKeys + p.op;
    case PatKind::kNot: return kNotKey;
    case PatKind::kSelect: return kSelectKey;
    default: return -1;
  }
}

// The kind and operator of a node, for a quick check of a rule's operands before the full match.
constexpr uint16_t kAnyShape = 0xFFFF;

uint16_t shape_of(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::kBinary: return uint16_t(int(e.kind()) * 16 + int(e.as<BinaryNode>()->op));
    case ExprKind::kCompare: return uint16_t(int(e.kind()) * 16 + int(e.as<CompareNode>()->op));
    case ExprKind::kLogical: return uint16_t(int(e.kind()) * 16 + int(e.as<LogicalNode>()->op));
    default: return uint16_t(int(e.kind()) * 16);
  }
}

uint16_t shape_of(const PatNode* p) {
  if (!p) return kAnyShape;
  switch (p->kind) {
    case PatKind::kWild: return kAnyShape;
    case PatKind::kConst:
    case PatKind::kIntLit:
    case PatKind::kBoolLit: return uint16_t(int(ExprKind::kIntImm) * 16);
    case PatKind::kFloatLit: return uint16_t(int(ExprKind::kFloatImm) * 16);
    case PatKind::kBinary: return uint16_t(int(ExprKind::kBinary) * 16 + p->op);
    case PatKind::kCompare: return uint16_t(int(ExprKind::kCompare) * 16 + p->op);
    case PatKind::kLogical: return uint16_t(int(ExprKind::kLogical) * 16 + p->op);
    case PatKind::kNot: return uint16_t(int(ExprKind::kNot) * 16);
    case PatKind::kSelect: return uint16_t(int(ExprKind::kSelect) * 16);
  }
  return kAnyShape;
}

// The operands of a node that rules look at, in pattern order.
std::array<const Expr*, 3> operands_of(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::kBinary: return {&e.as<BinaryNode>()->a, &e.as<BinaryNode>()->b, nullptr};
    case ExprKind::kCompare: return {&e.as<CompareNode>()->a, &e.as<CompareNode>()->b, nullptr};
    case ExprKind::kLogical: return {&e.as<LogicalNode>()->a, &e.as<LogicalNode>()->b, nullptr};
    case ExprKind::kNot: return {&e.as<NotNode>()->a, nullptr, nullptr};
    case ExprKind::kSelect: {
      auto* n = e.as<SelectNode>();
      return {&n->cond, &n->true_value, &n->false_value};
    }
    default: return {nullptr, nullptr, nullptr};
  }
}

struct IndexedRule {
  const Rule* rule;
  std::array<uint16_t, 3> operand_shapes;  // kAnyShape where the pattern has a wildcard
};

struct RuleIndex {
  std::vector<Rule> rules;
  std::array<std::vector<IndexedRule>, kNumKeys> by_root;
};

const RuleIndex& rule_index() {
  static const RuleIndex index = [] {
    RuleIndex ix;
    ix.rules = make_rules();
    for (const Rule& r : ix.rules) {
      const PatNode& root = r.before.node();
      int key = root_key(root);
      if (key < 0) throw std::logic_error("rewrite rule without an operation at its root");
      ix.by_root[key].push_back({&r, {shape_of(root.a.get()), shape_of(root.b.get()), shape_of(root.c.get())}});
    }
    return ix;
  }();
  return index;
}

bool match(const PatNode& p, const Expr& e, Match& m) {
  switch (p.kind) {
    case PatKind::kWild: {
      const Expr*& bound = m.wild_binding[p.slot];
      if (bound) return bound->same_as(e) || structural_equal(*bound, e);
      bound = &e;
      return true;
    }
    case PatKind::kConst: {
      auto* imm = e.as<IntImmNode>();
      if (!imm || !is_int(e.dtype())) return false;
      uint8_t bit = uint8_t(1u << p.slot);
      if (m.bound_consts & bit) return m.constant(p.slot) == imm->value;
      m.bound_consts |= bit;
      m.constant(p.slot) = imm->value;
      m.const_type[p.slot] = e.dtype();
      return true;
    }
    case PatKind::kIntLit: {
      auto* imm = e.as<IntImmNode>();
      return imm && is_int(e.dtype()) && imm->value == p.int_value;
    }
    case PatKind::kFloatLit: {
      auto* imm = e.as<FloatImmNode>();
      return imm && imm->value == p.float_value && std::signbit(imm->value) == std::signbit(p.float_value);
    }
    case PatKind::kBoolLit: {
      auto* imm = e.as<IntImmNode>();
      return imm && e.dtype() == DType::kBool && (imm->value != 0) == (p.int_value != 0);
    }
    case PatKind::kBinary: {
      auto* n = e.as<BinaryNode>();
      return n && uint8_t(n->op) == p.op && match(*p.a, n->a, m) && match(*p.b, n->b, m);
    }
    case PatKind::kCompare: {
      auto* n = e.as<CompareNode>();
      return n && uint8_t(n->op) == p.op && match(*p.a, n->a, m) && match(*p.b, n->b, m);
    }
    case PatKind::kLogical: {
      auto* n = e.as<LogicalNode>();
      return n && uint8_t(n->op) == p.op && match(*p.a, n->a, m) && match(*p.b, n->b, m);
    }
    case PatKind::kNot: {
      auto* n = e.as<NotNode>();
      return n && match(*p.a, n->a, m);
    }
    case PatKind::kSelect: {
      auto* n = e.as<SelectNode>();
      return n && match(*p.a, n->cond, m) && match(*p.b, n->true_value, m) && match(*p.c, n->false_value, m);
    }
  }
  return false;
}

// literal_type: the type integer literals of the result take (the type of the rewritten node's operands).
Expr build(const PatNode& p, const Match& m, DType literal_type, RewriteContext& ctx) {
  switch (p.kind) {
    case PatKind::kWild: return m.wild(p.slot);
    case PatKind::kConst: return Expr(std::make_shared<const IntImmNode>(m.constant(p.slot), m.const_type[p.slot]));
    case PatKind::kIntLit: return Expr(std::make_shared<const IntImmNode>(p.int_value, literal_type));
    case PatKind::kFloatLit: return float_imm(p.float_value, is_float(literal_type) ? literal_type : DType::kFloat32);
    case PatKind::kBoolLit: return Expr(std::make_shared<const IntImmNode>(p.int_value, DType::kBool));
    case PatKind::kBinary:
      return ctx.make_binary(BinaryOp(p.op), build(*p.a, m, literal_type, ctx), build(*p.b, m, literal_type, ctx));
    case PatKind::kCompare:
      return ctx.make_compare(CompareOp(p.op), build(*p.a, m, literal_type, ctx), build(*p.b, m, literal_type, ctx));
    case PatKind::kLogical:
      return ctx.make_logical(LogicalOp(p.op), build(*p.a, m, literal_type, ctx), build(*p.b, m, literal_type, ctx));
    case PatKind::kNot: return ctx.make_not(build(*p.a, m, literal_type, ctx));
    case PatKind::kSelect:
      return ctx.make_select(build(*p.a, m, literal_type, ctx), build(*p.b, m, literal_type, ctx),
                             build(*p.c, m, literal_type, ctx));
  }
  return Expr();
}

DType literal_type_of(const Expr& e) {
  if (is_int(e.dtype())) return e.dtype();
  if (auto* c = e.as<CompareNode>(); c && is_int(c->a.dtype())) return c->a.dtype();
  return DType::kInt64;
}

}  // namespace

Expr apply_rewrite_rules(const Expr& e, RewriteContext& ctx) {
  int key = root_key(e);
  if (key < 0) return Expr();
  std::array<const Expr*, 3> operands = operands_of(e);
  std::array<uint16_t, 3> shapes;
  for (int i = 0; i < 3; ++i) shapes[i] = operands[i] ? shape_of(*operands[i]) : kAnyShape;
  Match m;
  m.ctx = &ctx;
  for (const IndexedRule& indexed : rule_index().by_root[key]) {
    bool possible = true;
    for (int i = 0; i < 3; ++i)
      possible &= indexed.operand_shapes[i] == kAnyShape || indexed.operand_shapes[i] == shapes[i];
    if (!possible) continue;
    const Rule* r = indexed.rule;
    m.wild_binding = {};
    m.bound_consts = 0;
    if (!match(r->before.node(), e, m)) continue;
    if (!m.take_bindings() && !r->any_type) continue;
    if (r->condition && !r->condition(m)) continue;
    return build(r->after.node(), m, literal_type_of(e), ctx);
  }
  return Expr();
}

}  // namespace ingot

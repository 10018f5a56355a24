#include "ir/simplify.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "ir/rewrite_rules.h"
#include "ir/tensor.h"

namespace ingot {

namespace {

// Guards against a rule cycle, which no rule should form: a node is rewritten at most this many rounds, rule
// results nested in rule results are left alone beyond this depth, and one simplify call does at most this
// many rewrites in all (far above what any real index needs) before leaving nodes as they are.
constexpr int kMaxRoundsPerNode = 8;
constexpr int kMaxRewriteDepth = 64;
constexpr int64_t kRewriteBudget = 1 << 16;

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

bool fits(int64_t v, DType t) {
  if (t == DType::kInt32) return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
  return true;
}

// The builders of ir/expr.h unify operand types and prepare their error messages on every call; nodes whose
// operands already agree in type (as they do inside the simplifier) are built directly.
Expr binary_node(BinaryOp op, Expr a, Expr b) {
  DType t = a.dtype();
  if (t != b.dtype() || t == DType::kBool || (op == BinaryOp::kMod && is_float(t))) return binary(op, a, b);
  return Expr(std::make_shared<const BinaryNode>(op, std::move(a), std::move(b)));
}

Expr imm(int64_t value, DType t = DType::kInt64) { return Expr(std::make_shared<const IntImmNode>(value, t)); }

Expr compare_node(CompareOp op, Expr a, Expr b) {
  if (a.dtype() != b.dtype()) return compare(op, a, b);
  return Expr(std::make_shared<const CompareNode>(op, std::move(a), std::move(b)));
}

// ---- A total order on expressions -----------------------------------------------------------------------
// Orders the terms of a canonical sum; consistent with structural_equal (0 exactly when equal), variables
// by name, so sums of variables come in name order as in to_expr(AffineForm).

template <class T>
int three_way(const T& a, const T& b) {
  return a < b ? -1 : b < a ? 1 : 0;
}

int compare_exprs(const Expr& a, const Expr& b);

int compare_lists(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (int c = three_way(a.size(), b.size())) return c;
  for (size_t i = 0; i < a.size(); ++i)
    if (int c = compare_exprs(a[i], b[i])) return c;
  return 0;
}

int compare_exprs(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return 0;
  if (int c = three_way(a.kind(), b.kind())) return c;
  if (int c = three_way(a.dtype(), b.dtype())) return c;
  switch (a.kind()) {
    case ExprKind::kIntImm: return three_way(a.as<IntImmNode>()->value, b.as<IntImmNode>()->value);
    case ExprKind::kFloatImm: {
      double x = a.as<FloatImmNode>()->value, y = b.as<FloatImmNode>()->value;
      if (x == y || (std::isnan(x) && std::isnan(y))) return 0;
      if (std::isnan(x) || std::isnan(y)) return std::isnan(x) ? 1 : -1;
      return x < y ? -1 : 1;
    }
    case ExprKind::kVar: {
      int c = a.as<VarNode>()->name.compare(b.as<VarNode>()->name);
      return c < 0 ? -1 : c > 0 ? 1 : 0;
    }
    case ExprKind::kBinary: {
      auto *x = a.as<BinaryNode>(), *y = b.as<BinaryNode>();
      if (int c = three_way(x->op, y->op)) return c;
      if (int c = compare_exprs(x->a, y->a)) return c;
      return compare_exprs(x->b, y->b);
    }
    case ExprKind::kCompare: {
      auto *x = a.as<CompareNode>(), *y = b.as<CompareNode>();
      if (int c = three_way(x->op, y->op)) return c;
      if (int c = compare_exprs(x->a, y->a)) return c;
      return compare_exprs(x->b, y->b);
    }
    case ExprKind::kLogical: {
      auto *x = a.as<LogicalNode>(), *y = b.as<LogicalNode>();
      if (int c = three_way(x->op, y->op)) return c;
      if (int c = compare_exprs(x->a, y->a)) return c;
      return compare_exprs(x->b, y->b);
    }
    case ExprKind::kNot: return compare_exprs(a.as<NotNode>()->a, b.as<NotNode>()->a);
    case ExprKind::kSelect: {
      auto *x = a.as<SelectNode>(), *y = b.as<SelectNode>();
      if (int c = compare_exprs(x->cond, y->cond)) return c;
      if (int c = compare_exprs(x->true_value, y->true_value)) return c;
      return compare_exprs(x->false_value, y->false_value);
    }
    case ExprKind::kCast: return compare_exprs(a.as<CastNode>()->value, b.as<CastNode>()->value);
    case ExprKind::kCall: {
      auto *x = a.as<CallNode>(), *y = b.as<CallNode>();
      if (int c = three_way(x->func, y->func)) return c;
      return compare_lists(x->args, y->args);
    }
    case ExprKind::kTensorRead: {
      auto *x = a.as<TensorReadNode>(), *y = b.as<TensorReadNode>();
      if (int c = x->tensor->name.compare(y->tensor->name)) return c < 0 ? -1 : 1;
      if (int c = three_way(x->tensor->shape, y->tensor->shape)) return c;
      return compare_lists(x->indices, y->indices);
    }
    case ExprKind::kBufferLoad: {
      auto *x = a.as<BufferLoadNode>(), *y = b.as<BufferLoadNode>();
      if (int c = x->buffer->name.compare(y->buffer->name)) return c < 0 ? -1 : 1;
      return compare_exprs(x->index, y->index);
    }
    case ExprKind::kReduce: {
      auto *x = a.as<ReduceNode>(), *y = b.as<ReduceNode>();
      if (int c = three_way(x->op, y->op)) return c;
      if (int c = three_way(x->axes.size(), y->axes.size())) return c;
      for (size_t i = 0; i < x->axes.size(); ++i) {
        if (int c = x->axes[i].name().compare(y->axes[i].name())) return c < 0 ? -1 : 1;
        if (int c = three_way(x->axes[i].extent, y->axes[i].extent)) return c;
      }
      return compare_exprs(x->source, y->source);
    }
  }
  return 0;
}

// ---- Linear forms over atoms ------------------------------------------------------------------------------
// An i64 expression as sum(coeff * atom) + constant, where an atom is any subexpression that is not +, -, a
// constant, or * by a constant (a variable, x / 16, a load, ...). This generalizes AffineForm to non-affine
// atoms, so that (f / 16) * 16 + f % 16 and sums containing loads are normalized too.

struct Term {
  Expr atom;
  int64_t coeff;
};

struct LinearForm {
  std::vector<Term> terms;  // after normalize(): sorted by atom, distinct atoms, no zero coefficients
  int64_t constant = 0;
  bool empty() const { return terms.empty() && constant == 0; }
};

// Adds scale * e to form; false when a coefficient overflows.
bool linearize(const Expr& e, int64_t scale, LinearForm& form) {
  if (auto* literal = e.as<IntImmNode>()) {
    int64_t t;
    return !__builtin_mul_overflow(literal->value, scale, &t) &&
           !__builtin_add_overflow(form.constant, t, &form.constant);
  }
  if (auto* n = e.as<BinaryNode>(); n && e.dtype() == DType::kInt64) {
    int64_t s;
    switch (n->op) {
      case BinaryOp::kAdd: return linearize(n->a, scale, form) && linearize(n->b, scale, form);
      case BinaryOp::kSub:
        return !__builtin_mul_overflow(scale, int64_t{-1}, &s) && linearize(n->a, scale, form) &&
               linearize(n->b, s, form);
      case BinaryOp::kMul:
        if (auto* c = as_const_int(n->b)) return !__builtin_mul_overflow(scale, *c, &s) && linearize(n->a, s, form);
        if (auto* c = as_const_int(n->a)) return !__builtin_mul_overflow(scale, *c, &s) && linearize(n->b, s, form);
        break;
      default: break;
    }
  }
  form.terms.push_back({e, scale});
  return true;
}

// Sorts terms by atom and merges like terms; false on overflow.
bool normalize(LinearForm& form) {
  auto& t = form.terms;
  std::sort(t.begin(), t.end(), [](const Term& a, const Term& b) { return compare_exprs(a.atom, b.atom) < 0; });
  size_t out = 0;
  for (size_t i = 0; i < t.size();) {
    int64_t coeff = t[i].coeff;
    size_t j = i + 1;
    for (; j < t.size() && compare_exprs(t[i].atom, t[j].atom) == 0; ++j)
      if (__builtin_add_overflow(coeff, t[j].coeff, &coeff)) return false;
    if (coeff != 0) t[out++] = {t[i].atom, coeff};
    i = j;
  }
  t.resize(out);
  return true;
}

Expr scaled(const Expr& atom, int64_t coeff) {
  return coeff == 1 ? atom : binary_node(BinaryOp::kMul, atom, imm(coeff));
}

// The canonical expression: terms in order, left-associated, negative coefficients as subtraction after the
// first term, the constant last; e.g. ((i * 4) + j) - 3.
Expr render(const LinearForm& form) {
  Expr sum;
  for (const Term& t : form.terms) {
    if (!sum)
      sum = scaled(t.atom, t.coeff);
    else if (t.coeff > 0 || t.coeff == kI64Min)
      sum = binary_node(BinaryOp::kAdd, sum, scaled(t.atom, t.coeff));
    else
      sum = binary_node(BinaryOp::kSub, sum, scaled(t.atom, -t.coeff));
  }
  if (!sum) return imm(form.constant);
  if (form.constant > 0 || form.constant == kI64Min) return binary_node(BinaryOp::kAdd, sum, imm(form.constant));
  if (form.constant < 0) return binary_node(BinaryOp::kSub, sum, imm(-form.constant));
  return sum;
}

bool is_scaled(const Expr& e, const Expr& atom, int64_t coeff) {
  if (coeff == 1) return e.same_as(atom) || structural_equal(e, atom);
  auto* n = e.as<BinaryNode>();
  return n && n->op == BinaryOp::kMul && is_const_int(n->b, coeff) &&
         (n->a.same_as(atom) || structural_equal(n->a, atom));
}

// Whether e already is render(form), checked without building anything.
bool is_rendered(const Expr& e, const LinearForm& form) {
  Expr rest = e;
  if (form.constant != 0) {
    if (form.terms.empty()) return is_const_int(e, form.constant);
    auto* n = rest.as<BinaryNode>();
    bool add = form.constant > 0 || form.constant == kI64Min;
    if (!n || n->op != (add ? BinaryOp::kAdd : BinaryOp::kSub) ||
        !is_const_int(n->b, add ? form.constant : -form.constant))
      return false;
    rest = n->a;
  } else if (form.terms.empty()) {
    return is_const_int(e, 0);
  }
  for (size_t i = form.terms.size() - 1; i > 0; --i) {
    const Term& t = form.terms[i];
    auto* n = rest.as<BinaryNode>();
    bool add = t.coeff > 0 || t.coeff == kI64Min;
    if (!n || n->op != (add ? BinaryOp::kAdd : BinaryOp::kSub) || !is_scaled(n->b, t.atom, add ? t.coeff : -t.coeff))
      return false;
    rest = n->a;
  }
  return is_scaled(rest, form.terms[0].atom, form.terms[0].coeff);
}

// x / c or x % c with a non-zero constant c; the operands through a and c.
const BinaryNode* as_div_or_mod(const Expr& e, BinaryOp op, int64_t* c) {
  auto* n = e.as<BinaryNode>();
  if (!n || n->op != op) return nullptr;
  const int64_t* v = as_const_int(n->b);
  if (!v || *v == 0) return nullptr;
  *c = *v;
  return n;
}

// ---- The simplifier ---------------------------------------------------------------------------------------

class Simplifier final : public RewriteContext {
 public:
  explicit Simplifier(const VarRanges& ranges) : ranges_(ranges) {}

  // Simplifies e bottom-up: children first, then the node itself.
  Expr simplify(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::kIntImm:
      case ExprKind::kFloatImm: return e;
      case ExprKind::kVar: {
        // A variable with a single value is that value.
        auto it = ranges_.find(e.as<VarNode>()->name);
        if (it != ranges_.end() && it->second.lo == it->second.hi && is_int(e.dtype()) &&
            fits(it->second.lo, e.dtype()))
          return imm(it->second.lo, e.dtype());
        return e;
      }
      case ExprKind::kBinary: {
        auto* n = e.as<BinaryNode>();
        Expr a = simplify(n->a), b = simplify(n->b);
        return rewrite(a.same_as(n->a) && b.same_as(n->b) ? e : binary_node(n->op, a, b));
      }
      case ExprKind::kCompare: {
        auto* n = e.as<CompareNode>();
        Expr a = simplify(n->a), b = simplify(n->b);
        return rewrite(a.same_as(n->a) && b.same_as(n->b) ? e : compare_node(n->op, a, b));
      }
      case ExprKind::kLogical: {
        auto* n = e.as<LogicalNode>();
        Expr a = simplify(n->a), b = simplify(n->b);
        return rewrite(a.same_as(n->a) && b.same_as(n->b) ? e : logical(n->op, a, b));
      }
      case ExprKind::kNot: {
        auto* n = e.as<NotNode>();
        Expr a = simplify(n->a);
        return rewrite(a.same_as(n->a) ? e : logical_not(a));
      }
      case ExprKind::kSelect: {
        auto* n = e.as<SelectNode>();
        Expr c = simplify(n->cond), t = simplify(n->true_value), f = simplify(n->false_value);
        bool same = c.same_as(n->cond) && t.same_as(n->true_value) && f.same_as(n->false_value);
        return rewrite(same ? e : select(c, t, f));
      }
      case ExprKind::kCast: {
        auto* n = e.as<CastNode>();
        Expr v = simplify(n->value);
        return rewrite(v.same_as(n->value) ? e : cast(n->dtype, v));
      }
      case ExprKind::kCall: {
        auto* n = e.as<CallNode>();
        std::vector<Expr> args;
        return simplify_list(n->args, args) ? call(n->func, std::move(args)) : e;
      }
      case ExprKind::kTensorRead: {
        auto* n = e.as<TensorReadNode>();
        std::vector<Expr> indices;
        return simplify_list(n->indices, indices) ? read(n->tensor, std::move(indices)) : e;
      }
      case ExprKind::kBufferLoad: {
        auto* n = e.as<BufferLoadNode>();
        Expr i = simplify(n->index);
        return i.same_as(n->index) ? e : load(n->buffer, i);
      }
      case ExprKind::kReduce: {
        // The source sees each reduce axis over [0, extent - 1].
        auto* n = e.as<ReduceNode>();
        VarRanges inner = ranges_;
        for (const IterVar& axis : n->axes) inner[axis.name()] = IntRange{0, axis.extent - 1};
        Expr s = Simplifier(inner).simplify(n->source);
        return s.same_as(n->source) ? e : reduce(n->op, s, n->axes);
      }
    }
    return e;
  }

  // ---- RewriteContext ----
  std::optional<IntRange> bound(const Expr& e) override {
    if (auto r = const_bound(e, ranges_)) return r;
    // x % c lies in [0, c - 1] (or [c + 1, 0]) whatever x is, even when const_bound knows nothing of x.
    int64_t c;
    if (as_div_or_mod(e, BinaryOp::kMod, &c) && c != kI64Min) return c > 0 ? IntRange{0, c - 1} : IntRange{c + 1, 0};
    return std::nullopt;
  }

  std::optional<IntRange> difference_bound(const Expr& a, const Expr& b) override {
    if (a.same_as(b) || structural_equal(a, b)) return IntRange{0, 0};
    if (a.dtype() == DType::kInt64 && b.dtype() == DType::kInt64) {
      // Through the linear form, so that shared terms cancel before bounding: (x + 1) - x is exactly 1.
      LinearForm diff;
      diff.terms.reserve(8);
      if (linearize(a, 1, diff) && linearize(b, -1, diff) && normalize(diff)) return bound_linear(diff);
      return std::nullopt;
    }
    auto x = bound(a), y = bound(b);
    int64_t lo, hi;
    if (!x || !y || __builtin_sub_overflow(x->lo, y->hi, &lo) || __builtin_sub_overflow(x->hi, y->lo, &hi))
      return std::nullopt;
    return IntRange{lo, hi};
  }

  Expr make_binary(BinaryOp op, Expr a, Expr b) override {
    return rewrite(binary_node(op, std::move(a), std::move(b)));
  }
  Expr make_compare(CompareOp op, Expr a, Expr b) override {
    return rewrite(compare_node(op, std::move(a), std::move(b)));
  }
  Expr make_logical(LogicalOp op, Expr a, Expr b) override { return rewrite(logical(op, std::move(a), std::move(b))); }
  Expr make_not(Expr a) override { return rewrite(logical_not(std::move(a))); }
  Expr make_select(Expr c, Expr t, Expr f) override {
    return rewrite(select(std::move(c), std::move(t), std::move(f)));
  }

 private:
  bool simplify_list(const std::vector<Expr>& in, std::vector<Expr>& out) {
    bool changed = false;
    out.reserve(in.size());
    for (const Expr& x : in) {
      out.push_back(simplify(x));
      changed |= !out.back().same_as(x);
    }
    return changed;
  }

  // Rewrites a node whose children are simplified until no rule applies.
  Expr rewrite(Expr e) {
    if (depth_ >= kMaxRewriteDepth) return e;
    ++depth_;
    for (int round = 0; round < kMaxRoundsPerNode && budget_ > 0; ++round) {
      --budget_;
      // A constant is final, and so is a rule's result: the simplifying constructors built it.
      if (Expr folded = fold_constants(e)) {
        e = std::move(folded);
        break;
      }
      if (Expr r = apply_rewrite_rules(e, *this)) {
        e = std::move(r);
        break;
      }
      Expr next = rewrite_structure(e);
      if (next.same_as(e)) break;
      e = std::move(next);
    }
    --depth_;
    return e;
  }

  // The rewrites that are not table rules: canonical i64 sums, div and mod of sums, casts of casts.
  Expr rewrite_structure(const Expr& e) {
    if (auto* n = e.as<BinaryNode>(); n && e.dtype() == DType::kInt64) {
      switch (n->op) {
        case BinaryOp::kAdd:
        case BinaryOp::kSub:
        case BinaryOp::kMul: return canonical_sum(e);
        case BinaryOp::kDiv:
        case BinaryOp::kMod: return divide_sum(n, e);
        default: break;
      }
    }
    if (auto* n = e.as<CastNode>()) return simplify_cast(n, e);
    return e;
  }

  // ---- Constant folding ----

  Expr fold_constants(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::kBinary: {
        auto* n = e.as<BinaryNode>();
        const int64_t *a = as_const_int(n->a), *b = as_const_int(n->b);
        if (!a || !b || !is_int(e.dtype())) return Expr();
        int64_t r = 0;
        switch (n->op) {
          case BinaryOp::kAdd:
            if (__builtin_add_overflow(*a, *b, &r)) return Expr();
            break;
          case BinaryOp::kSub:
            if (__builtin_sub_overflow(*a, *b, &r)) return Expr();
            break;
          case BinaryOp::kMul:
            if (__builtin_mul_overflow(*a, *b, &r)) return Expr();
            break;
          case BinaryOp::kDiv:
            if (*b == 0 || (*a == kI64Min && *b == -1)) return Expr();
            r = floor_div(*a, *b);
            break;
          case BinaryOp::kMod:
            if (*b == 0) return Expr();
            r = *b == -1 ? 0 : floor_mod(*a, *b);
            break;
          case BinaryOp::kMin: r = std::min(*a, *b); break;
          case BinaryOp::kMax: r = std::max(*a, *b); break;
        }
        return fits(r, e.dtype()) ? imm(r, e.dtype()) : Expr();
      }
      case ExprKind::kCompare: {
        auto* n = e.as<CompareNode>();
        if (auto* a = as_const_int(n->a), *b = as_const_int(n->b); a && b)
          return bool_imm(compare_values(n->op, *a, *b));
        auto *fa = n->a.as<FloatImmNode>(), *fb = n->b.as<FloatImmNode>();
        if (!fa || !fb || n->a.dtype() != DType::kFloat32) return Expr();
        // Compare as the f32 values the target sees; NaN compares false except with !=.
        return bool_imm(compare_values(n->op, float(fa->value), float(fb->value)));
      }
      case ExprKind::kCast: return fold_cast(e.as<CastNode>());
      default: return Expr();  // logic and select of constants are rules
    }
  }

  static Expr bool_imm(bool v) { return imm(v ? 1 : 0, DType::kBool); }

  template <class T>
  static bool compare_values(CompareOp op, T a, T b) {
    switch (op) {
      case CompareOp::kLT: return a < b;
      case CompareOp::kLE: return a <= b;
      case CompareOp::kGT: return a > b;
      case CompareOp::kGE: return a >= b;
      case CompareOp::kEQ: return a == b;
      case CompareOp::kNE: return a != b;
    }
    return false;
  }

  static Expr fold_cast(const CastNode* n) {
    DType to = n->dtype;
    if (auto* i = n->value.as<IntImmNode>()) {
      if (to == DType::kBool) return bool_imm(i->value != 0);
      if (is_int(to)) return fits(i->value, to) ? imm(i->value, to) : Expr();
      if (to == DType::kFloat32) return float_imm(double(float(i->value)), to);
      return Expr();  // f16 and bf16 round differently; leave it to the target
    }
    if (auto* f = n->value.as<FloatImmNode>()) {
      // Float to integer truncates toward zero, as in C; only values that fit are folded.
      double v = f->value;
      if (n->value.dtype() == DType::kFloat32) v = float(v);
      if (!is_int(to) || !std::isfinite(v)) return Expr();
      double t = std::trunc(v);
      if (to == DType::kInt32 && (t < -2147483648.0 || t > 2147483647.0)) return Expr();
      if (to == DType::kInt64 && (t < -9223372036854775808.0 || t >= 9223372036854775808.0)) return Expr();
      return imm(int64_t(t), to);
    }
    return Expr();
  }

  // cast(t, cast(s, x)) with x of type t is x when s holds every value of x.
  Expr simplify_cast(const CastNode* n, const Expr& e) {
    auto* inner = n->value.as<CastNode>();
    if (!inner || inner->value.dtype() != n->dtype || !is_int(n->dtype) || !is_int(inner->dtype)) return e;
    if (inner->dtype == DType::kInt64) return inner->value;
    auto r = bound(inner->value);
    if (r && fits(r->lo, DType::kInt32) && fits(r->hi, DType::kInt32)) return inner->value;
    return e;
  }

  // ---- i64 sums ----

  std::optional<IntRange> bound_linear(const LinearForm& form) {
    __int128 lo = form.constant, hi = form.constant;
    for (const Term& t : form.terms) {
      auto r = bound(t.atom);
      if (!r) return std::nullopt;
      __int128 a = __int128(t.coeff) * r->lo, b = __int128(t.coeff) * r->hi;
      lo += std::min(a, b);
      hi += std::max(a, b);
    }
    constexpr __int128 kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
    if (lo < kMin || hi > kMax) return std::nullopt;
    return IntRange{int64_t(lo), int64_t(hi)};
  }

  // Puts an i64 sum in canonical order with like terms merged, and puts a split axis back together:
  // k * c * (a / c) + k * (a % c) -> k * a, and k * a - k * c * (a / c) -> k * (a % c).
  Expr canonical_sum(const Expr& e) {
    auto* n = e.as<BinaryNode>();
    if (n->op == BinaryOp::kMul && !as_const_int(n->a) && !as_const_int(n->b)) return e;  // an atom
    LinearForm form;
    form.terms.reserve(8);
    if (!linearize(e, 1, form) || !normalize(form)) return e;
    for (int i = 0; i < 4 && fuse_div_mod(form); ++i) {
    }
    return is_rendered(e, form) ? e : render(form);
  }

  bool fuse_div_mod(LinearForm& form) {
    auto find_term = [&](BinaryOp op, const Expr& a, int64_t c) -> int {
      for (size_t j = 0; j < form.terms.size(); ++j) {
        int64_t cj;
        auto* d = as_div_or_mod(form.terms[j].atom, op, &cj);
        if (d && cj == c && structural_equal(d->a, a)) return int(j);
      }
      return -1;
    };
    // k * (a % c) + k * c * (a / c) = k * a: always simpler.
    for (size_t i = 0; i < form.terms.size(); ++i) {
      int64_t c, kc;
      auto* mod = as_div_or_mod(form.terms[i].atom, BinaryOp::kMod, &c);
      int64_t k = form.terms[i].coeff;
      if (!mod || __builtin_mul_overflow(k, c, &kc)) continue;
      int j = find_term(BinaryOp::kDiv, mod->a, c);
      if (j < 0 || form.terms[j].coeff != kc) continue;
      LinearForm next = form;
      Expr a = mod->a;
      next.terms.erase(next.terms.begin() + std::max<size_t>(i, j));
      next.terms.erase(next.terms.begin() + std::min<size_t>(i, j));
      if (!linearize(a, k, next) || !normalize(next)) continue;
      form = std::move(next);
      return true;
    }
    // k * (a % c) + k * c * ((a / c) % d) = k * (a % (c * d)) for c, d > 0: an index fused across three axes
    // (rows i, j, l of extents 4, 7, 7: x / 49, x / 7 % 7 and x % 7), which the rule above then folds into x.
    for (size_t i = 0; i < form.terms.size(); ++i) {
      int64_t c, kc, cd;
      auto* mod = as_div_or_mod(form.terms[i].atom, BinaryOp::kMod, &c);
      const int64_t k = form.terms[i].coeff;
      if (!mod || c <= 0 || __builtin_mul_overflow(k, c, &kc)) continue;
      for (size_t j = 0; j < form.terms.size(); ++j) {
        int64_t d, cj;
        auto* outer = as_div_or_mod(form.terms[j].atom, BinaryOp::kMod, &d);
        auto* div = outer ? as_div_or_mod(outer->a, BinaryOp::kDiv, &cj) : nullptr;
        if (j == i || !div || d <= 0 || cj != c || form.terms[j].coeff != kc || !structural_equal(div->a, mod->a) ||
            __builtin_mul_overflow(c, d, &cd))
          continue;
        LinearForm next = form;
        next.terms.erase(next.terms.begin() + std::max<size_t>(i, j));
        next.terms.erase(next.terms.begin() + std::min<size_t>(i, j));
        if (!linearize(make_binary(BinaryOp::kMod, mod->a, imm(cd)), k, next) || !normalize(next)) continue;
        form = std::move(next);
        return true;
      }
    }
    // k * a - k * c * (a / c) = k * (a % c): taken only when it leaves fewer terms.
    for (size_t i = 0; i < form.terms.size(); ++i) {
      int64_t c;
      auto* div = as_div_or_mod(form.terms[i].atom, BinaryOp::kDiv, &c);
      int64_t m = form.terms[i].coeff;
      if (!div || (m == kI64Min && c == -1) || m % c != 0) continue;
      int64_t k = -(m / c), minus_k;
      if (k == kI64Min || __builtin_mul_overflow(k, int64_t{-1}, &minus_k)) continue;
      LinearForm next = form;
      next.terms.erase(next.terms.begin() + i);
      if (!linearize(div->a, minus_k, next) || !linearize(make_binary(BinaryOp::kMod, div->a, imm(c)), k, next) ||
          !normalize(next) || next.terms.size() >= form.terms.size())
        continue;
      form = std::move(next);
      return true;
    }
    return false;
  }

  // (q * c + r) / c -> q + r / c and (q * c + r) % c -> r % c for a sum of any length: terms whose
  // coefficient is a multiple of c leave the division (exact for floor division); then r / c and r % c are
  // decided when r's bounds lie within one period of c, or split further when r = d * r' + s with d | c and
  // s in [0, d - 1]: r / c = r' / (c / d) and r % c = (r' % (c / d)) * d + s.
  Expr divide_sum(const BinaryNode* n, const Expr& e) {
    const int64_t* cp = as_const_int(n->b);
    if (!cp || *cp == 0 || *cp == -1) return e;
    const int64_t c = *cp;
    const bool is_div = n->op == BinaryOp::kDiv;
    LinearForm whole;
    whole.terms.reserve(8);
    if (!linearize(n->a, 1, whole) || !normalize(whole)) return e;
    LinearForm quotient, rest;
    quotient.constant = floor_div(whole.constant, c);
    rest.constant = floor_mod(whole.constant, c);
    for (const Term& t : whole.terms) {
      if (t.coeff % c == 0)
        quotient.terms.push_back({t.atom, t.coeff / c});
      else
        rest.terms.push_back(t);
    }
    int64_t scaled_back;
    if (auto r = bound_linear(rest)) {
      int64_t lo = floor_div(r->lo, c), hi = floor_div(r->hi, c);
      if (lo == hi) {
        if (is_div) {
          if (__builtin_add_overflow(quotient.constant, lo, &quotient.constant)) return e;
          return make_sum(quotient);
        }
        if (__builtin_mul_overflow(c, lo, &scaled_back) ||
            __builtin_sub_overflow(rest.constant, scaled_back, &rest.constant))
          return e;
        return make_sum(rest);
      }
    }
    if (c > 0 && !rest.terms.empty()) {
      if (Expr split = split_by_divisor(rest, c, is_div)) {
        return is_div ? make_binary(BinaryOp::kAdd, make_sum(quotient), split) : split;
      }
    }
    if (quotient.empty()) return e;
    Expr rest_expr = make_binary(n->op, render(rest), imm(c));
    return is_div ? make_binary(BinaryOp::kAdd, make_sum(quotient), rest_expr) : rest_expr;
  }

  // r / c or r % c (c > 0) via the largest divisor d of c such that r = d * r' + s with s in [0, d - 1].
  Expr split_by_divisor(const LinearForm& r, int64_t c, bool is_div) {
    int64_t best = 0;
    LinearForm best_multiple, best_small;
    for (const Term& candidate : r.terms) {
      int64_t d = candidate.coeff < 0 ? (candidate.coeff == kI64Min ? 0 : -candidate.coeff) : candidate.coeff;
      if (d <= 1 || d >= c || c % d != 0 || d <= best) continue;
      LinearForm multiple, small;
      multiple.constant = floor_div(r.constant, d);
      small.constant = floor_mod(r.constant, d);
      for (const Term& t : r.terms) {
        if (t.coeff % d == 0)
          multiple.terms.push_back({t.atom, t.coeff / d});
        else
          small.terms.push_back(t);
      }
      auto sb = bound_linear(small);
      if (!sb || sb->lo < 0 || sb->hi > d - 1) continue;
      best = d;
      best_multiple = std::move(multiple);
      best_small = std::move(small);
    }
    if (best == 0) return Expr();
    Expr inner = make_binary(is_div ? BinaryOp::kDiv : BinaryOp::kMod, make_sum(best_multiple), imm(c / best));
    if (is_div) return inner;
    return make_binary(BinaryOp::kAdd, make_binary(BinaryOp::kMul, inner, imm(best)), make_sum(best_small));
  }

  Expr make_sum(const LinearForm& form) {
    Expr e = render(form);
    return e.as<BinaryNode>() ? rewrite(e) : e;
  }

  const VarRanges& ranges_;
  int depth_ = 0;
  int64_t budget_ = kRewriteBudget;
};

// ---- Statements ------------------------------------------------------------------------------------------

bool is_empty(const Stmt& s) {
  auto* q = as<SeqNode>(s);
  return q && q->stmts.empty();
}

class StmtSimplifier {
 public:
  explicit StmtSimplifier(const VarRanges& ranges) : ranges_(ranges) {}

  Stmt simplify(const Stmt& s) {
    if (!s) return s;
    switch (s->kind) {
      case StmtKind::kFor: {
        auto* n = as<ForNode>(s);
        Scope scope(*this);
        scope.set(n->name(), IntRange{0, n->extent - 1});
        Stmt body = simplify(n->body);
        if (is_empty(body)) return seq({});
        return body == n->body ? s : with_body(n, body);
      }
      case StmtKind::kSeq: {
        auto* n = as<SeqNode>(s);
        std::vector<Stmt> out;
        out.reserve(n->stmts.size());
        bool changed = false;
        for (const Stmt& c : n->stmts) {
          out.push_back(simplify(c));
          changed |= out.back() != c;
        }
        return changed ? seq(std::move(out)) : s;
      }
      case StmtKind::kStore: {
        auto* n = as<StoreNode>(s);
        Expr i = expr(n->index), v = expr(n->value);
        return i.same_as(n->index) && v.same_as(n->value) ? s : store(n->buffer, i, v);
      }
      case StmtKind::kAllocate: {
        auto* n = as<AllocateNode>(s);
        Stmt body = simplify(n->body);
        if (is_empty(body)) return seq({});
        return body == n->body ? s : allocate(n->buffer, body);
      }
      case StmtKind::kIfThenElse: return simplify_if(as<IfThenElseNode>(s), s);
      case StmtKind::kBarrier:
      case StmtKind::kPrefetch: return s;
    }
    return s;
  }

 private:
  // Narrows variable ranges for the duration of a branch or loop body and restores them afterwards.
  class Scope {
   public:
    explicit Scope(StmtSimplifier& owner) : owner_(owner) {}
    ~Scope() {
      for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
        if (it->second)
          owner_.ranges_[it->first] = *it->second;
        else
          owner_.ranges_.erase(it->first);
      }
    }
    void set(const std::string& name, IntRange r) {
      auto it = owner_.ranges_.find(name);
      saved_.emplace_back(name, it == owner_.ranges_.end() ? std::nullopt : std::optional<IntRange>(it->second));
      owner_.ranges_[name] = r;
    }
    // Narrows by cond being `truth`, for comparisons of a variable with a constant and conjunctions of them.
    void assume(const Expr& cond, bool truth) {
      if (auto* n = cond.as<NotNode>()) return assume(n->a, !truth);
      if (auto* n = cond.as<LogicalNode>()) {
        if ((n->op == LogicalOp::kAnd) == truth) {
          assume(n->a, truth);
          assume(n->b, truth);
        }
        return;
      }
      auto* n = cond.as<CompareNode>();
      if (!n) return;
      CompareOp op = n->op;
      Expr v = n->a;
      const int64_t* c = as_const_int(n->b);
      if (!c) {
        c = as_const_int(n->a);
        v = n->b;
        op = mirrored(op);
      }
      auto* var = v.as<VarNode>();
      if (!c || !var || !is_int(v.dtype())) return;
      if (!truth) op = negated(op);
      auto it = owner_.ranges_.find(var->name);
      if (it == owner_.ranges_.end()) return;
      IntRange r = it->second;
      int64_t k = *c;
      switch (op) {
        case CompareOp::kLT:
          if (k == kI64Min) return;
          r.hi = std::min(r.hi, k - 1);
          break;
        case CompareOp::kLE: r.hi = std::min(r.hi, k); break;
        case CompareOp::kGT:
          if (k == std::numeric_limits<int64_t>::max()) return;
          r.lo = std::max(r.lo, k + 1);
          break;
        case CompareOp::kGE: r.lo = std::max(r.lo, k); break;
        case CompareOp::kEQ: r = {std::max(r.lo, k), std::min(r.hi, k)}; break;
        case CompareOp::kNE: return;
      }
      if (r.lo <= r.hi) set(var->name, r);
    }

   private:
    static CompareOp mirrored(CompareOp op) {
      switch (op) {
        case CompareOp::kLT: return CompareOp::kGT;
        case CompareOp::kLE: return CompareOp::kGE;
        case CompareOp::kGT: return CompareOp::kLT;
        case CompareOp::kGE: return CompareOp::kLE;
        default: return op;
      }
    }
    static CompareOp negated(CompareOp op) {
      switch (op) {
        case CompareOp::kLT: return CompareOp::kGE;
        case CompareOp::kLE: return CompareOp::kGT;
        case CompareOp::kGT: return CompareOp::kLE;
        case CompareOp::kGE: return CompareOp::kLT;
        case CompareOp::kEQ: return CompareOp::kNE;
        case CompareOp::kNE: return CompareOp::kEQ;
      }
      return op;
    }
    StmtSimplifier& owner_;
    std::vector<std::pair<std::string, std::optional<IntRange>>> saved_;
  };

  Expr expr(const Expr& e) { return Simplifier(ranges_).simplify(e); }

  Stmt branch(const Stmt& s, const Expr& cond, bool truth) {
    if (!s) return s;
    Scope scope(*this);
    scope.assume(cond, truth);
    return simplify(s);
  }

  Stmt simplify_if(const IfThenElseNode* n, const Stmt& s) {
    Expr cond = expr(n->cond);
    if (auto* c = as_const_int(cond)) {
      Stmt taken = *c ? n->then_case : n->else_case;
      return taken ? simplify(taken) : seq({});
    }
    Stmt then_case = branch(n->then_case, cond, true);
    Stmt else_case = branch(n->else_case, cond, false);
    if (else_case && is_empty(else_case)) else_case = nullptr;
    if (is_empty(then_case)) {
      if (!else_case) return seq({});
      return if_then_else(Simplifier(ranges_).make_not(cond), else_case);
    }
    if (cond.same_as(n->cond) && then_case == n->then_case && else_case == n->else_case) return s;
    return if_then_else(cond, then_case, else_case);
  }

  VarRanges ranges_;
};

}  // namespace

Expr simplify(const Expr& e, const VarRanges& ranges) {
  if (!e) return e;
  return Simplifier(ranges).simplify(e);
}

Stmt simplify(const Stmt& s, const VarRanges& ranges) { return StmtSimplifier(ranges).simplify(s); }

}  // namespace ingot

#include "analysis/index_form.h"

namespace ingot {

namespace {

int64_t floor_div_int(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

IndexForm single_term(std::shared_ptr<const IndexTerm> term) {
  IndexForm f;
  std::string key = term->key;
  f.terms.emplace(std::move(key), IndexForm::Entry{1, std::move(term)});
  return f;
}

IndexForm var_form(const std::string& name) {
  auto term = std::make_shared<IndexTerm>();
  term->kind = IndexTerm::Kind::kVar;
  term->name = name;
  term->key = name;
  return single_term(std::move(term));
}

IndexForm opaque_form(const Expr& e) {
  auto term = std::make_shared<IndexTerm>();
  term->kind = IndexTerm::Kind::kOpaque;
  term->opaque = e;
  term->key = "{" + to_string(e) + "}";
  return single_term(std::move(term));
}

IndexForm div_or_mod_form(IndexTerm::Kind kind, IndexForm operand, int64_t divisor) {
  auto term = std::make_shared<IndexTerm>();
  term->kind = kind;
  term->key = "(" + operand.key() + ")" + (kind == IndexTerm::Kind::kDiv ? "/" : "%") + std::to_string(divisor);
  term->operand = std::move(operand);
  term->divisor = divisor;
  return single_term(std::move(term));
}

IndexForm constant_form(int64_t value) {
  IndexForm f;
  f.constant = value;
  return f;
}

// x = divisor * quotient + remainder, where the remainder keeps each coefficient (and the constant) reduced
// into [0, divisor): what a division can move out of its operand exactly.
void split(const IndexForm& x, int64_t divisor, IndexForm& quotient, IndexForm& remainder) {
  for (const auto& [key, entry] : x.terms) {
    int64_t q = floor_div_int(entry.coefficient, divisor), r = entry.coefficient - q * divisor;
    if (q != 0) quotient.terms.emplace(key, IndexForm::Entry{q, entry.term});
    if (r != 0) remainder.terms.emplace(key, IndexForm::Entry{r, entry.term});
  }
  quotient.constant = floor_div_int(x.constant, divisor);
  remainder.constant = x.constant - quotient.constant * divisor;
}

// The form when it is exactly one term with coefficient 1: that term, else nullptr.
const IndexTerm* lone_term(const IndexForm& f) {
  if (f.constant != 0 || f.terms.size() != 1 || f.terms.begin()->second.coefficient != 1) return nullptr;
  return f.terms.begin()->second.term.get();
}

}  // namespace

bool IndexForm::is_affine() const {
  for (const auto& [key, entry] : terms)
    if (entry.term->kind != IndexTerm::Kind::kVar) return false;
  return true;
}

std::string IndexForm::single_variable() const {
  const IndexTerm* t = lone_term(*this);
  return t && t->kind == IndexTerm::Kind::kVar ? t->name : "";
}

std::string IndexForm::key() const {
  std::string out;
  for (const auto& [key, entry] : terms) out += std::to_string(entry.coefficient) + "*" + key + " + ";
  return out + std::to_string(constant);
}

IndexForm IndexNormalizer::add(const IndexForm& a, const IndexForm& b) const {
  IndexForm sum = a;
  for (const auto& [key, entry] : b.terms) {
    auto [it, inserted] = sum.terms.emplace(key, entry);
    if (inserted) continue;
    it->second.coefficient += entry.coefficient;
    if (it->second.coefficient == 0) sum.terms.erase(it);
  }
  sum.constant += b.constant;
  return cancel_reshape_pairs(std::move(sum));
}

IndexForm IndexNormalizer::scale(const IndexForm& a, int64_t factor) const {
  if (factor == 0) return constant_form(0);
  IndexForm out = a;
  for (auto& [key, entry] : out.terms) entry.coefficient *= factor;
  out.constant *= factor;
  return out;
}

IndexForm IndexNormalizer::floor_div(const IndexForm& x, int64_t divisor) const {
  if (divisor == 1) return x;
  IndexForm quotient, remainder;
  split(x, divisor, quotient, remainder);
  if (std::optional<IntRange> r = range(remainder)) {
    int64_t lo = floor_div_int(r->lo, divisor), hi = floor_div_int(r->hi, divisor);
    if (lo == hi) return add(quotient, constant_form(lo));
  }
  // (y / p) / q is y / (p * q) for floor division by positive constants: one canonical spelling, so that a
  // reshape's (f / R) % Q finds its partner f / (Q * R) whichever way the builder wrote it.
  if (const IndexTerm* inner = lone_term(remainder); inner && inner->kind == IndexTerm::Kind::kDiv) {
    int64_t combined = 0;
    if (!__builtin_mul_overflow(inner->divisor, divisor, &combined))
      return add(quotient, div_or_mod_form(IndexTerm::Kind::kDiv, inner->operand, combined));
  }
  return add(quotient, div_or_mod_form(IndexTerm::Kind::kDiv, std::move(remainder), divisor));
}

IndexForm IndexNormalizer::floor_mod(const IndexForm& x, int64_t divisor) const {
  if (divisor == 1) return constant_form(0);
  IndexForm quotient, remainder;
  split(x, divisor, quotient, remainder);
  if (std::optional<IntRange> r = range(remainder)) {
    int64_t lo = floor_div_int(r->lo, divisor), hi = floor_div_int(r->hi, divisor);
    if (lo == hi) return add(remainder, constant_form(-lo * divisor));
  }
  return div_or_mod_form(IndexTerm::Kind::kMod, std::move(remainder), divisor);
}

IndexForm IndexNormalizer::cancel_reshape_pairs(IndexForm form) const {
  for (const auto& [key, entry] : form.terms) {
    const IndexTerm& mod = *entry.term;
    if (mod.kind != IndexTerm::Kind::kMod) continue;
    IndexForm partner = floor_div(mod.operand, mod.divisor);
    const IndexTerm* div = lone_term(partner);
    if (!div) continue;
    auto it = form.terms.find(div->key);
    int64_t wanted = 0;
    if (it == form.terms.end() || __builtin_mul_overflow(entry.coefficient, mod.divisor, &wanted) ||
        it->second.coefficient != wanted)
      continue;
    // c * q * (x / q) + c * (x % q) = c * x
    IndexForm rest = form;
    rest.terms.erase(key);
    rest.terms.erase(div->key);
    return add(rest, scale(mod.operand, entry.coefficient));
  }
  return form;
}

std::optional<IntRange> IndexNormalizer::term_range(const IndexTerm& term) const {
  switch (term.kind) {
    case IndexTerm::Kind::kVar: {
      auto it = ranges_.find(term.name);
      if (it == ranges_.end()) return std::nullopt;
      return it->second;
    }
    case IndexTerm::Kind::kDiv: {
      std::optional<IntRange> r = range(term.operand);
      if (!r) return std::nullopt;
      return IntRange{floor_div_int(r->lo, term.divisor), floor_div_int(r->hi, term.divisor)};
    }
    case IndexTerm::Kind::kMod: {
      std::optional<IntRange> r = range(term.operand);
      if (r) {
        int64_t period = floor_div_int(r->lo, term.divisor);
        if (period == floor_div_int(r->hi, term.divisor))
          return IntRange{r->lo - period * term.divisor, r->hi - period * term.divisor};
      }
      return IntRange{0, term.divisor - 1};
    }
    case IndexTerm::Kind::kOpaque: return const_bound(term.opaque, ranges_);
  }
  return std::nullopt;
}

std::optional<IntRange> IndexNormalizer::range(const IndexForm& form) const {
  __int128 lo = form.constant, hi = form.constant;
  for (const auto& [key, entry] : form.terms) {
    std::optional<IntRange> r = term_range(*entry.term);
    if (!r) return std::nullopt;
    __int128 a = __int128(entry.coefficient) * r->lo, b = __int128(entry.coefficient) * r->hi;
    lo += a < b ? a : b;
    hi += a < b ? b : a;
  }
  if (lo < INT64_MIN || hi > INT64_MAX) return std::nullopt;
  return IntRange{int64_t(lo), int64_t(hi)};
}

IndexForm IndexNormalizer::normalize(const Expr& e) const {
  if (!is_int(e.dtype())) return opaque_form(e);
  if (const int64_t* v = as_const_int(e)) return constant_form(*v);
  if (auto* v = e.as<VarNode>()) return var_form(v->name);
  if (auto* c = e.as<CastNode>()) return is_int(c->value.dtype()) ? normalize(c->value) : opaque_form(e);
  auto* b = e.as<BinaryNode>();
  if (!b) return opaque_form(e);
  IndexForm x = normalize(b->a), y = normalize(b->b);
  switch (b->op) {
    case BinaryOp::kAdd: return add(x, y);
    case BinaryOp::kSub: return add(x, scale(y, -1));
    case BinaryOp::kMul:
      if (x.is_constant()) return scale(y, x.constant);
      if (y.is_constant()) return scale(x, y.constant);
      return opaque_form(e);
    case BinaryOp::kDiv:
      if (y.is_constant() && y.constant > 0) return floor_div(x, y.constant);
      return opaque_form(e);
    case BinaryOp::kMod:
      if (y.is_constant() && y.constant > 0) return floor_mod(x, y.constant);
      return opaque_form(e);
    case BinaryOp::kMin:
    case BinaryOp::kMax: {
      // A clamp that never takes effect is no clamp.
      std::optional<IntRange> rx = range(x), ry = range(y);
      if (rx && ry) {
        bool x_below = rx->hi <= ry->lo, y_below = ry->hi <= rx->lo;
        if (b->op == BinaryOp::kMin && (x_below || y_below)) return x_below ? x : y;
        if (b->op == BinaryOp::kMax && (x_below || y_below)) return x_below ? y : x;
      }
      return opaque_form(e);
    }
  }
  return opaque_form(e);
}

}  // namespace ingot

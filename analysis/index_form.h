// Integer index expressions in a normal form that sees through the floor div / mod of reshapes: a sum of
// coefficient x term plus a constant, where a term is a variable, a div or mod of a normal form by a positive
// constant, or an opaque expression. Access analysis uses it to decide whether a read's flattened offset is an
// affine function of the loop variables (a reshape, transpose, slice) or not (a roll, a gather).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "ir/bound.h"
#include "ir/expr.h"

namespace ingot {

struct IndexTerm;

struct IndexForm {
  struct Entry {
    int64_t coefficient = 0;  // never 0
    std::shared_ptr<const IndexTerm> term;
  };
  std::map<std::string, Entry> terms;  // by term key, so equal forms have equal maps
  int64_t constant = 0;

  bool is_constant() const { return terms.empty(); }
  // Only variable terms: the form is affine in the variables.
  bool is_affine() const;
  // The variable name when the form is exactly one variable (coefficient 1, constant 0), else "".
  std::string single_variable() const;
  // Canonical text, e.g. "4*i + 1*(1*f)/8 + 3": equal keys <=> equal forms.
  std::string key() const;
};

struct IndexTerm {
  enum class Kind : uint8_t { kVar, kDiv, kMod, kOpaque };
  Kind kind = Kind::kVar;
  std::string name;     // kVar: the variable
  IndexForm operand;    // kDiv, kMod: what is divided
  int64_t divisor = 1;  // kDiv, kMod: > 0
  Expr opaque;          // kOpaque: the expression as written (a read, a select, a product of variables, ...)
  std::string key;      // canonical text of the term
};

// Builds normal forms given the ranges of the variables (inclusive). Ranges let it drop divisions and moduli
// that never wrap: (i * 8 + j) / 8 -> i and (i * 8 + j) % 8 -> j when j is in [0, 7]. It also cancels the pairs
// a reshape leaves, c * q * (x / q) + c * (x % q) -> c * x, also when x / q was written (x / p) / (q / p).
class IndexNormalizer {
 public:
  explicit IndexNormalizer(VarRanges ranges) : ranges_(std::move(ranges)) {}

  // The normal form of an integer expression; anything it cannot express becomes an opaque term.
  IndexForm normalize(const Expr& e) const;
  IndexForm add(const IndexForm& a, const IndexForm& b) const;
  IndexForm scale(const IndexForm& a, int64_t factor) const;
  IndexForm floor_div(const IndexForm& a, int64_t divisor) const;
  IndexForm floor_mod(const IndexForm& a, int64_t divisor) const;
  // Inclusive bounds of the form's values, or std::nullopt when a term is unbounded or a bound overflows.
  std::optional<IntRange> range(const IndexForm& form) const;

 private:
  std::optional<IntRange> term_range(const IndexTerm& term) const;
  IndexForm cancel_reshape_pairs(IndexForm form) const;
  VarRanges ranges_;
};

}  // namespace ingot

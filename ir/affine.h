// Integer expressions as affine forms, sum(coefficient * variable) + constant. Lowering uses them to bound
// the region a loop nest touches; the simplifier uses them to put index arithmetic in canonical order.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "ir/expr.h"

namespace ingot {

struct AffineForm {
  std::map<std::string, int64_t> coeffs;  // variable name -> coefficient; no zero coefficients
  int64_t constant = 0;
  bool operator==(const AffineForm& o) const { return coeffs == o.coeffs && constant == o.constant; }
};

// The affine form of an integer expression built from variables, integer constants, +, -, and * where one
// side is constant; std::nullopt for anything else (div, mod, min, loads, ...).
std::optional<AffineForm> as_affine(const Expr& e);

// Canonical expression of a form: terms in variable-name order, constant last, e.g. ((i * 4) + j) + 3;
// coefficients of 1 and a zero constant are left out; variables are i64.
Expr to_expr(const AffineForm& form);

}  // namespace ingot

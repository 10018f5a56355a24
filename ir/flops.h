// Floating-point operation counts of tensor expressions: the one definition that analysis (arithmetic
// intensity) and workload reports (workloads/registry.h count_flops) share. Pure functions of the IR.
#pragma once

#include <cstdint>

#include "ir/expr.h"
#include "ir/program.h"

namespace ingot {

// Operations one evaluation of e performs. Counted, one each: float-typed arithmetic (+ - * / min max,
// negation), comparisons of floats and math calls (exp, tanh, sigmoid, erf, ...). Not counted: index
// arithmetic, reads, selects, casts, logical operators and constants. A reduction node counts as its source.
int64_t flops_per_evaluation(const Expr& e);

// Operations to compute one element of a compute tensor: its body's, except that a reduction counts its
// source's operations plus one to combine, per reduction step (so a multiply-add is 2). 0 for a placeholder.
int64_t flops_per_element(const Tensor& t);

// flops_per_element(t) times t's element count.
int64_t tensor_flops(const Tensor& t);

// Sum of tensor_flops over every compute of the program.
int64_t program_flops(const Program& program);

}  // namespace ingot

// Private to the reference interpreter: the lane-wise kernels a LaneProgram (interp/interpreter_plan.h) is made of.
// Each computes its output register for every lane of the batch (one value when the output is uniform);
// the factories pick the variant for the operand types and for which operands vary across lanes.
#pragma once

#include "interp/interpreter_plan.h"
#include "ir/expr.h"

namespace ingot::interp {

Kernel var_kernel(bool vector);                                                     // imm: slot
Kernel binary_kernel(BinaryOp op, ValueClass cls, bool a_varying, bool b_varying);  // a op b
Kernel int_division_kernel(BinaryOp op);              // floor div/mod of a by b; b == 0 throws in used lanes
Kernel compare_kernel(CompareOp op, ValueClass cls);  // a op b -> bool
Kernel logical_kernel(LogicalOp op);                  // a op b
Kernel not_kernel();                                  // !a
Kernel mask_kernel();                                 // (a < 0 or a) and (b != imm): a select's guard
Kernel select_kernel(ValueClass cls);                 // a ? b : c
Kernel cast_kernel(DType from, DType to);             // a converted to the instruction's dtype
Kernel math_kernel(MathFunc func, ValueClass cls);    // func(a) for the one-argument functions
Kernel pow_kernel(bool a_varying, bool b_varying);    // pow(a, b)
Kernel normalize_kernel(DType dtype);                 // in place: rounds f16/bf16, wraps i32
Kernel read_kernel(const ReadSite& site);             // the tensor element at the site's indices

}  // namespace ingot::interp

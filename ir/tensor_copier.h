// Rebuilding tensors over other tensors: an expression mutator whose reads of a tensor go to that tensor's copy (at
// the mutated indices), each tensor copied once. A subclass says what the copy of a tensor is: ir/subprogram.h cuts
// parts of programs with it, workloads/bf16_products.h rewrites dense layers. Pure: runs on any program.
#pragma once

#include <string>
#include <unordered_map>

#include "ir/functor.h"
#include "ir/tensor.h"

namespace ingot {

class TensorCopier : public ExprMutator {
 public:
  Expr mutate(const Expr& e) override;  // a read of t becomes a read of copy_of(t)
  Tensor copy_of(const Tensor& t);      // make_copy(t), once per tensor

 protected:
  virtual Tensor make_copy(const Tensor& t) = 0;
  // A compute with t's shape, dtype and axes, named `name`, with this body.
  static Tensor with_body(const Tensor& t, const std::string& name, Expr body);
  // Copies known before any read (a subclass may set some up front).
  std::unordered_map<const TensorNode*, Tensor> copies_;
};

}  // namespace ingot

// Rebuilding a program after some of its tensors change: the machinery the transform passes share. A rewrite
// visits computes in topological order, redirects every read to the rewritten producer (or to what a hook
// returns for it) and rebuilds only the tensors whose bodies or inputs changed.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/program.h"

namespace ingot {

class ProgramRewriter {
 public:
  // Called for each read with the original tensor read and the already rewritten indices; returns what the read
  // becomes, or a null Expr to read the tensor's rewritten version at those indices.
  using ReadHook = std::function<Expr(const Tensor& original, const std::vector<Expr>& indices)>;

  explicit ProgramRewriter(ReadHook hook = nullptr) : hook_(std::move(hook)) {}

  // t's body with every read rewritten. Call it after the results of every tensor t reads are set: a tensor
  // without a result is taken as unchanged.
  Expr rewrite_body(const Tensor& t);
  // What readers of original now read (original itself until set).
  void set_result(const Tensor& original, Tensor result);
  Tensor result(const Tensor& original) const;

  // The program of the rewritten outputs of original, under its name.
  Program program_of(const Program& original) const;

 private:
  ReadHook hook_;
  std::unordered_map<const TensorNode*, Tensor> results_;
};

// A compute with t's name, shape and axis names and the given body (t itself when body is t's body).
Tensor with_body(const Tensor& t, const Expr& body);

// The axis names of a compute, spatial then reduce.
std::vector<std::string> axis_names(const Tensor& t);

// name, or name followed by the first of 1, 2, ... that makes it differ from every name in taken.
std::string unique_name(const std::string& name, const std::vector<std::string>& taken);

// e with every read's indices simplified, knowing the ranges of compute's axes: index expressions that folding
// composed (reshape of a transpose of a slice) become readable again. Float arithmetic is left untouched.
Expr simplify_read_indices(const Expr& e, const Tensor& compute);

}  // namespace ingot

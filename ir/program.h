// A program: the DAG of tensors that computes a set of outputs. It fixes a deterministic topological order
// (inputs before their readers), and gives the structural hash that identifies a workload.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace ingot {

class Program {
 public:
  // Throws std::invalid_argument if two different tensors share a name.
  explicit Program(std::vector<Tensor> outputs, std::string name = "program");

  const std::string& name() const { return name_; }
  const std::vector<Tensor>& outputs() const { return outputs_; }
  // Every tensor, each after all tensors it reads; placeholders in first-use order.
  const std::vector<Tensor>& tensors() const { return order_; }
  std::vector<Tensor> placeholders() const;
  std::vector<Tensor> computes() const;
  // The tensor with this name, or a null Tensor.
  Tensor find(const std::string& name) const;
  bool is_output(const Tensor& t) const;
  // Compute tensors that read t, in topological order.
  std::vector<Tensor> readers(const Tensor& t) const;

  // Canonical text: every tensor in topological order with shape, dtype and body. Equal text <=> equal
  // programs, so hash and equality are derived from it.
  std::string to_string() const;
  uint64_t structural_hash() const;
  bool structural_equal(const Program& other) const { return to_string() == other.to_string(); }

 private:
  std::string name_;
  std::vector<Tensor> outputs_;
  std::vector<Tensor> order_;
  std::map<const TensorNode*, std::vector<Tensor>> readers_of_;  // built once: whole-model programs are large
};

// Text of one tensor's definition, as it appears in Program::to_string().
std::string tensor_definition(const Tensor& t);

// `base`, or `base_1`, `base_2`, ...: the first that names no tensor of the program (for tensors a rewrite adds).
std::string unused_name(const Program& program, const std::string& base);

}  // namespace ingot

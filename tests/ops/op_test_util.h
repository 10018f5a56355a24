// Helpers for the operator tests: building host tensors from literals, running TEs through the reference
// interpreter, and indexing row-major host data in plain-loop references. Test-only.
#pragma once

#include <cstdint>
#include <vector>

#include "interp/interpreter.h"
#include "ir/host_tensor.h"
#include "ir/program.h"

namespace ingot::op_test {

inline HostTensor tensor_of(const std::vector<int64_t>& shape, const std::vector<double>& values,
                            DType dtype = DType::kFloat32) {
  HostTensor t(dtype, shape);
  for (size_t i = 0; i < values.size(); ++i) t.set(int64_t(i), values[i]);
  return t;
}

inline std::vector<double> values_of(const HostTensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.get(i));
  return v;
}

// Interprets the program made of outputs and returns the tensor named `name`.
inline HostTensor run(const std::vector<Tensor>& outputs, const TensorMap& inputs, const std::string& name) {
  TensorMap result = interpret(Program(outputs), inputs);
  return result.at(name);
}
inline HostTensor run(const Tensor& output, const TensorMap& inputs) { return run({output}, inputs, output->name); }

// Row-major flat offset of an index into a shape.
inline int64_t offset(const std::vector<int64_t>& shape, const std::vector<int64_t>& index) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

// Calls f(index) for every index of shape in row-major order.
template <class F>
void for_each_index(const std::vector<int64_t>& shape, F f) {
  std::vector<int64_t> index(shape.size(), 0);
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  for (int64_t n = 0; n < total; ++n) {
    f(index);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

// Number of compute tensors in the program of these outputs.
inline size_t compute_count(const std::vector<Tensor>& outputs) { return Program(outputs).computes().size(); }

}  // namespace ingot::op_test

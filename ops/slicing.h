// Slicing and joining operators: slice (ONNX Slice with negative indices and steps), split, concat and pad
// (constant, reflect, edge). Each output is one TE whose body reads its inputs at index expressions;
// concat and constant pad choose with select, so out-of-range branches are never evaluated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace ingot {

// ONNX Slice: for each listed axis (default: 0, 1, ...), elements starts[a], starts[a] + steps[a], ... up to
// but excluding ends[a]. Negative starts/ends count from the end; out-of-range values clamp (ends may be
// INT64_MAX / INT64_MIN as exporters write "to the end"); a negative step walks backwards. steps default to 1;
// a step of 0 or an empty result throws.
Tensor slice(const std::string& name, const Tensor& x, const std::vector<int64_t>& starts,
             const std::vector<int64_t>& ends, const std::vector<int64_t>& axes = {},
             const std::vector<int64_t>& steps = {});

// Splits x along axis into names.size() tensors: of the given sizes (which must sum to the dimension), or,
// with sizes empty, of equal size (the last one smaller when the dimension does not divide evenly, as ONNX 18).
std::vector<Tensor> split(const std::vector<std::string>& names, const Tensor& x, int64_t axis,
                          const std::vector<int64_t>& sizes = {});

// Joins the inputs along axis; all other dimensions and the dtypes must agree. One TE (nested selects).
Tensor concat(const std::string& name, const std::vector<Tensor>& inputs, int64_t axis);

enum class PadMode { kConstant, kReflect, kEdge };
// ONNX Pad: pads = {begin_0, ..., begin_(r-1), end_0, ..., end_(r-1)}; negative values crop. kConstant fills
// with value; kReflect mirrors without repeating the edge (needs pad < dim); kEdge repeats the edge element.
Tensor pad(const std::string& name, const Tensor& x, const std::vector<int64_t>& pads,
           PadMode mode = PadMode::kConstant, double value = 0.0);

}  // namespace ingot

// Numerically stable softmax and log_softmax along one axis, or jointly over several axes (ONNX Softmax before
// opset 13 normalizes over all axes from `axis` on). Built from max-reduction, exp, sum-reduction and divide TEs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace ingot {

// softmax over `axis` (opset >= 13 / PyTorch semantics). Four TEs: `name_max` (max over the axis), `name_exp`
// (exp(x - max)), `name_sum` (sum of exp over the axis) and `name` (exp / sum). The statistics keep the reduced
// axis as size 1 in their shape.
Tensor softmax(const std::string& name, const Tensor& x, int64_t axis = -1);
// softmax jointly over the given axes (each in [-rank, rank), no repeats); same TEs as softmax.
// ONNX opset < 13: softmax_over_axes(name, x, {axis, axis + 1, ..., rank - 1}).
Tensor softmax_over_axes(const std::string& name, const Tensor& x, const std::vector<int64_t>& axes);

// log_softmax over `axis`: three TEs, `name_max`, `name_sum` (sum of exp(x - max)) and `name`
// (x - max - log(sum)).
Tensor log_softmax(const std::string& name, const Tensor& x, int64_t axis = -1);

}  // namespace ingot

// Reductions over a set of axes (ONNX ReduceSum / ReduceMean / ReduceMax / ReduceMin with keepdims). Each is a
// single reduction TE; the mean folds 1/count into the summed source.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace ingot {

// axes in [-rank, rank), no repeats; empty = every axis. keepdims keeps reduced axes as size 1 (ONNX default);
// otherwise they are dropped (reducing every axis without keepdims gives a rank-0 tensor, shape []).
Tensor reduce_sum(const std::string& name, const Tensor& x, const std::vector<int64_t>& axes = {},
                  bool keepdims = true);
Tensor reduce_mean(const std::string& name, const Tensor& x, const std::vector<int64_t>& axes = {},
                   bool keepdims = true);
Tensor reduce_max(const std::string& name, const Tensor& x, const std::vector<int64_t>& axes = {},
                  bool keepdims = true);
Tensor reduce_min(const std::string& name, const Tensor& x, const std::vector<int64_t>& axes = {},
                  bool keepdims = true);

}  // namespace ingot

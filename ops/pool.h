// 2-D pooling over NCHW tensors: max_pool2d, avg_pool2d (ONNX MaxPool / AveragePool semantics incl.
// count_include_pad and ceil_mode), global average and max pooling. Padding is a guarded read (as in conv2d).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "ir/tensor.h"

namespace ingot {

struct Pool2dAttrs {
  std::array<int64_t, 2> kernel{1, 1};         // {h, w}
  std::array<int64_t, 2> stride{1, 1};         // {h, w}
  std::array<int64_t, 4> padding{0, 0, 0, 0};  // {top, left, bottom, right}
  std::array<int64_t, 2> dilation{1, 1};       // {h, w}
  bool ceil_mode = false;  // output size rounds up; windows starting beyond the bottom/right padding are dropped
  bool count_include_pad = false;  // avg only: divide by the window size clipped to the padded input
};

// x: [N, C, H, W] -> [N, C, OH, OW]. Padded positions count as -inf. One TE (max reduction over ry, rx).
Tensor max_pool2d(const std::string& name, const Tensor& x, const Pool2dAttrs& attrs);

// Average over the window. The divisor is the window size clipped to the padded input if count_include_pad,
// otherwise the number of real input elements in the window. When every window has the full kernel count (no
// padding, or count_include_pad with every window inside the padded input) it is one TE, sum of x / count;
// otherwise `name_sum` (sum reduction, padding reads 0) then `name` (divide by the per-position count).
Tensor avg_pool2d(const std::string& name, const Tensor& x, const Pool2dAttrs& attrs);

// x: [N, C, H, W] -> [N, C, 1, 1]: one TE, sum of x / (H * W).
Tensor global_avg_pool2d(const std::string& name, const Tensor& x);
// x: [N, C, H, W] -> [N, C, 1, 1]: one TE, max over H and W.
Tensor global_max_pool2d(const std::string& name, const Tensor& x);

}  // namespace ingot

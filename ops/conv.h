// 2-D convolution, NCHW, with stride, asymmetric padding, dilation and groups (grouped ResNeXt convs and
// depthwise convs are groups > 1). Use it for any Conv node of a model; bias is a separate epilogue TE.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "ir/tensor.h"

namespace ingot {

struct Conv2dAttrs {
  std::array<int64_t, 2> stride{1, 1};         // {h, w}
  std::array<int64_t, 4> padding{0, 0, 0, 0};  // {top, left, bottom, right}, zeros
  std::array<int64_t, 2> dilation{1, 1};       // {h, w}
  int64_t groups = 1;
};

// x: [N, C, H, W]; weight: [F, C / groups, KH, KW]; bias: [F] or null. Output [N, F, OH, OW] with
// OH = (H + top + bottom - dilation_h * (KH - 1) - 1) / stride_h + 1 (likewise OW).
// Padding is a guarded read inside the reduction (select(in bounds, x[...], 0)) rather than a separate pad TE:
// the op stays one reduction TE with no padded copy of the input to materialize or fold, and every backend and
// the interpreter evaluate only the chosen branch of a select.
// TEs: without bias `name`; with bias `name_conv` (the reduction) then `name` (+ bias[f]). Reduce axes: rc,
// ry, rx. Throws (naming weight and input shapes) on channel/group mismatch, bad attributes, or an empty output.
Tensor conv2d(const std::string& name, const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
              const Conv2dAttrs& attrs = {});

// Output spatial size of a convolution or pooling window along one dimension (may be <= 0 when the window does
// not fit; callers check). ceil_mode rounds the division up (ONNX/PyTorch pooling).
int64_t window_output_size(int64_t input, int64_t pad_begin, int64_t pad_end, int64_t kernel, int64_t stride,
                           int64_t dilation, bool ceil_mode = false);

}  // namespace ingot

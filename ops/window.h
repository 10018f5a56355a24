// Swin Transformer's data movement: torch.roll (cyclic shift, for shifted windows) and window partition /
// reverse between [B, H, W, C] feature maps and [B * nW, ws, ws, C] windows. Each is one index-expression TE.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace ingot {

// torch.roll(x, shifts, dims): out[..., i, ...] = x[..., (i - shift) mod n, ...] along each listed axis
// (shifts may be negative or exceed the dimension). shifts and axes have equal length.
Tensor roll(const std::string& name, const Tensor& x, const std::vector<int64_t>& shifts,
            const std::vector<int64_t>& axes);

// x: [B, H, W, C] with H and W multiples of window -> [B * (H / window) * (W / window), window, window, C]; window
// b * nH * nW + wh * nW + ww holds x[b, wh * window + i, ww * window + j, :] (Swin's window_partition).
Tensor window_partition(const std::string& name, const Tensor& x, int64_t window);

// Inverse of window_partition: windows [B * nW, window, window, C] -> [B, height, width, C].
Tensor window_reverse(const std::string& name, const Tensor& windows, int64_t window, int64_t height, int64_t width);

}  // namespace ingot

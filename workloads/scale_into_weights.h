// Folds a per-channel scale into the weight of the sums that read it: a map B = x * g (squeeze-excitation's x * gate,
// g indexed by channel only), read only by sums of B[.., c, ..] * W[.., c, ..] with W a weight, becomes a scaled weight
// W'[..] = W[..] * g[c], and the sums read x and W' instead. The scaled map is then never written and read back; the
// sums' result is the same up to rounding (the products associate differently). Pure: runs on any program.
#pragma once

#include "ir/program.h"

namespace ingot {

// The program with every such scale folded where the weight has at most a quarter of the map's elements (computing W'
// writes and the sum reads W' where B was written and read: a win only when W is the smaller; EfficientNet's late
// stages, 7 x 7 maps of 1152 channels projected to 192, are not folded). A program without one is returned as it is.
Program fold_scales_into_weights(const Program& program);

}  // namespace ingot

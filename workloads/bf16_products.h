// A program's dense layers in bf16 (precision: bf16): every weight W of two dimensions that only sums of products
// x * W read, at a reduction variable k of even extent in one dimension, is held in bf16 (same shape), and those sums
// multiply bf16 values and accumulate in f32:   sum_k f32(bf16(x)) * f32(W[..]).
// A packed layout of such a weight keeps the pairs of k innermost (ir/packed_layout.h), as AVX-512 BF16's dot product
// of pairs (vdpbf16ps) reads them. So is the weight [O, I, 1, 1] of a 1 x 1 convolution over a map, whose input is then
// read through a tensor of bf16 pairs of input channels (`<conv>_pairs`, [.., I / 2, .., 2]) made from it. A sum of 16
// rows or more over a k that is a multiple of 32 (as an AMX tile takes them) whose x is a read of a tensor reads it from
// that tensor rounded once (`<x>_bf16`). Everything else (attention's products of activations, other convolutions,
// norms) stays f32. Pure: runs on any program; the interpreter then computes the bf16 program's reference.
#pragma once

#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/program.h"

namespace ingot {

// A weight the rewrite holds in bf16: its name (kept), its f32 shape, the dimension k indexes, and the zeros appended
// along it in the bf16 weight (a 1 x 1 convolution's input channels padded to the AMX tile's k).
struct Bf16Weight {
  std::string name;
  std::vector<int64_t> shape;
  int64_t dim = 0;
  int64_t padding = 0;
  std::vector<int64_t> bf16_shape() const;
  bool operator==(const Bf16Weight&) const = default;
};

struct Bf16Program {
  Program program;
  std::vector<Bf16Weight> weights;  // in the order of `weights` given to bf16_products
};

// The rewrite of `program`, whose placeholders named in `weights` hold weights. A weight read any other way keeps
// f32 (and its products too). The program's name gets "@bf16", so that its results are labelled. A 1 x 1
// convolution's input channels are padded with zero pairs (and its weight with zeros) to a multiple of
// `conv_channel_multiple`: 32 where AMX's tiles, which take 32 values of k per step, are to run them (the target's
// bf16_conv_channel_multiple, analysis/target.h, as make_configured_workload is given it); 2 pads nothing.
Bf16Program bf16_products(const Program& program, const std::vector<std::string>& weights,
                          int64_t conv_channel_multiple = 2);

// The bf16 program's inputs from the f32 program's: each rewritten weight rounded to bf16 (to nearest even) and padded
// with zeros, every other input as it is. Throws std::invalid_argument for a weight whose data is missing or
// has another shape or dtype than the f32 program's.
TensorMap bf16_inputs(const Bf16Program& bf16, const TensorMap& f32_inputs);

}  // namespace ingot

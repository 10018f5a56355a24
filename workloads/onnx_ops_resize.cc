// ONNX Resize (opsets 11 to 17): modes nearest, linear and cubic over any axes, every coordinate transformation
// but tf_crop_and_resize, scales or sizes as constants. Each resized axis gets its sampling taps (input index and
// weight per output position) computed here in double precision as ONNX's reference does; the output is one TE
// summing weight products times input reads over the taps of every resized axis.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ops/op_conventions.h"
#include "workloads/onnx_ops.h"

namespace ingot {

namespace {

// The taps of one axis: for output position o, taps[o] pairs of (input index in [0, in), weight).
struct AxisTaps {
  int64_t in = 0, out = 0;
  std::vector<std::vector<std::pair<int64_t, double>>> taps;
};

struct ResizeMode {
  std::string mode, transform, nearest_mode;
  double cubic_a = -0.75;
  bool exclude_outside = false;
};

// The n integers in [0, limit) nearest to x, ties to the smaller, in ascending order (the reference's
// get_neighbor_idxes): a window around x, or the ends when x lies outside.
std::vector<int64_t> neighbor_indices(double x, int64_t n, int64_t limit) {
  std::vector<int64_t> candidates;
  const int64_t f = int64_t(std::floor(x));
  for (int64_t k = f - n - 1; k <= f + n + 1; ++k) candidates.push_back(k);
  for (int64_t k = 0; k < n; ++k) candidates.insert(candidates.end(), {k, limit - 1 - k});
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  candidates.erase(std::remove_if(candidates.begin(), candidates.end(), [&](int64_t k) { return k < 0 || k >= limit; }),
                   candidates.end());
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](int64_t a, int64_t b) { return std::abs(x - double(a)) < std::abs(x - double(b)); });
  candidates.resize(size_t(std::min<int64_t>(n, int64_t(candidates.size()))));
  std::sort(candidates.begin(), candidates.end());
  return candidates;
}

// The interpolation coefficients for the fraction `ratio` in (0, 1] of the position past its left neighbour.
std::vector<double> coefficients(const ResizeMode& m, double ratio) {
  if (m.mode == "linear") return {1 - ratio, ratio};
  if (m.mode == "cubic") {
    const double a = m.cubic_a, r1 = ratio + 1, r2 = 1 - ratio, r3 = 2 - ratio;
    return {((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a, ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1,
            ((a + 2) * r2 - (a + 3)) * r2 * r2 + 1, ((a * r3 - 5 * a) * r3 + 8 * a) * r3 - 4 * a};
  }
  // nearest: the left or the right neighbour.
  if (ratio == 1) return {0, 1};
  bool right = m.nearest_mode == "round_prefer_floor"  ? ratio > 0.5
               : m.nearest_mode == "round_prefer_ceil" ? ratio >= 0.5
                                                       : m.nearest_mode == "ceil";
  return {right ? 0.0 : 1.0, right ? 1.0 : 0.0};
}

// ONNX's reference resize along one axis: the original coordinate of each output position, its neighbours in the
// input padded at the edges, their coefficients (renormalized without the outside ones for exclude_outside).
AxisTaps axis_taps(const ResizeMode& m, int64_t in, int64_t out, double scale) {
  AxisTaps a;
  a.in = in;
  a.out = out;
  const double out_width = scale * double(in);
  for (int64_t o = 0; o < out; ++o) {
    const double x = double(o);
    double x_ori;
    if (m.transform == "align_corners")
      x_ori = out_width == 1 ? 0.0 : x * double(in - 1) / (out_width - 1);
    else if (m.transform == "asymmetric")
      x_ori = x / scale;
    else if (m.transform == "pytorch_half_pixel")
      x_ori = out_width == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    else if (m.transform == "tf_half_pixel_for_nearest")
      x_ori = (x + 0.5) / scale;
    else  // half_pixel
      x_ori = (x + 0.5) / scale - 0.5;
    const double ratio = x_ori == std::floor(x_ori) ? 1.0 : x_ori - std::floor(x_ori);
    std::vector<double> c = coefficients(m, ratio);
    const int64_t n = int64_t(c.size()), pad = (n + 1) / 2;
    std::vector<int64_t> idx = neighbor_indices(x_ori + double(pad), n, in + 2 * pad);
    if (m.exclude_outside) {
      double total = 0;
      for (size_t k = 0; k < c.size(); ++k) {
        int64_t i = idx[k] - pad;
        if (i < 0 || i >= in) c[k] = 0;
        total += c[k];
      }
      for (double& v : c) v /= total;
    }
    std::vector<std::pair<int64_t, double>> taps;
    for (size_t k = 0; k < c.size(); ++k) taps.emplace_back(std::clamp<int64_t>(idx[k] - pad, 0, in - 1), c[k]);
    if (m.mode == "nearest") {
      // One tap: the neighbour with coefficient 1.
      auto chosen =
          std::max_element(taps.begin(), taps.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
      taps = {{chosen->first, 1.0}};
    }
    a.taps.push_back(std::move(taps));
  }
  // Tap columns whose coefficient is 0 everywhere (linear at integer positions) read nothing.
  for (size_t k = a.taps[0].size(); k-- > 0;) {
    bool unused = a.taps[0].size() > 1;
    for (const auto& t : a.taps) unused = unused && t[k].second == 0;
    if (unused)
      for (auto& t : a.taps) t.erase(t.begin() + long(k));
  }
  return a;
}

bool is_identity(const AxisTaps& a) {
  if (a.in != a.out || a.taps[0].size() != 1) return false;
  for (int64_t o = 0; o < a.out; ++o)
    if (a.taps[size_t(o)][0] != std::pair<int64_t, double>{o, 1.0}) return false;
  return true;
}

// The index sequence v[o] as clamp((p * o + q) floordiv c, 0, in - 1) with c <= 16, when there is such a form
// (nearest and linear taps at rational scales usually have one), so the read stays affine up to a division.
std::optional<std::function<Expr(const Expr&)>> index_formula(const std::vector<int64_t>& v, int64_t in) {
  const int64_t n = int64_t(v.size());
  if (n == 1) return [c = v[0]](const Expr&) { return Expr(c); };
  // The slope from the positions where the clamp is not active.
  int64_t first = -1, last = -1;
  for (int64_t o = 0; o < n; ++o)
    if (v[size_t(o)] > 0 && v[size_t(o)] < in - 1) {
      if (first < 0) first = o;
      last = o;
    }
  const double slope = last > first ? double(v[size_t(last)] - v[size_t(first)]) / double(last - first)
                                    : double(v[size_t(n - 1)] - v[0]) / double(n - 1);
  for (int64_t c = 1; c <= 16; ++c) {
    const int64_t centre = int64_t(std::llround(slope * double(c)));
    for (int64_t p = std::max<int64_t>(0, centre - 1); p <= centre + 1; ++p) {
      // The q that satisfy every position: c * v <= p * o + q < c * (v + 1), open below at 0 and above at in - 1.
      int64_t lo = INT64_MIN / 4, hi = INT64_MAX / 4;
      for (int64_t o = 0; o < n && lo <= hi; ++o) {
        const int64_t vo = v[size_t(o)];
        if (vo > 0) lo = std::max(lo, c * vo - p * o);
        if (vo < in - 1) hi = std::min(hi, c * (vo + 1) - 1 - p * o);
      }
      if (lo > hi) continue;
      const int64_t q = lo > INT64_MIN / 4 ? lo : std::min<int64_t>(hi, 0);
      // The clamps that can bind.
      const bool low_clamp = q<0, high_clamp = (p * (n - 1) + q) / c> in - 1;
      return [=](const Expr& o) {
        Expr e = o * p + q;
        if (c > 1) e = e / c;
        if (low_clamp) e = maximum(e, Expr(int64_t(0)));
        if (high_clamp) e = minimum(e, Expr(in - 1));
        return e;
      };
    }
  }
  return std::nullopt;
}

void convert_resize(OnnxNode& node) {
  ResizeMode m;
  m.mode = node.attr_string("mode", "nearest");
  m.transform = node.attr_string("coordinate_transformation_mode", "half_pixel");
  m.nearest_mode = node.attr_string("nearest_mode", "round_prefer_floor");
  m.cubic_a = node.attr_float("cubic_coeff_a", -0.75);
  m.exclude_outside = node.attr_int("exclude_outside", 0) != 0;
  node.attr_float("extrapolation_value", 0.0);  // used by tf_crop_and_resize only
  if (m.mode != "nearest" && m.mode != "linear" && m.mode != "cubic")
    node.fail("mode must be nearest, linear or cubic, not '" + m.mode + "'");
  if (m.transform == "tf_crop_and_resize")
    node.unsupported("coordinate_transformation_mode=tf_crop_and_resize is not supported");
  if (m.transform != "half_pixel" && m.transform != "asymmetric" && m.transform != "align_corners" &&
      m.transform != "pytorch_half_pixel" && m.transform != "tf_half_pixel_for_nearest")
    node.fail("unknown coordinate_transformation_mode '" + m.transform + "'");
  if (m.nearest_mode != "round_prefer_floor" && m.nearest_mode != "round_prefer_ceil" && m.nearest_mode != "floor" &&
      m.nearest_mode != "ceil")
    node.fail("unknown nearest_mode '" + m.nearest_mode + "'");

  const std::vector<int64_t> xs = node.input_shape(0);
  const size_t rank = xs.size();
  const DType dtype = node.input_dtype(0);
  if (m.mode != "nearest" && !is_float(dtype))
    node.unsupported("mode=" + m.mode + " on a " + dtype_name(dtype) + " input is not supported (floats only)");
  // scales (input 2) or sizes (input 3); an empty tensor counts as absent (opset 11 requires scales).
  std::vector<double> scales;
  std::vector<int64_t> out(xs);
  bool has_scales = node.has_input(2) && node.constant_input(2, "scales").num_elements() > 0;
  bool has_sizes = node.has_input(3) && node.constant_input(3, "sizes").num_elements() > 0;
  if (has_scales == has_sizes) node.fail("exactly one of scales and sizes must be given");
  if (has_scales) {
    const HostTensor& s = node.constant_input(2, "scales");
    if (size_t(s.num_elements()) != rank) node.fail("scales must have one entry per axis of X");
    for (size_t d = 0; d < rank; ++d) {
      float v = float(s.get(int64_t(d)));
      if (!(v > 0)) node.fail("scales must be positive");
      scales.push_back(double(v));
      // As ONNX shape inference computes it, in float.
      out[d] = int64_t(std::floor(float(xs[d]) * v));
    }
  } else {
    std::vector<int64_t> sizes = node.constant_ints(3, "sizes");
    if (sizes.size() != rank) node.fail("sizes must have one entry per axis of X");
    for (size_t d = 0; d < rank; ++d) {
      out[d] = sizes[d];
      scales.push_back(double(sizes[d]) / double(xs[d]));
    }
  }
  for (size_t d = 0; d < rank; ++d)
    if (out[d] <= 0) node.unsupported("the output would be empty along axis " + std::to_string(d));

  // A resized axis: per tap, the input index as a function of the output position, and the weights.
  struct Axis {
    size_t d;
    AxisTaps taps;
    std::vector<std::function<Expr(const Expr&)>> index;
    Tensor weights;  // [out, taps], or null when every weight is 1
  };
  std::vector<Axis> axes;
  int64_t terms = 1;
  for (size_t d = 0; d < rank; ++d) {
    AxisTaps a = axis_taps(m, xs[d], out[d], scales[d]);
    if (is_identity(a)) continue;
    Axis axis{d, a, {}, Tensor()};
    const size_t taps = a.taps[0].size();
    terms *= int64_t(taps);
    bool unit = true;
    for (const auto& t : a.taps)
      for (const auto& [i, w] : t) unit = unit && w == 1.0;
    if (!unit) {
      HostTensor w(dtype, {out[d], int64_t(taps)});
      for (size_t o = 0; o < a.taps.size(); ++o)
        for (size_t k = 0; k < taps; ++k) w.set(int64_t(o * taps + k), a.taps[o][k].second);
      axis.weights = node.constant_tensor("_weights" + std::to_string(d), std::move(w));
    }
    for (size_t k = 0; k < taps; ++k) {
      std::vector<int64_t> v;
      for (const auto& t : a.taps) v.push_back(t[k].first);
      if (auto f = index_formula(v, xs[d])) {
        axis.index.push_back(*f);
        continue;
      }
      // No closed form: a lookup table.
      HostTensor table(DType::kInt64, {out[d]});
      for (size_t o = 0; o < v.size(); ++o) table.i64()[o] = v[o];
      Tensor t = node.constant_tensor("_index" + std::to_string(d) + "_" + std::to_string(k), std::move(table));
      axis.index.push_back([t](const Expr& o) { return t(o); });
    }
    axes.push_back(std::move(axis));
  }
  if (terms > 256) node.unsupported("more than 256 taps per output element (resizing too many axes at once)");
  Tensor x = node.input(0);
  if (axes.empty()) return node.alias_output(0, 0);
  node.set_output(0, compute(node.output_name(0), out, [&](const std::vector<Expr>& i) {
                    Expr total;
                    // Every combination of one tap per resized axis: weight product times the input there.
                    std::vector<size_t> tap(axes.size(), 0);
                    for (int64_t term = 0; term < terms; ++term) {
                      std::vector<Expr> at(i.begin(), i.end());
                      Expr weight;
                      for (size_t a = 0; a < axes.size(); ++a) {
                        const Expr& o = i[axes[a].d];
                        at[axes[a].d] = axes[a].index[tap[a]](o);
                        if (axes[a].weights) {
                          Expr w = axes[a].weights(o, int64_t(tap[a]));
                          weight = weight ? weight * w : w;
                        }
                      }
                      Expr value = weight ? weight * read(x, at) : read(x, at);
                      total = total ? total + value : value;
                      for (size_t a = 0; a < axes.size() && ++tap[a] == axes[a].taps.taps[0].size(); ++a) tap[a] = 0;
                    }
                    return total;
                  }));
}

}  // namespace

void add_onnx_resize_converters(OnnxConverterMap& m) { m["Resize"] = convert_resize; }

}  // namespace ingot

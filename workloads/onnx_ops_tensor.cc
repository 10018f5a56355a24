// ONNX tensor and shape operators: Constant, ConstantOfShape, Shape, Size, Range, Reshape, Flatten, Transpose,
// Squeeze, Unsqueeze, Concat, Split, Slice, Pad, Gather, GatherElements, Expand, Tile, DepthToSpace,
// SpaceToDepth, ScatterND, Identity, Dropout. Operands that fix shapes (Reshape's shape, Slice's starts, ...) must be
// constants; the importer folds shape arithmetic so that exported models satisfy this.
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "ops/elementwise.h"
#include "ops/gather.h"
#include "ops/layout.h"
#include "ops/op_conventions.h"
#include "ops/slicing.h"
#include "workloads/onnx_ops.h"
#include "workloads/onnx_tensor.h"

namespace ingot {

namespace {

HostTensor int64_vector(const std::vector<int64_t>& values) {
  HostTensor t(DType::kInt64, {int64_t(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.i64()[i] = values[i];
  return t;
}

// Squeeze / Unsqueeze / Split / ReduceSum take their list from an attribute before opset 13, an input after.
std::vector<int64_t> ints_from_attr_or_input(OnnxNode& node, const std::string& name, size_t input_index,
                                             int input_since_opset, bool* given) {
  if (node.opset() >= input_since_opset) {
    *given = node.has_input(input_index);
    return *given ? node.constant_ints(input_index, name) : std::vector<int64_t>{};
  }
  *given = node.has_attr(name);
  return node.attr_ints(name);
}

void convert_constant(OnnxNode& node) {
  for (const char* unsupported : {"sparse_value", "value_string", "value_strings"})
    if (node.has_attr(unsupported)) node.unsupported(std::string(unsupported) + " is not supported");
  if (const onnx::TensorProto* t = node.attr_tensor("value")) return node.set_constant_output(0, tensor_from_onnx(*t));
  if (node.has_attr("value_float")) {
    HostTensor t(DType::kFloat32, {});
    t.f32()[0] = float(node.attr_float("value_float", 0));
    return node.set_constant_output(0, std::move(t));
  }
  if (node.has_attr("value_int")) {
    HostTensor t(DType::kInt64, {});
    t.i64()[0] = node.attr_int("value_int", 0);
    return node.set_constant_output(0, std::move(t));
  }
  if (node.has_attr("value_floats")) {
    std::vector<float> v = node.attr_floats("value_floats");
    HostTensor t(DType::kFloat32, {int64_t(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t.f32()[i] = v[i];
    return node.set_constant_output(0, std::move(t));
  }
  if (node.has_attr("value_ints")) return node.set_constant_output(0, int64_vector(node.attr_ints("value_ints")));
  node.fail("has no value attribute");
}

void convert_constant_of_shape(OnnxNode& node) {
  std::vector<int64_t> shape = node.constant_ints(0, "shape");
  HostTensor value(DType::kFloat32, {1});
  if (const onnx::TensorProto* t = node.attr_tensor("value")) value = tensor_from_onnx(*t);
  if (value.num_elements() != 1) node.fail("value must hold one element");
  int64_t n = shape_elements(shape);
  // Small or integer fills become constants (they feed shape arithmetic); large float fills stay computes.
  if (is_float(value.dtype()) && n > 4096)
    return node.set_output(0, fill(node.output_name(0), shape, value.get(0), value.dtype()));
  HostTensor out(value.dtype(), shape);
  for (int64_t i = 0; i < n; ++i) out.set(i, value.get(0));
  node.set_constant_output(0, std::move(out));
}

void convert_shape(OnnxNode& node) {
  const std::vector<int64_t>& shape = node.input_shape(0);
  const int64_t rank = int64_t(shape.size());
  auto clamp_index = [&](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t(0), rank); };
  int64_t start = clamp_index(node.attr_int("start", 0)), end = clamp_index(node.attr_int("end", rank));
  std::vector<int64_t> dims;
  for (int64_t d = start; d < end; ++d) dims.push_back(shape[size_t(d)]);
  node.set_constant_output(0, int64_vector(dims));
}

void convert_size(OnnxNode& node) {
  HostTensor t(DType::kInt64, {});
  t.i64()[0] = shape_elements(node.input_shape(0));
  node.set_constant_output(0, std::move(t));
}

void convert_range(OnnxNode& node) {
  const HostTensor& start = node.constant_input(0, "start");
  double s = start.get(0), limit = node.constant_scalar(1, "limit"), delta = node.constant_scalar(2, "delta");
  if (delta == 0) node.fail("delta is zero");
  int64_t n = std::max<int64_t>(0, int64_t(std::ceil((limit - s) / delta)));
  HostTensor out(start.dtype(), {n});
  for (int64_t i = 0; i < n; ++i) out.set(i, s + double(i) * delta);
  node.set_constant_output(0, std::move(out));
}

void convert_reshape(OnnxNode& node) {
  std::vector<int64_t> shape = node.constant_ints(1, "shape");
  if (node.attr_int("allowzero", 0) != 0)
    for (int64_t d : shape)
      if (d == 0) node.unsupported("allowzero=1 with a 0 in the shape makes a zero-size tensor");
  node.set_output(0, reshape(node.output_name(0), node.input(0), shape));
}

void convert_squeeze(OnnxNode& node) {
  bool given = false;
  std::vector<int64_t> axes = ints_from_attr_or_input(node, "axes", 1, 13, &given);
  node.set_output(0, squeeze(node.output_name(0), node.input(0), axes));
}

void convert_unsqueeze(OnnxNode& node) {
  bool given = false;
  std::vector<int64_t> axes = ints_from_attr_or_input(node, "axes", 1, 13, &given);
  if (!given) node.fail("axes are required");
  node.set_output(0, unsqueeze(node.output_name(0), node.input(0), axes));
}

// Concat of constant vectors (shape arithmetic) runs on the host, where empty parts (Shape of a scalar, an
// empty Slice of a shape) are allowed; otherwise one TE, and an empty constant part contributes nothing.
void convert_concat(OnnxNode& node) {
  if (!node.has_attr("axis")) node.fail("axis is required");
  const int64_t axis = node.attr_int("axis", 0);
  bool constant_vectors = node.input_shape(0).size() == 1;
  for (size_t i = 0; i < node.num_inputs() && constant_vectors; ++i)
    constant_vectors = node.input_shape(i).size() == 1 && node.input_is_constant(i);
  if (constant_vectors) {
    if (axis != 0 && axis != -1) node.fail("axis " + std::to_string(axis) + " is out of range for vectors");
    int64_t total = 0;
    for (size_t i = 0; i < node.num_inputs(); ++i) total += node.input_shape(i)[0];
    HostTensor out(node.input_dtype(0), {total});
    // Bytes, not doubles: shape vectors hold INT64_MAX ("to the end"), which a double would round.
    const int64_t element = dtype_bytes(out.dtype());
    int64_t at = 0;
    for (size_t i = 0; i < node.num_inputs(); ++i) {
      const HostTensor& part = node.constant_input(i, "input " + std::to_string(i));
      if (part.dtype() != out.dtype()) node.fail("inputs have different types");
      if (part.num_bytes())
        std::memcpy(static_cast<uint8_t*>(out.data()) + at * element, part.data(), part.num_bytes());
      at += part.num_elements();
    }
    return node.set_constant_output(0, std::move(out));
  }
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    const std::vector<int64_t>& shape = node.input_shape(i);
    int64_t a = normalize_axis("Concat", node.output_name(0), axis, int64_t(shape.size()));
    if (shape[size_t(a)] == 0 && node.input_is_constant(i)) continue;
    inputs.push_back(node.input(i));
  }
  node.set_output(0, concat(node.output_name(0), inputs, axis));
}

void convert_split(OnnxNode& node) {
  bool given = false;
  std::vector<int64_t> sizes = ints_from_attr_or_input(node, "split", 1, 13, &given);
  int64_t rank = int64_t(node.input_shape(0).size());
  int64_t axis = normalize_axis("Split", node.output_name(0), node.attr_int("axis", 0), rank);
  const int64_t dim = node.input_shape(0)[size_t(axis)];
  size_t n = node.num_outputs();
  if (!given && dim % int64_t(n) != 0)
    node.fail("dimension " + std::to_string(dim) + " does not split evenly into " + std::to_string(n) + " outputs");
  for (int64_t s : sizes)
    if (s == 0) node.unsupported("a split of size 0 makes a zero-size tensor");
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i)
    names.push_back(node.has_output(i) ? node.output_name(i) : node.temp_name("_part" + std::to_string(i)));
  std::vector<Tensor> parts = split(names, node.input(0), axis, sizes);
  for (size_t i = 0; i < parts.size(); ++i) node.set_output(i, parts[i]);
}

// Slice of a constant vector (exporters slice shapes: Shape(x)[2:]) on the host; the result may be empty, as
// the shape of a scalar is.
void slice_constant_vector(OnnxNode& node, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                           const std::vector<int64_t>& axes, const std::vector<int64_t>& steps) {
  if (starts.size() != 1 || ends.size() != 1 || axes.size() > 1 || steps.size() > 1)
    node.fail("starts, ends, axes and steps must have one entry for a vector");
  if (!axes.empty() && axes[0] != 0 && axes[0] != -1) node.fail("axis " + std::to_string(axes[0]) + " is out of range");
  const HostTensor& x = node.constant_input(0, "data");
  const int64_t dim = x.num_elements(), step = steps.empty() ? 1 : steps[0];
  if (step == 0) node.fail("step is zero");
  // ONNX's clamping: starts and ends to [0, dim] going forward, to [-1, dim - 1] going backward.
  auto resolve = [&](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0) v = v <= std::numeric_limits<int64_t>::min() + dim ? lo : v + dim;
    return std::clamp(v, lo, hi);
  };
  const int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? dim : dim - 1;
  const int64_t start = resolve(starts[0], lo, hi), end = resolve(ends[0], lo, hi);
  std::vector<int64_t> picked;
  for (int64_t k = start; step > 0 ? k < end : k > end; k += step) picked.push_back(k);
  HostTensor out(x.dtype(), {int64_t(picked.size())});
  const size_t element = size_t(dtype_bytes(x.dtype()));
  for (size_t k = 0; k < picked.size(); ++k)
    std::memcpy(static_cast<uint8_t*>(out.data()) + k * element,
                static_cast<const uint8_t*>(x.data()) + size_t(picked[k]) * element, element);
  node.set_constant_output(0, std::move(out));
}

void convert_slice(OnnxNode& node) {
  std::vector<int64_t> starts = node.constant_ints(1, "starts"), ends = node.constant_ints(2, "ends");
  std::vector<int64_t> axes, steps;
  if (node.has_input(3)) axes = node.constant_ints(3, "axes");
  if (node.has_input(4)) steps = node.constant_ints(4, "steps");
  const std::vector<int64_t>& shape = node.input_shape(0);
  const int64_t rank = int64_t(shape.size());
  if (rank == 1 && node.input_is_constant(0)) return slice_constant_vector(node, starts, ends, axes, steps);
  // An empty selection would be a zero-size tensor, which ingot cannot hold.
  for (size_t a = 0; a < starts.size() && a < ends.size(); ++a) {
    int64_t axis = axes.empty() ? int64_t(a) : axes[a];
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) node.fail("axis " + std::to_string(axis) + " is out of range");
    int64_t dim = shape[size_t(axis)], step = steps.empty() ? 1 : steps[a];
    if (step == 0) node.fail("step is zero");
    int64_t s = starts[a] < 0 ? starts[a] + dim : starts[a], e = ends[a] < 0 ? ends[a] + dim : ends[a];
    if (ends[a] == std::numeric_limits<int64_t>::min()) e = -1;
    int64_t count = step > 0
                        ? (std::clamp(e, int64_t(0), dim) - std::clamp(s, int64_t(0), dim) + step - 1) / step
                        : (std::clamp(s, int64_t(0), dim - 1) - std::clamp(e, int64_t(-1), dim - 1) - step - 1) / -step;
    if (count <= 0) node.unsupported("the slice along axis " + std::to_string(axis) + " is empty (a zero-size tensor)");
  }
  node.set_output(0, slice(node.output_name(0), node.input(0), starts, ends, axes, steps));
}

void convert_pad(OnnxNode& node) {
  std::string mode = node.attr_string("mode", "constant");
  PadMode pad_mode = PadMode::kConstant;
  if (mode == "reflect")
    pad_mode = PadMode::kReflect;
  else if (mode == "edge")
    pad_mode = PadMode::kEdge;
  else if (mode != "constant")
    node.unsupported("mode=" + mode + " is not supported (constant, reflect, edge)");
  std::vector<int64_t> pads = node.constant_ints(1, "pads");
  if (node.has_input(3)) node.unsupported("the axes input (opset 18) is not supported");
  double value = node.has_input(2) ? node.constant_scalar(2, "constant_value") : 0.0;
  node.set_output(0, pad(node.output_name(0), node.input(0), pads, pad_mode, value));
}

void convert_gather(OnnxNode& node) {
  int64_t axis = node.attr_int("axis", 0);
  if (node.input_is_constant(1) && shape_elements(node.input_shape(1)) <= 4096) {
    std::vector<int64_t> indices = node.constant_ints(1, "indices");
    node.set_output(0, gather(node.output_name(0), node.input(0), indices, node.input_shape(1), axis));
    return;
  }
  node.set_output(0, gather(node.output_name(0), node.input(0), node.input(1), axis));
}

// out[i...] = data[i... with i[axis] replaced by indices[i...]]; negative indices count from the end.
void convert_gather_elements(OnnxNode& node) {
  Tensor data = node.input(0), indices = node.input(1);
  const int64_t rank = int64_t(data->shape.size());
  if (int64_t(indices->shape.size()) != rank) node.fail("indices must have the rank of data");
  int64_t axis = normalize_axis("GatherElements", node.output_name(0), node.attr_int("axis", 0), rank);
  const int64_t dim = data->shape[size_t(axis)];
  node.set_output(0, compute(node.output_name(0), indices->shape, [&](const std::vector<Expr>& i) {
                    Expr index = cast(DType::kInt64, read(indices, i));
                    std::vector<Expr> at = i;
                    at[size_t(axis)] = select(lt(index, int64_t(0)), index + dim, index);
                    return read(data, at);
                  }));
}

// ScatterND (reduction none): data with the slices that indices[..., :k] address replaced by updates. Indices
// must be constant. With constant data and updates too (PyTorch's slice assignments into masks built from
// shapes, as Swin's attention mask) it folds on the host; otherwise one TE that picks, for each element, its
// update by a binary search over the sorted addressed positions, or keeps data.
void convert_scatter_nd(OnnxNode& node) {
  if (node.attr_string("reduction", "none") != "none")
    node.unsupported("reduction=" + node.attr_string("reduction", "none") + " is not supported");
  const std::vector<int64_t>& data_shape = node.input_shape(0);
  const std::vector<int64_t>& index_shape = node.input_shape(1);
  if (index_shape.empty()) node.fail("indices must have rank >= 1");
  const int64_t k = index_shape.back(), rank = int64_t(data_shape.size());
  if (k < 1 || k > rank) node.fail("the last dimension of indices must be in 1.." + std::to_string(rank));
  std::vector<int64_t> update_shape(index_shape.begin(), index_shape.end() - 1);
  update_shape.insert(update_shape.end(), data_shape.begin() + k, data_shape.end());
  if (node.input_shape(2) != update_shape)
    node.fail("updates " + shape_to_string(node.input_shape(2)) + " must be " + shape_to_string(update_shape));
  if (node.input_dtype(2) != node.input_dtype(0)) node.fail("updates and data have different types");
  std::vector<int64_t> indices = node.constant_ints(1, "indices");
  // Each update row's flat offset into data, where rows are the prefixes data[i0, ..., ik-1].
  const int64_t rows = shape_elements(std::vector<int64_t>(index_shape.begin(), index_shape.end() - 1));
  const int64_t slice_size = shape_elements(std::vector<int64_t>(data_shape.begin() + k, data_shape.end()));
  std::vector<int64_t> row_position(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    int64_t position = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t i = indices[size_t(r * k + d)], dim = data_shape[size_t(d)];
      if (i < -dim || i >= dim)
        node.fail("index " + std::to_string(i) + " is out of range for dimension " + std::to_string(dim));
      position = position * dim + (i < 0 ? i + dim : i);
    }
    row_position[size_t(r)] = position;
  }
  if (node.input_is_constant(0) && node.input_is_constant(2)) {
    HostTensor out = node.constant_input(0, "data");
    const HostTensor& updates = node.constant_input(2, "updates");
    const size_t bytes = size_t(slice_size) * size_t(dtype_bytes(out.dtype()));
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(static_cast<uint8_t*>(out.data()) + size_t(row_position[size_t(r)]) * bytes,
                  static_cast<const uint8_t*>(updates.data()) + size_t(r) * bytes, bytes);
    return node.set_constant_output(0, std::move(out));
  }
  // Later rows win on duplicates, as the host fold's order (ONNX leaves duplicates undefined).
  std::map<int64_t, int64_t> row_at;
  for (int64_t r = 0; r < rows; ++r) row_at[row_position[size_t(r)]] = r;
  std::vector<std::pair<int64_t, int64_t>> sorted(row_at.begin(), row_at.end());
  Tensor data = node.input(0);
  Tensor updates = reshape(node.temp_name("_rows"), node.input(2), [&] {
    std::vector<int64_t> s = {rows};
    s.insert(s.end(), data_shape.begin() + k, data_shape.end());
    return s;
  }());
  node.set_output(0, compute(node.output_name(0), data_shape, [&](const std::vector<Expr>& i) {
                    Expr position = i[0];
                    for (int64_t d = 1; d < k; ++d) position = position * data_shape[size_t(d)] + i[size_t(d)];
                    auto update_row = [&](int64_t r) {
                      std::vector<Expr> at = {Expr(r)};
                      at.insert(at.end(), i.begin() + k, i.end());
                      return read(updates, at);
                    };
                    std::function<Expr(size_t, size_t)> pick = [&](size_t lo, size_t hi) -> Expr {
                      if (hi - lo == 1)
                        return select(eq(position, Expr(sorted[lo].first)), update_row(sorted[lo].second),
                                      read(data, i));
                      size_t mid = lo + (hi - lo) / 2;
                      return select(lt(position, Expr(sorted[mid].first)), pick(lo, mid), pick(mid, hi));
                    };
                    return pick(0, sorted.size());
                  }));
}

void convert_expand(OnnxNode& node) {
  node.set_output(0, expand(node.output_name(0), node.input(0), node.constant_ints(1, "shape")));
}

void convert_tile(OnnxNode& node) {
  Tensor x = node.input(0);
  std::vector<int64_t> repeats = node.constant_ints(1, "repeats");
  if (repeats.size() != x->shape.size()) node.fail("repeats must have one entry per dimension");
  std::vector<int64_t> shape = x->shape;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (repeats[d] <= 0) node.unsupported("a repeat of " + std::to_string(repeats[d]) + " makes a zero-size tensor");
    shape[d] *= repeats[d];
  }
  node.set_output(0, compute(node.output_name(0), shape, [&](const std::vector<Expr>& i) {
                    std::vector<Expr> at;
                    for (size_t d = 0; d < i.size(); ++d)
                      at.push_back(x->shape[d] == 1 ? Expr(int64_t(0)) : i[d] % x->shape[d]);
                    return read(x, at);
                  }));
}

// DepthToSpace and SpaceToDepth as reshape -> transpose -> reshape (three reorganize TEs).
void convert_depth_space(OnnxNode& node, bool to_space) {
  const std::vector<int64_t>& s = node.input_shape(0);
  if (s.size() != 4) node.fail("input must be 4-D");
  int64_t b = node.attr_int("blocksize", 0);
  if (b <= 0) node.fail("blocksize must be positive");
  int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  std::vector<int64_t> first, perm, last;
  if (to_space) {
    if (c % (b * b) != 0) node.fail("channels are not divisible by blocksize^2");
    std::string mode = node.attr_string("mode", "DCR");
    if (mode == "DCR") {
      first = {n, b, b, c / (b * b), h, w};
      perm = {0, 3, 4, 1, 5, 2};
    } else if (mode == "CRD") {
      first = {n, c / (b * b), b, b, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      node.fail("mode must be DCR or CRD, not " + mode);
    }
    last = {n, c / (b * b), h * b, w * b};
  } else {
    if (h % b != 0 || w % b != 0) node.fail("height and width must be divisible by blocksize");
    first = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
    last = {n, c * b * b, h / b, w / b};
  }
  Tensor t = reshape(node.temp_name("_blocks"), node.input(0), first);
  t = transpose(node.temp_name("_moved"), t, perm);
  node.set_output(0, reshape(node.output_name(0), t, last));
}

// Trilu: keeps elements on and above (upper) or on and below (lower) the k-th diagonal of the last two axes.
void convert_trilu(OnnxNode& node) {
  Tensor x = node.input(0);
  const size_t rank = x->shape.size();
  if (rank < 2) node.fail("input must have rank >= 2");
  // k is a constant, or a scalar tensor read at evaluation (it moves no shapes).
  Expr k = int64_t(0);
  if (node.has_input(1) && node.input_is_constant(1)) {
    k = int64_t(node.constant_scalar(1, "k"));
  } else if (node.has_input(1)) {
    Tensor kt = node.input(1);
    if (kt->num_elements() != 1) node.fail("k must be a scalar");
    k = cast(DType::kInt64, read(kt, std::vector<Expr>(kt->shape.size(), Expr(int64_t(0)))));
  }
  bool upper = node.attr_int("upper", 1) != 0;
  node.set_output(0, compute(node.output_name(0), x->shape, [&](const std::vector<Expr>& i) {
                    Expr diagonal = i[rank - 1] - i[rank - 2];
                    Expr keep = upper ? ge(diagonal, k) : le(diagonal, k);
                    Expr zero = is_float(x->dtype) ? float_imm(0, x->dtype) : int_imm(0, x->dtype);
                    return select(keep, read(x, i), zero);
                  }));
}

// An identity in inference. In training mode too when nothing is dropped (a constant ratio of 0), as torchvision's
// Swin exports its attention dropout.
void convert_dropout(OnnxNode& node) {
  node.attr_int("seed", 0);
  node.attr_float("ratio", 0.5);  // an attribute before opset 12; irrelevant in inference
  if (node.has_input(2) && (!node.input_is_constant(2) || node.constant_scalar(2, "training_mode") != 0)) {
    // Opset 12 on: ratio is input 1, 0.5 when left out.
    bool drops_nothing = node.has_input(1) && node.input_is_constant(1) && node.constant_scalar(1, "ratio") == 0;
    if (!drops_nothing)
      node.unsupported("training_mode must be a constant false, or ratio a constant 0 (ingot imports inference "
                       "graphs; a training-mode Dropout that drops elements is random)");
  }
  if (node.has_input(1)) node.constant_input(1, "ratio");
  if (node.has_output(1)) node.set_output(1, fill(node.output_name(1), node.input_shape(0), 1, DType::kBool));
  node.alias_output(0, 0);
}

}  // namespace

void add_onnx_tensor_converters(OnnxConverterMap& m) {
  m["Constant"] = convert_constant;
  m["ConstantOfShape"] = convert_constant_of_shape;
  m["Shape"] = convert_shape;
  m["Size"] = convert_size;
  m["Range"] = convert_range;
  m["Reshape"] = convert_reshape;
  m["Flatten"] = [](OnnxNode& node) {
    node.set_output(0, flatten(node.output_name(0), node.input(0), node.attr_int("axis", 1)));
  };
  m["Transpose"] = [](OnnxNode& node) {
    node.set_output(0, transpose(node.output_name(0), node.input(0), node.attr_ints("perm")));
  };
  m["Squeeze"] = convert_squeeze;
  m["Unsqueeze"] = convert_unsqueeze;
  m["Concat"] = convert_concat;
  m["Split"] = convert_split;
  m["Slice"] = convert_slice;
  m["Pad"] = convert_pad;
  m["Gather"] = convert_gather;
  m["GatherElements"] = convert_gather_elements;
  m["Expand"] = convert_expand;
  m["ScatterND"] = convert_scatter_nd;
  m["Tile"] = convert_tile;
  m["DepthToSpace"] = [](OnnxNode& node) { convert_depth_space(node, true); };
  m["SpaceToDepth"] = [](OnnxNode& node) { convert_depth_space(node, false); };
  m["Identity"] = [](OnnxNode& node) { node.alias_output(0, 0); };
  m["Dropout"] = convert_dropout;
  m["Trilu"] = convert_trilu;
}

}  // namespace ingot

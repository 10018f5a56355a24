#include "ops/slicing.h"

#include <algorithm>

#include "ops/op_conventions.h"

namespace ingot {

namespace {

using Axes = std::vector<Expr>;

void require_input(const char* op, const std::string& name, const Tensor& x) {
  if (!x) throw_op_error(op, name, "input is a null tensor");
}

}  // namespace

Tensor slice(const std::string& name, const Tensor& x, const std::vector<int64_t>& starts,
             const std::vector<int64_t>& ends, const std::vector<int64_t>& axes, const std::vector<int64_t>& steps) {
  require_input("slice", name, x);
  const int64_t rank = int64_t(x->shape.size());
  if (starts.size() != ends.size() || (!axes.empty() && axes.size() != starts.size()) ||
      (!steps.empty() && steps.size() != starts.size()))
    throw_op_error("slice", name,
                   "starts " + shape_to_string(starts) + ", ends " + shape_to_string(ends) + ", axes " +
                       shape_to_string(axes) + " and steps " + shape_to_string(steps) + " must have equal lengths");
  std::vector<int64_t> begin(size_t(rank), 0), step(size_t(rank), 1), shape = x->shape;
  std::vector<bool> seen(size_t(rank), false);
  for (size_t n = 0; n < starts.size(); ++n) {
    const int64_t d = normalize_axis("slice", name, axes.empty() ? int64_t(n) : axes[n], rank);
    if (seen[size_t(d)]) throw_op_error("slice", name, "axis " + std::to_string(d) + " is listed twice");
    seen[size_t(d)] = true;
    const int64_t dim = x->shape[size_t(d)], s = steps.empty() ? 1 : steps[n];
    if (s == 0) throw_op_error("slice", name, "step of axis " + std::to_string(d) + " is 0");
    // ONNX: negative values count from the end, then clamp ([0, dim] forwards, [-1, dim - 1] backwards).
    int64_t start = starts[n], end = ends[n];
    if (start < 0) start = start < -dim ? -1 : start + dim;
    if (end < 0) end = end < -dim ? -1 : end + dim;
    if (s > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, -1, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    const int64_t length = s > 0 ? (end - start + s - 1) / s : (start - end + (-s) - 1) / (-s);
    if (length <= 0)
      throw_op_error("slice", name,
                     "axis " + std::to_string(d) + " of input " + shape_to_string(x->shape) + " sliced [" +
                         std::to_string(starts[n]) + ":" + std::to_string(ends[n]) + ":" + std::to_string(s) +
                         "] is empty");
    begin[size_t(d)] = start;
    step[size_t(d)] = s;
    shape[size_t(d)] = length;
  }
  return compute(name, shape, [&](const Axes& i) {
    std::vector<Expr> idx(static_cast<size_t>(rank));
    for (size_t d = 0; d < size_t(rank); ++d) {
      Expr v = step[d] == 1 ? i[d] : i[d] * step[d];
      idx[d] = begin[d] == 0 ? v : v + begin[d];
    }
    return x(idx);
  });
}

std::vector<Tensor> split(const std::vector<std::string>& names, const Tensor& x, int64_t axis,
                          const std::vector<int64_t>& sizes) {
  const std::string first = names.empty() ? std::string() : names[0];
  require_input("split", first, x);
  if (names.empty()) throw_op_error("split", first, "needs at least one output name");
  const int64_t d = normalize_axis("split", first, axis, int64_t(x->shape.size()));
  const int64_t dim = x->shape[size_t(d)], parts = int64_t(names.size());
  std::vector<int64_t> lengths = sizes;
  if (lengths.empty()) {
    const int64_t each = (dim + parts - 1) / parts;
    for (int64_t p = 0; p < parts; ++p) lengths.push_back(std::min(each, dim - p * each));
  }
  int64_t total = 0;
  for (int64_t n : lengths) total += n;
  if (int64_t(lengths.size()) != parts || total != dim ||
      std::any_of(lengths.begin(), lengths.end(), [](int64_t n) { return n <= 0; }))
    throw_op_error("split", first,
                   "sizes " + shape_to_string(lengths) + " for " + std::to_string(parts) +
                       " outputs do not split axis " + std::to_string(d) + " of input " + shape_to_string(x->shape) +
                       " into positive parts");
  std::vector<Tensor> outputs;
  int64_t offset = 0;
  for (int64_t p = 0; p < parts; ++p) {
    std::vector<int64_t> shape = x->shape;
    shape[size_t(d)] = lengths[size_t(p)];
    outputs.push_back(compute(names[size_t(p)], shape, [&](const Axes& i) {
      std::vector<Expr> idx = i;
      if (offset) idx[size_t(d)] = i[size_t(d)] + offset;
      return x(idx);
    }));
    offset += lengths[size_t(p)];
  }
  return outputs;
}

Tensor concat(const std::string& name, const std::vector<Tensor>& inputs, int64_t axis) {
  if (inputs.empty()) throw_op_error("concat", name, "needs at least one input");
  for (const Tensor& t : inputs) require_input("concat", name, t);
  const Tensor& first = inputs[0];
  const int64_t d = normalize_axis("concat", name, axis, int64_t(first->shape.size()));
  std::vector<int64_t> offsets;
  int64_t total = 0;
  for (const Tensor& t : inputs) {
    bool compatible = t->shape.size() == first->shape.size();
    for (size_t a = 0; compatible && a < t->shape.size(); ++a)
      compatible = int64_t(a) == d || t->shape[a] == first->shape[a];
    if (!compatible)
      throw_op_error("concat", name,
                     "input '" + t->name + "' " + shape_to_string(t->shape) + " does not match input '" + first->name +
                         "' " + shape_to_string(first->shape) + " outside axis " + std::to_string(d));
    if (t->dtype != first->dtype)
      throw_op_error("concat", name,
                     "input '" + t->name + "' is " + dtype_name(t->dtype) + " but '" + first->name + "' is " +
                         dtype_name(first->dtype));
    offsets.push_back(total);
    total += t->shape[size_t(d)];
  }
  std::vector<int64_t> shape = first->shape;
  shape[size_t(d)] = total;
  return compute(name, shape, [&](const Axes& i) {
    auto read_input = [&](size_t n) {
      std::vector<Expr> idx = i;
      if (offsets[n]) idx[size_t(d)] = i[size_t(d)] - offsets[n];
      return inputs[n](idx);
    };
    // The last input is the fallback; each earlier one takes the positions before its end.
    Expr value = read_input(inputs.size() - 1);
    for (size_t n = inputs.size() - 1; n-- > 0;)
      value = select(lt(i[size_t(d)], offsets[n] + inputs[n]->shape[size_t(d)]), read_input(n), value);
    return value;
  });
}

Tensor pad(const std::string& name, const Tensor& x, const std::vector<int64_t>& pads, PadMode mode, double value) {
  require_input("pad", name, x);
  const size_t rank = x->shape.size();
  if (pads.size() != 2 * rank)
    throw_op_error("pad", name,
                   "pads " + shape_to_string(pads) + " must hold " + std::to_string(2 * rank) + " values for input " +
                       shape_to_string(x->shape));
  std::vector<int64_t> shape(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t dim = x->shape[d], before = pads[d], after = pads[d + rank];
    shape[d] = dim + before + after;
    if (shape[d] <= 0)
      throw_op_error("pad", name,
                     "pads " + shape_to_string(pads) + " leave axis " + std::to_string(d) + " of input " +
                         shape_to_string(x->shape) + " empty");
    if (mode == PadMode::kReflect && (before >= dim || after >= dim))
      throw_op_error("pad", name,
                     "reflect pads " + shape_to_string(pads) + " must be smaller than axis " + std::to_string(d) +
                         " of input " + shape_to_string(x->shape));
  }
  const Expr fill = is_float(x->dtype) ? float_imm(value, x->dtype) : int_imm(int64_t(value), x->dtype);
  return compute(name, shape, [&](const Axes& i) {
    std::vector<Expr> idx(rank);
    Expr inside;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t dim = x->shape[d], before = pads[d], after = pads[d + rank];
      Expr j = before == 0 ? i[d] : i[d] - before;
      switch (mode) {
        case PadMode::kConstant:
          if (before > 0) inside = inside ? logical_and(inside, ge(j, int64_t(0))) : ge(j, int64_t(0));
          if (after > 0) inside = inside ? logical_and(inside, lt(j, dim)) : lt(j, dim);
          break;
        case PadMode::kReflect:
          // Mirror about the first and last element: -1 -> 1, dim -> dim - 2.
          if (before > 0) j = select(lt(j, int64_t(0)), -j, j);
          if (after > 0) j = select(ge(j, dim), Expr(2 * (dim - 1)) - j, j);
          break;
        case PadMode::kEdge:
          if (before > 0) j = maximum(j, int64_t(0));
          if (after > 0) j = minimum(j, dim - 1);
          break;
      }
      idx[d] = j;
    }
    Expr v = x(idx);
    return inside ? select(inside, v, fill) : v;
  });
}

}  // namespace ingot

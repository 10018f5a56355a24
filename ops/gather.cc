#include "ops/gather.h"

#include "ops/op_conventions.h"

namespace ingot {

namespace {

using Axes = std::vector<Expr>;

constexpr size_t kMaxConstantIndices = 4096;

// The gather TE: output axes [data before axis][index positions][data after axis]; index_of maps the index
// positions to the int64 index along axis.
Tensor gather_impl(const std::string& name, const Tensor& data, int64_t axis, const std::vector<int64_t>& index_shape,
                   const std::function<Expr(const std::vector<Expr>&)>& index_of) {
  std::vector<int64_t> shape(data->shape.begin(), data->shape.begin() + axis);
  shape.insert(shape.end(), index_shape.begin(), index_shape.end());
  shape.insert(shape.end(), data->shape.begin() + axis + 1, data->shape.end());
  const size_t ni = index_shape.size();
  return compute(name, shape, [&](const Axes& i) {
    std::vector<Expr> positions(i.begin() + axis, i.begin() + axis + int64_t(ni));
    std::vector<Expr> idx(i.begin(), i.begin() + axis);
    idx.push_back(index_of(positions));
    idx.insert(idx.end(), i.begin() + axis + int64_t(ni), i.end());
    return data(idx);
  });
}

int64_t checked_axis(const char* op, const std::string& name, const Tensor& data, int64_t axis) {
  if (!data) throw_op_error(op, name, "data is a null tensor");
  return normalize_axis(op, name, axis, int64_t(data->shape.size()));
}

// A balanced tree of selects over the flat position p choosing values[lo, hi).
Expr select_tree(const Expr& p, const std::vector<int64_t>& values, size_t lo, size_t hi) {
  if (hi - lo == 1) return int_imm(values[lo]);
  const size_t mid = lo + (hi - lo) / 2;
  return select(lt(p, int64_t(mid)), select_tree(p, values, lo, mid), select_tree(p, values, mid, hi));
}

}  // namespace

Tensor gather(const std::string& name, const Tensor& data, const Tensor& indices, int64_t axis) {
  const int64_t a = checked_axis("gather", name, data, axis);
  if (!indices) throw_op_error("gather", name, "indices is a null tensor");
  if (!is_int(indices->dtype))
    throw_op_error("gather", name,
                   "indices '" + indices->name + "' must be int32 or int64, not " + dtype_name(indices->dtype));
  const int64_t dim = data->shape[size_t(a)];
  return gather_impl(name, data, a, indices->shape, [&](const std::vector<Expr>& p) {
    Expr v = cast(DType::kInt64, indices(p));
    return select(lt(v, int64_t(0)), v + dim, v);
  });
}

Tensor gather(const std::string& name, const Tensor& data, const std::vector<int64_t>& indices,
              const std::vector<int64_t>& indices_shape, int64_t axis) {
  const int64_t a = checked_axis("gather", name, data, axis);
  for (int64_t d : indices_shape)
    if (d <= 0) throw_op_error("gather", name, "indices shape " + shape_to_string(indices_shape) + " must be positive");
  if (int64_t(indices.size()) != shape_elements(indices_shape))
    throw_op_error(
        "gather", name,
        std::to_string(indices.size()) + " indices do not fill indices shape " + shape_to_string(indices_shape));
  const int64_t dim = data->shape[size_t(a)];
  std::vector<int64_t> values;
  for (int64_t v : indices) {
    if (v < -dim || v >= dim)
      throw_op_error("gather", name,
                     "index " + std::to_string(v) + " is out of range for axis " + std::to_string(a) + " of data " +
                         shape_to_string(data->shape));
    values.push_back(v < 0 ? v + dim : v);
  }
  bool progression = true;
  const int64_t step = values.size() > 1 ? values[1] - values[0] : 0;
  for (size_t n = 1; progression && n < values.size(); ++n) progression = values[n] - values[n - 1] == step;
  if (!progression && values.size() > kMaxConstantIndices)
    throw_op_error("gather", name,
                   std::to_string(values.size()) + " constant indices that are not an arithmetic progression exceed " +
                       std::to_string(kMaxConstantIndices) + "; pass an index tensor or use gather_computed");
  return gather_impl(name, data, a, indices_shape, [&](const std::vector<Expr>& p) {
    Expr flat;
    for (size_t d = 0; d < p.size(); ++d) flat = flat ? flat * indices_shape[d] + p[d] : p[d];
    if (!flat) return int_imm(values[0]);  // a scalar index
    if (progression) {
      Expr v = step == 1 ? flat : flat * step;
      return values[0] == 0 ? v : v + values[0];
    }
    return select_tree(flat, values, 0, values.size());
  });
}

Tensor gather_computed(const std::string& name, const Tensor& data, int64_t axis,
                       const std::vector<int64_t>& index_shape,
                       const std::function<Expr(const std::vector<Expr>&)>& index_fn) {
  const int64_t a = checked_axis("gather_computed", name, data, axis);
  return gather_impl(name, data, a, index_shape, [&](const std::vector<Expr>& p) {
    Expr v = index_fn(p);
    if (!v || !is_int(v.dtype())) throw_op_error("gather_computed", name, "index_fn must return an integer expression");
    return cast(DType::kInt64, v);
  });
}

Tensor embedding(const std::string& name, const Tensor& table, const Tensor& ids) {
  if (!table) throw_op_error("embedding", name, "table is a null tensor");
  if (table->shape.size() != 2)
    throw_op_error("embedding", name, "table " + shape_to_string(table->shape) + " must be 2-D [vocabulary, dim]");
  return gather(name, table, ids, 0);
}

}  // namespace ingot

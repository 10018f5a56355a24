#include "ops/linear.h"

#include <vector>

#include "ops/op_conventions.h"

namespace ingot {

namespace {

using Axes = std::vector<Expr>;

void require_tensor(const char* op, const std::string& name, const Tensor& t, const char* operand) {
  if (!t) throw_op_error(op, name, std::string(operand) + " is a null tensor");
}

std::string described(const char* operand, const Tensor& t) {
  return std::string(operand) + " '" + t->name + "' " + shape_to_string(t->shape);
}

void require_same_dtype(const char* op, const std::string& name, const Tensor& a, const Tensor& b) {
  if (a->dtype != b->dtype)
    throw_op_error(
        op, name, "'" + a->name + "' is " + dtype_name(a->dtype) + " but '" + b->name + "' is " + dtype_name(b->dtype));
}

// The epilogue TE `name` = product + bias[last axis] (dense) with the product in `name_matmul`.
Tensor add_bias_last_axis(const char* op, const std::string& name, const Tensor& product, const Tensor& bias) {
  const int64_t n = product->shape.back();
  if (bias->shape != std::vector<int64_t>{n})
    throw_op_error(op, name, described("bias", bias) + " must be [" + std::to_string(n) + "]");
  require_same_dtype(op, name, product, bias);
  return compute(name, product->shape, [&](const Axes& i) { return product(i) + bias(i.back()); });
}

// Shared by matmul and batch_matmul: numpy matmul with rank-1 promotion, batch broadcasting and transposes.
Tensor matmul_impl(const char* op, const std::string& name, const Tensor& a, const Tensor& b, bool transpose_a,
                   bool transpose_b) {
  require_tensor(op, name, a, "a");
  require_tensor(op, name, b, "b");
  require_same_dtype(op, name, a, b);
  const size_t ra = a->shape.size(), rb = b->shape.size();
  if (ra == 0 || rb == 0)
    throw_op_error(op, name, "operands must have rank >= 1: " + described("a", a) + ", " + described("b", b));
  // Matrix dimensions of each operand (a rank-1 operand is a row vector for a, a column vector for b).
  const int64_t a_rows = ra == 1 ? 1 : a->shape[ra - (transpose_a ? 1 : 2)];
  const int64_t a_cols = ra == 1 ? a->shape[0] : a->shape[ra - (transpose_a ? 2 : 1)];
  const int64_t b_rows = rb == 1 ? b->shape[0] : b->shape[rb - (transpose_b ? 1 : 2)];
  const int64_t b_cols = rb == 1 ? 1 : b->shape[rb - (transpose_b ? 2 : 1)];
  if (a_cols != b_rows)
    throw_op_error(op, name,
                   described("a", a) + " has K=" + std::to_string(a_cols) + " but " + described("b", b) +
                       " has K=" + std::to_string(b_rows) + " (transpose_a=" + (transpose_a ? "true" : "false") +
                       ", transpose_b=" + (transpose_b ? "true" : "false") + ")");
  std::vector<int64_t> a_batch(a->shape.begin(), a->shape.end() - (ra >= 2 ? 2 : 1));
  std::vector<int64_t> b_batch(b->shape.begin(), b->shape.end() - (rb >= 2 ? 2 : 1));
  std::vector<int64_t> shape = broadcast_shapes(op, name, a_batch, b_batch);
  const size_t nb = shape.size();
  if (ra >= 2) shape.push_back(a_rows);
  if (rb >= 2) shape.push_back(b_cols);

  IterVar k = reduce_axis(a_cols, "k");
  return compute(name, shape, [&](const Axes& i) {
    std::vector<Expr> batch(i.begin(), i.begin() + nb);
    std::vector<Expr> ai = broadcast_indices(a_batch, batch), bi = broadcast_indices(b_batch, batch);
    size_t next = nb;
    if (ra >= 2) {
      Expr m = i[next++];
      ai.push_back(transpose_a ? k.var : m);
      ai.push_back(transpose_a ? m : k.var);
    } else {
      ai.push_back(k.var);
    }
    if (rb >= 2) {
      Expr n = i[next++];
      bi.push_back(transpose_b ? n : k.var);
      bi.push_back(transpose_b ? k.var : n);
    } else {
      bi.push_back(k.var);
    }
    return sum(a(ai) * b(bi), {k});
  });
}

}  // namespace

Tensor dense(const std::string& name, const Tensor& x, const Tensor& weight, const Tensor& bias) {
  require_tensor("dense", name, x, "input");
  require_tensor("dense", name, weight, "weight");
  require_same_dtype("dense", name, x, weight);
  if (x->shape.empty()) throw_op_error("dense", name, described("input", x) + " must have rank >= 1");
  if (weight->shape.size() != 2)
    throw_op_error("dense", name, described("weight", weight) + " must be 2-D [out_features, in_features]");
  const int64_t in = x->shape.back(), out = weight->shape[0];
  if (weight->shape[1] != in)
    throw_op_error("dense", name,
                   described("weight", weight) + " has " + std::to_string(weight->shape[1]) + " input features, " +
                       described("input", x) + " has " + std::to_string(in));
  std::vector<int64_t> shape = x->shape;
  shape.back() = out;
  IterVar k = reduce_axis(in, "k");
  Tensor product = compute(bias ? name + "_matmul" : name, shape, [&](const Axes& i) {
    std::vector<Expr> xi(i.begin(), i.end() - 1);
    xi.push_back(k.var);
    return sum(x(xi) * weight(i.back(), k.var), {k});
  });
  return bias ? add_bias_last_axis("dense", name, product, bias) : product;
}

Tensor matmul(const std::string& name, const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  return matmul_impl("matmul", name, a, b, transpose_a, transpose_b);
}

Tensor batch_matmul(const std::string& name, const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  require_tensor("batch_matmul", name, a, "a");
  require_tensor("batch_matmul", name, b, "b");
  if (a->shape.size() != 3 || b->shape.size() != 3)
    throw_op_error("batch_matmul", name, "operands must be 3-D: " + described("a", a) + ", " + described("b", b));
  return matmul_impl("batch_matmul", name, a, b, transpose_a, transpose_b);
}

Tensor gemm(const std::string& name, const Tensor& a, const Tensor& b, const Tensor& c, const GemmAttrs& attrs) {
  require_tensor("gemm", name, a, "A");
  require_tensor("gemm", name, b, "B");
  require_same_dtype("gemm", name, a, b);
  if (a->shape.size() != 2 || b->shape.size() != 2)
    throw_op_error("gemm", name, "A and B must be 2-D: " + described("A", a) + ", " + described("B", b));
  const int64_t m = a->shape[attrs.transpose_a ? 1 : 0], ka = a->shape[attrs.transpose_a ? 0 : 1];
  const int64_t kb = b->shape[attrs.transpose_b ? 1 : 0], n = b->shape[attrs.transpose_b ? 0 : 1];
  if (ka != kb)
    throw_op_error("gemm", name,
                   described("A", a) + " has K=" + std::to_string(ka) + " but " + described("B", b) +
                       " has K=" + std::to_string(kb) + " (transA=" + std::to_string(attrs.transpose_a) +
                       ", transB=" + std::to_string(attrs.transpose_b) + ")");
  const std::vector<int64_t> shape{m, n};
  if (c) {
    require_same_dtype("gemm", name, a, c);
    if (c->shape.size() > 2 || broadcast_shapes("gemm", name, c->shape, shape) != shape)
      throw_op_error("gemm", name,
                     described("C", c) + " does not broadcast to the product's shape " + shape_to_string(shape));
  }
  IterVar k = reduce_axis(ka, "k");
  // Without C, alpha folds into the reduction so that the op stays one TE.
  const bool alpha_in_product = !c && attrs.alpha != 1.0;
  Tensor product = compute(c ? name + "_matmul" : name, shape, [&](const Axes& i) {
    Expr av = attrs.transpose_a ? a(k.var, i[0]) : a(i[0], k.var);
    Expr bv = attrs.transpose_b ? b(i[1], k.var) : b(k.var, i[1]);
    return sum(alpha_in_product ? av * bv * attrs.alpha : av * bv, {k});
  });
  if (!c) return product;
  return compute(name, shape, [&](const Axes& i) {
    Expr p = attrs.alpha == 1.0 ? product(i) : product(i) * attrs.alpha;
    Expr cv = c(broadcast_indices(c->shape, i));
    return p + (attrs.beta == 1.0 ? cv : cv * attrs.beta);
  });
}

}  // namespace ingot

#include "ops/op_conventions.h"

#include <stdexcept>

namespace ingot {

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t d = 0; d < shape.size(); ++d) text += (d ? "," : "") + std::to_string(shape[d]);
  return text + "]";
}

void throw_op_error(const std::string& op, const std::string& name, const std::string& message) {
  throw std::invalid_argument(op + " '" + name + "': " + message);
}

int64_t normalize_axis(const std::string& op, const std::string& name, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    throw_op_error(op, name,
                   "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank) + " (valid: [" +
                       std::to_string(-rank) + ", " + std::to_string(rank) + "))");
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> broadcast_shapes(const std::string& op, const std::string& name, const std::vector<int64_t>& a,
                                      const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t d = 0; d < rank; ++d) {
    // Aligned from the right: a missing leading dimension acts as 1.
    int64_t da = d + a.size() >= rank ? a[d + a.size() - rank] : 1;
    int64_t db = d + b.size() >= rank ? b[d + b.size() - rank] : 1;
    if (da != db && da != 1 && db != 1)
      throw_op_error(op, name,
                     "shapes " + shape_to_string(a) + " and " + shape_to_string(b) + " do not broadcast (dimension " +
                         std::to_string(d) + " of the result: " + std::to_string(da) + " vs " + std::to_string(db) +
                         ")");
    out[d] = da == 1 ? db : da;
  }
  return out;
}

std::vector<Expr> broadcast_indices(const std::vector<int64_t>& input_shape, const std::vector<Expr>& output_indices) {
  std::vector<Expr> indices;
  const size_t offset = output_indices.size() - input_shape.size();
  for (size_t d = 0; d < input_shape.size(); ++d)
    indices.push_back(input_shape[d] == 1 ? Expr(int64_t(0)) : output_indices[d + offset]);
  return indices;
}

int64_t shape_elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace ingot

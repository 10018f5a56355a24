#include "ir/tensor.h"

#include <set>
#include <stdexcept>

#include "ir/functor.h"

namespace ingot {

std::vector<Tensor> TensorNode::inputs() const {
  std::vector<Tensor> out;
  if (!body) return out;
  for_each_node(body, [&](const Expr& e) {
    if (auto* r = e.as<TensorReadNode>()) {
      for (const Tensor& t : out)
        if (t.same_as(r->tensor)) return;
      out.push_back(r->tensor);
    }
  });
  return out;
}

int64_t TensorNode::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {

void check_shape(const std::string& name, const std::vector<int64_t>& shape) {
  if (name.empty()) throw std::invalid_argument("a tensor needs a name");
  for (int64_t d : shape)
    if (d <= 0) throw std::invalid_argument("tensor '" + name + "' has a non-positive dimension");
}

}  // namespace

Tensor placeholder(std::string name, std::vector<int64_t> shape, DType dtype) {
  check_shape(name, shape);
  return Tensor(std::make_shared<const TensorNode>(TensorNode{std::move(name), std::move(shape), dtype, {}, Expr()}));
}

std::string default_axis_name(size_t d, size_t rank) {
  static const char* names[] = {"i", "j", "l", "m", "n", "p", "q", "r"};
  (void)rank;
  return d < 8 ? names[d] : "ax" + std::to_string(d);
}

Tensor compute(std::string name, std::vector<int64_t> shape, const std::function<Expr(const std::vector<Expr>&)>& fn,
               std::vector<std::string> axis_names) {
  check_shape(name, shape);
  if (axis_names.empty())
    for (size_t d = 0; d < shape.size(); ++d) axis_names.push_back(default_axis_name(d, shape.size()));
  if (axis_names.size() != shape.size())
    throw std::invalid_argument("compute '" + name + "' has " + std::to_string(shape.size()) + " dimensions but " +
                                std::to_string(axis_names.size()) + " axis names");
  std::vector<IterVar> axes;
  std::vector<Expr> vars;
  for (size_t d = 0; d < shape.size(); ++d) {
    axes.push_back(IterVar{var(axis_names[d]), shape[d]});
    vars.push_back(axes.back().var);
  }
  Expr body = fn(vars);
  if (!body) throw std::invalid_argument("compute '" + name + "' returned a null expression");
  std::set<std::string> seen(axis_names.begin(), axis_names.end());
  if (seen.size() != axis_names.size()) throw std::invalid_argument("compute '" + name + "' repeats an axis name");
  for_each_node(body, [&](const Expr& e) {
    if (e.as<ReduceNode>() && !e.same_as(body))
      throw std::invalid_argument("compute '" + name + "': a reduction must be the whole body, found inside " +
                                  to_string(body));
  });
  if (auto* r = body.as<ReduceNode>())
    for (const IterVar& k : r->axes)
      if (!seen.insert(k.name()).second)
        throw std::invalid_argument("compute '" + name + "': reduce axis '" + k.name() + "' clashes with another axis");
  DType dtype = body.dtype();
  return Tensor(std::make_shared<const TensorNode>(
      TensorNode{std::move(name), std::move(shape), dtype, std::move(axes), std::move(body)}));
}

}  // namespace ingot

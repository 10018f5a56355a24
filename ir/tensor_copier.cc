#include "ir/tensor_copier.h"

#include <memory>

namespace ingot {

Expr TensorCopier::mutate(const Expr& e) {
  auto* r = e.as<TensorReadNode>();
  if (!r) return mutate_children(e);
  std::vector<Expr> indices;
  for (const Expr& i : r->indices) indices.push_back(mutate(i));
  return read(copy_of(r->tensor), std::move(indices));
}

Tensor TensorCopier::copy_of(const Tensor& t) {
  auto it = copies_.find(t.get());
  if (it != copies_.end()) return it->second;
  Tensor copy = make_copy(t);
  copies_.emplace(t.get(), copy);
  return copy;
}

Tensor TensorCopier::with_body(const Tensor& t, const std::string& name, Expr body) {
  return Tensor(std::make_shared<const TensorNode>(TensorNode{name, t->shape, t->dtype, t->axes, std::move(body)}));
}

}  // namespace ingot

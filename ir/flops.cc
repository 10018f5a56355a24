#include "ir/flops.h"

#include "ir/functor.h"
#include "ir/tensor.h"

namespace ingot {

int64_t flops_per_evaluation(const Expr& e) {
  int64_t ops = 0;
  for_each_node(e, [&](const Expr& node) {
    switch (node.kind()) {
      case ExprKind::kBinary:
      case ExprKind::kCall:
        if (is_float(node.dtype())) ++ops;
        break;
      case ExprKind::kCompare:
        if (is_float(node.as<CompareNode>()->a.dtype())) ++ops;
        break;
      default: break;
    }
  });
  return ops;
}

int64_t flops_per_element(const Tensor& t) {
  if (t->is_placeholder()) return 0;
  const ReduceNode* r = t->reduction();
  if (!r) return flops_per_evaluation(t->body);
  int64_t steps = 1;
  for (const IterVar& k : r->axes) steps *= k.extent;
  return steps * (flops_per_evaluation(r->source) + 1);
}

int64_t tensor_flops(const Tensor& t) { return t->num_elements() * flops_per_element(t); }

int64_t program_flops(const Program& program) {
  int64_t total = 0;
  for (const Tensor& t : program.tensors()) total += tensor_flops(t);
  return total;
}

}  // namespace ingot

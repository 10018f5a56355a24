#include "workloads/bf16_products.h"

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "ir/functor.h"
#include "ir/tensor_copier.h"

namespace ingot {

namespace {

// A compute summing x * W[..] whose W the rewrite holds in bf16: which operand of the product reads W, and where k is.
struct Bf16Sum {
  const TensorNode* weight = nullptr;
  bool weight_first = false;  // W[..] * x rather than x * W[..]
  int64_t dim = 0;            // the dimension of W that k indexes
};

// The weight read, when `t` sums x * W[..] (either order) with W a 2-D placeholder of `weights` read at a reduction
// variable k of even extent in one dimension and at an index without k in the other, x an f32 value that reads no W.
std::optional<Bf16Sum> bf16_sum(const Tensor& t, const std::set<std::string>& weights) {
  const ReduceNode* reduction = t->reduction();
  if (!reduction || reduction->op != ReduceOp::kSum || reduction->dtype != DType::kFloat32) return std::nullopt;
  auto* product = reduction->source.as<BinaryNode>();
  if (!product || product->op != BinaryOp::kMul) return std::nullopt;
  for (bool weight_first : {false, true}) {
    const Expr& w = weight_first ? product->a : product->b;
    const Expr& x = weight_first ? product->b : product->a;
    auto* read = w.as<TensorReadNode>();
    if (!read || !read->tensor->is_placeholder() || !weights.count(read->tensor->name) ||
        read->tensor->dtype != DType::kFloat32 || read->indices.size() != 2 || x.dtype() != DType::kFloat32)
      continue;
    bool x_reads_weight = false;
    for_each_node(x, [&](const Expr& e) {
      if (auto* r = e.as<TensorReadNode>()) x_reads_weight |= r->tensor.get() == read->tensor.get();
    });
    if (x_reads_weight) continue;
    for (int64_t dim = 0; dim < 2; ++dim) {
      auto* k = read->indices[dim].as<VarNode>();
      if (!k) continue;
      for (const IterVar& axis : reduction->axes)
        if (axis.name() == k->name && axis.extent % 2 == 0 && !uses_var(read->indices[1 - dim], k->name))
          return Bf16Sum{read->tensor.get(), weight_first, dim};
    }
  }
  return std::nullopt;
}

// Rebuilds the program over the rewritten weights: the sums of `sums` multiply in bf16, every other read goes to the
// rebuilt tensor it read.
class Bf16Rewriter final : public TensorCopier {
 public:
  Bf16Rewriter(const std::unordered_map<const TensorNode*, Bf16Sum>& sums,
               const std::unordered_map<const TensorNode*, Tensor>& weights)
      : sums_(sums) {
    copies_.insert(weights.begin(), weights.end());
  }

 private:
  Tensor make_copy(const Tensor& t) override {
    if (t->is_placeholder()) return t;
    auto sum = sums_.find(t.get());
    if (sum == sums_.end()) return with_body(t, t->name, mutate(t->body));
    const ReduceNode* reduction = t->reduction();
    auto* product = reduction->source.as<BinaryNode>();
    const Bf16Sum& s = sum->second;
    auto* w = (s.weight_first ? product->a : product->b).as<TensorReadNode>();
    Expr x = mutate(s.weight_first ? product->b : product->a);
    Expr bf16_x = cast(DType::kFloat32, cast(DType::kBFloat16, x));
    Expr bf16_w = cast(DType::kFloat32, read(copies_.at(s.weight), w->indices));
    return with_body(t, t->name, reduce(ReduceOp::kSum, bf16_x * bf16_w, reduction->axes));
  }

  const std::unordered_map<const TensorNode*, Bf16Sum>& sums_;
};

}  // namespace

Bf16Program bf16_products(const Program& program, const std::vector<std::string>& weights) {
  const std::set<std::string> weight_set(weights.begin(), weights.end());
  std::unordered_map<const TensorNode*, Bf16Sum> sums;
  std::map<const TensorNode*, int64_t> dims;  // per weight: the k dimension of every qualifying read, -1 if they differ
  std::set<const TensorNode*> read_otherwise;
  for (const Tensor& t : program.computes()) {
    std::optional<Bf16Sum> sum = bf16_sum(t, weight_set);
    const TensorNode* qualified = sum ? sum->weight : nullptr;
    if (sum) {
      sums.emplace(t.get(), *sum);
      auto [it, first] = dims.emplace(sum->weight, sum->dim);
      if (!first && it->second != sum->dim) it->second = -1;
    }
    int reads_of_qualified = 0;
    for_each_node(t->body, [&](const Expr& e) {
      auto* r = e.as<TensorReadNode>();
      if (!r || !r->tensor->is_placeholder()) return;
      if (r->tensor.get() == qualified && reads_of_qualified++ == 0) return;
      read_otherwise.insert(r->tensor.get());
    });
  }
  Bf16Program out{program, {}};
  std::unordered_map<const TensorNode*, Tensor> rewritten;
  for (const std::string& name : weights) {
    Tensor w = program.find(name);
    if (!w) continue;
    auto dim = dims.find(w.get());
    if (dim == dims.end() || dim->second < 0 || read_otherwise.count(w.get())) continue;
    rewritten[w.get()] = placeholder(w->name, w->shape, DType::kBFloat16);
    out.weights.push_back({w->name, w->shape, dim->second});
  }
  for (auto it = sums.begin(); it != sums.end();)
    it = rewritten.count(it->second.weight) ? std::next(it) : sums.erase(it);
  Bf16Rewriter rewriter(sums, rewritten);
  std::vector<Tensor> outputs;
  for (const Tensor& t : program.outputs()) outputs.push_back(rewriter.copy_of(t));
  out.program = Program(std::move(outputs), program.name() + "@bf16");
  return out;
}

TensorMap bf16_inputs(const Bf16Program& bf16, const TensorMap& f32_inputs) {
  TensorMap out = f32_inputs;
  for (const Bf16Weight& w : bf16.weights) {
    auto it = f32_inputs.find(w.name);
    if (it == f32_inputs.end()) throw std::invalid_argument("bf16 weights: no data for weight '" + w.name + "'");
    const HostTensor& f32 = it->second;
    if (f32.dtype() != DType::kFloat32 || f32.shape() != w.shape)
      throw std::invalid_argument("bf16 weights: weight '" + w.name + "' is not the f32 tensor of shape " +
                                  std::to_string(w.shape[0]) + " x " + std::to_string(w.shape[1]) +
                                  " that the program reads");
    HostTensor rounded(DType::kBFloat16, w.shape);
    for (int64_t i = 0; i < f32.num_elements(); ++i) rounded.set(i, f32.get(i));
    out[w.name] = std::move(rounded);
  }
  return out;
}

}  // namespace ingot

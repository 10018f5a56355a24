#include "workloads/scale_into_weights.h"

#include <optional>
#include <unordered_map>

#include "ir/functor.h"
#include "ir/simplify.h"
#include "ir/tensor_copier.h"

namespace ingot {

namespace {

// How one sum reads the scaled map B: sum(b * W[..]) or sum(W[..] * b), b being B[..] or select(cond, B[..], 0).
struct ScaledSum {
  const TensorNode* sum = nullptr;
  bool weight_first = false;
  Expr map_operand;                // b
  const TensorReadNode* map_read;  // B[..] in b
  const TensorReadNode* weight;    // W[..]
  // Per index of the scale's read: the dimension of W whose index is the same reduction variable, or -1 for a
  // constant index (scale_index holds it).
  std::vector<int64_t> weight_dim;
  std::vector<int64_t> scale_index;
};

const TensorReadNode* read_of(const Expr& e, const TensorNode* tensor) {
  auto* r = e.as<TensorReadNode>();
  return r && r->tensor.get() == tensor ? r : nullptr;
}

// The read of B in b (B[..] or select(cond, B[..], 0)), or null.
const TensorReadNode* map_read(const Expr& b, const TensorNode* map) {
  if (const TensorReadNode* r = read_of(b, map)) return r;
  auto* s = b.as<SelectNode>();
  auto* zero = s ? s->false_value.as<FloatImmNode>() : nullptr;
  return zero && zero->value == 0.0 ? read_of(s->true_value, map) : nullptr;
}

int count_reads(const Expr& e, const TensorNode* tensor) {
  int n = 0;
  for_each_node(e, [&](const Expr& node) { n += read_of(node, tensor) != nullptr; });
  return n;
}

// The fold of `sum`'s read of map = x * scale (scale read at `scale`), or nullopt where the scale's index, seen from
// the sum, is not made of constants and reduction variables that index the weight directly.
std::optional<ScaledSum> scaled_sum(const Tensor& sum, const Tensor& map, const TensorReadNode* scale) {
  const ReduceNode* reduction = sum->reduction();
  if (!reduction || reduction->op != ReduceOp::kSum || reduction->dtype != DType::kFloat32) return std::nullopt;
  auto* product = reduction->source.as<BinaryNode>();
  if (!product || product->op != BinaryOp::kMul || count_reads(sum->body, map.get()) != 1) return std::nullopt;
  for (bool weight_first : {false, true}) {
    const Expr& b = weight_first ? product->b : product->a;
    auto* w = (weight_first ? product->a : product->b).as<TensorReadNode>();
    const TensorReadNode* b_read = map_read(b, map.get());
    if (!b_read || !w || !w->tensor->is_placeholder() || w->tensor->dtype != DType::kFloat32 ||
        w->tensor->num_elements() * 4 > map->num_elements())
      continue;
    // The scale's index in the sum's variables; a spatial axis of extent 1 (a batch of one) is 0.
    std::unordered_map<std::string, Expr> at;
    for (size_t d = 0; d < map->axes.size(); ++d) at.emplace(map->axes[d].name(), b_read->indices[d]);
    std::unordered_map<std::string, Expr> unit_axes;
    for (const IterVar& axis : sum->axes)
      if (axis.extent == 1) unit_axes.emplace(axis.name(), int_imm(0));
    ScaledSum s{sum.get(), weight_first, b, b_read, w, {}, {}};
    for (const Expr& index : scale->indices) {
      Expr i = simplify(substitute(substitute(index, at), unit_axes));
      int64_t dim = -1;
      if (auto* v = i.as<VarNode>()) {
        for (size_t d = 0; d < w->indices.size() && dim < 0; ++d)
          if (auto* wv = w->indices[d].as<VarNode>(); wv && wv->name == v->name) dim = int64_t(d);
        bool reduction_var = false;
        for (const IterVar& axis : reduction->axes) reduction_var |= axis.name() == v->name;
        if (dim < 0 || !reduction_var) break;
      } else if (!i.as<IntImmNode>()) {
        break;
      }
      s.weight_dim.push_back(dim);
      s.scale_index.push_back(dim < 0 ? i.as<IntImmNode>()->value : 0);
    }
    if (s.weight_dim.size() == scale->indices.size()) return s;
  }
  return std::nullopt;
}

// A map whose every reader folds its scale: x, the scale's read, and the readers' folds.
struct ScaledMap {
  Expr x;
  const TensorReadNode* scale;
  std::vector<ScaledSum> sums;
};

std::optional<ScaledMap> scaled_map(const Program& program, const Tensor& map) {
  auto* product = map->body.as<BinaryNode>();
  if (!product || product->op != BinaryOp::kMul || map->dtype != DType::kFloat32 || program.is_output(map))
    return std::nullopt;
  for (bool scale_first : {false, true}) {
    auto* scale = (scale_first ? product->a : product->b).as<TensorReadNode>();
    const Expr& x = scale_first ? product->b : product->a;
    if (!scale || !x.as<TensorReadNode>()) continue;
    ScaledMap m{x, scale, {}};
    const std::vector<Tensor> readers = program.readers(map);
    for (const Tensor& reader : readers) {
      std::optional<ScaledSum> s = scaled_sum(reader, map, scale);
      if (!s) break;
      m.sums.push_back(std::move(*s));
    }
    if (!m.sums.empty() && m.sums.size() == readers.size()) return m;
  }
  return std::nullopt;
}

class ScaleFolder final : public TensorCopier {
 public:
  ScaleFolder(const Program& program, const std::vector<ScaledMap>& maps) : program_(program) {
    for (const ScaledMap& m : maps)
      for (const ScaledSum& s : m.sums) sums_.emplace(s.sum, std::make_pair(&m, &s));
  }

 private:
  Tensor make_copy(const Tensor& t) override {
    if (t->is_placeholder()) return t;
    auto it = sums_.find(t.get());
    if (it == sums_.end()) return with_body(t, t->name, mutate(t->body));
    const auto& [m, s] = it->second;
    const Tensor& weight = s->weight->tensor;
    Tensor scale = copy_of(m->scale->tensor);
    Tensor scaled =
        compute(unused_name(program_, t->name + "_scaled_weight"), weight->shape, [&](const std::vector<Expr>& i) {
          std::vector<Expr> at;
          for (size_t k = 0; k < s->weight_dim.size(); ++k)
            at.push_back(s->weight_dim[k] < 0 ? int_imm(s->scale_index[k]) : i[s->weight_dim[k]]);
          return read(weight, i) * read(scale, at);
        });
    // The map's read becomes x's, at the map's index.
    const Tensor& map = s->map_read->tensor;
    std::unordered_map<std::string, Expr> at;
    for (size_t d = 0; d < map->axes.size(); ++d) at.emplace(map->axes[d].name(), s->map_read->indices[d]);
    Expr x = substitute(m->x, at);
    Expr b = x;
    if (auto* sel = s->map_operand.as<SelectNode>()) b = select(sel->cond, x, sel->false_value);
    b = mutate(b);
    Expr w = read(scaled, s->weight->indices);
    const ReduceNode* reduction = t->reduction();
    return with_body(t, t->name, reduce(ReduceOp::kSum, s->weight_first ? w * b : b * w, reduction->axes));
  }

  const Program& program_;
  std::unordered_map<const TensorNode*, std::pair<const ScaledMap*, const ScaledSum*>> sums_;
};

}  // namespace

Program fold_scales_into_weights(const Program& program) {
  std::vector<ScaledMap> maps;
  for (const Tensor& t : program.computes())
    if (std::optional<ScaledMap> m = scaled_map(program, t)) maps.push_back(std::move(*m));
  if (maps.empty()) return program;
  ScaleFolder folder(program, maps);
  std::vector<Tensor> outputs;
  for (const Tensor& t : program.outputs()) outputs.push_back(folder.copy_of(t));
  return Program(std::move(outputs), program.name());
}

}  // namespace ingot

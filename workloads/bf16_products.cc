#include "workloads/bf16_products.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "ir/functor.h"
#include "ir/simplify.h"
#include "ir/tensor_copier.h"
#include "ops/op_conventions.h"

namespace ingot {

namespace {

// A compute summing x * W[..] whose W the rewrite holds in bf16: which operand of the product reads W, and where k is.
struct Bf16Sum {
  const TensorNode* weight = nullptr;
  bool weight_first = false;  // W[..] * x rather than x * W[..]
  int64_t dim = 0;            // the dimension of W that k indexes
  int64_t k = 0;              // k's extent
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
          return Bf16Sum{read->tensor.get(), weight_first, dim, axis.extent};
    }
  }
  return std::nullopt;
}

// A 1 x 1 convolution whose W the rewrite holds in bf16: sum_{rc, ry, rx} x[.., rc, ..] * W[c, rc, ry, rx] (either
// order) with W a 4-D [O, I, 1, 1] placeholder of `weights` read at one of t's axes (c, the channel axis), the
// reduction variable rc of even extent and loops of one iteration (ry, rx) or 0; x an f32 read at rc in one dimension,
// at no c and at no rc elsewhere (no group, no padding), of a map of more than one pixel (not a squeeze-excitation's
// GEMV). Its x is read through a tensor of bf16 pairs of input channels, [.., I / 2, .., 2] (t's axes with c's
// replaced), so that a spatial tile over pixels reads each pixel's pair of rc side by side, as vdpbf16ps and AMX's B
// tiles want them.
struct Bf16Conv {
  const TensorNode* weight = nullptr;
  bool weight_first = false;
  size_t channel_axis = 0;  // of t, the one W's first dimension reads
  IterVar rc;
};

std::optional<Bf16Conv> bf16_conv(const Tensor& t, const std::set<std::string>& weights) {
  const ReduceNode* reduction = t->reduction();
  if (!reduction || reduction->op != ReduceOp::kSum || reduction->dtype != DType::kFloat32) return std::nullopt;
  auto* product = reduction->source.as<BinaryNode>();
  if (!product || product->op != BinaryOp::kMul) return std::nullopt;
  auto single_step = [&](const Expr& index) {
    if (auto* imm = index.as<IntImmNode>()) return imm->value == 0;
    auto* v = index.as<VarNode>();
    return v && std::any_of(reduction->axes.begin(), reduction->axes.end(),
                            [&](const IterVar& a) { return a.name() == v->name && a.extent == 1; });
  };
  for (bool weight_first : {false, true}) {
    auto* w = (weight_first ? product->a : product->b).as<TensorReadNode>();
    auto* x = (weight_first ? product->b : product->a).as<TensorReadNode>();
    if (!w || !x || !w->tensor->is_placeholder() || !weights.count(w->tensor->name) ||
        w->tensor->dtype != DType::kFloat32 || w->tensor->shape.size() != 4 || w->tensor->shape[2] != 1 ||
        w->tensor->shape[3] != 1 || x->dtype != DType::kFloat32 || weights.count(x->tensor->name) ||
        !single_step(w->indices[2]) || !single_step(w->indices[3]))
      continue;
    auto* c = w->indices[0].as<VarNode>();
    auto* k = w->indices[1].as<VarNode>();
    if (!c || !k) continue;
    Bf16Conv conv;
    conv.weight = w->tensor.get();
    conv.weight_first = weight_first;
    bool found_c = false, found_k = false, others_single = true;
    for (size_t d = 0; d < t->axes.size(); ++d)
      if (t->axes[d].name() == c->name) {
        conv.channel_axis = d;
        found_c = true;
      }
    for (const IterVar& a : reduction->axes)
      if (a.name() == k->name) {
        conv.rc = a;
        found_k = a.extent % 2 == 0;
      } else {
        others_single = others_single && a.extent == 1;
      }
    if (!found_c || !found_k || !others_single) continue;
    int64_t pixels = 1;  // of the map: the axes after the channels'
    for (size_t d = conv.channel_axis + 1; d < t->axes.size(); ++d) pixels *= t->axes[d].extent;
    int rc_dims = 0;
    bool plain = pixels > 1;
    for (const Expr& index : x->indices) {
      plain = plain && !uses_var(index, c->name);
      if (auto* v = index.as<VarNode>(); v && v->name == k->name)
        ++rc_dims;
      else
        plain = plain && !uses_var(index, k->name);
    }
    if (plain && rc_dims == 1) return conv;
  }
  return std::nullopt;
}

// Rebuilds the program over the rewritten weights: the sums of `sums` multiply in bf16, every other read goes to the
// rebuilt tensor it read.
class Bf16Rewriter final : public TensorCopier {
 public:
  Bf16Rewriter(const Program& program, const std::unordered_map<const TensorNode*, Bf16Sum>& sums,
               const std::unordered_map<const TensorNode*, Bf16Conv>& convs, int64_t conv_channel_multiple)
      : program_(program), sums_(sums), convs_(convs), conv_channel_multiple_(conv_channel_multiple) {}

  // The bf16 weights, which every read of their f32 placeholders reads instead.
  void add_weights(const std::unordered_map<const TensorNode*, Tensor>& weights) {
    copies_.insert(weights.begin(), weights.end());
  }

  int64_t padded_channels(int64_t channels) const {
    return (channels + conv_channel_multiple_ - 1) / conv_channel_multiple_ * conv_channel_multiple_;
  }

 private:
  Tensor make_copy(const Tensor& t) override {
    if (t->is_placeholder()) return t;
    if (auto conv = convs_.find(t.get()); conv != convs_.end()) return conv_copy(t, conv->second);
    auto sum = sums_.find(t.get());
    if (sum == sums_.end()) return with_body(t, t->name, mutate(t->body));
    const ReduceNode* reduction = t->reduction();
    auto* product = reduction->source.as<BinaryNode>();
    const Bf16Sum& s = sum->second;
    auto* w = (s.weight_first ? product->a : product->b).as<TensorReadNode>();
    Expr x = mutate(s.weight_first ? product->b : product->a);
    Expr bf16_x = cast(DType::kFloat32, rows_of(t, x, s));
    Expr bf16_w = cast(DType::kFloat32, read(copies_.at(s.weight), w->indices));
    return with_body(t, t->name, reduce(ReduceOp::kSum, bf16_x * bf16_w, reduction->axes));
  }

  // bf16(x), read from a tensor of x rounded once (`<x>_bf16`, the whole of x, shared by every sum that reads x) where
  // the sum is as an AMX tile wants it: at least its 16 rows (t's elements per weight column) and a k that is a
  // multiple of its 32. AMX tiles then load the rows in place, where rounding the rows of each step of 32 k into a
  // buffer took longer than the tile's products (a 128 x 3072 x 768 GEMM alone 1.15x). A GEMV (the LSTM's gates, one
  // row) rounds x where it reads it: another stage would cost a barrier per step.
  Expr rows_of(const Tensor& t, const Expr& x, const Bf16Sum& s) {
    constexpr int64_t kMinRoundedRows = 16, kRoundedKMultiple = 32;
    auto* element = x.as<TensorReadNode>();
    const int64_t columns = s.weight->shape[size_t(1 - s.dim)];
    if (!element || t->num_elements() / columns < kMinRoundedRows || s.k % kRoundedKMultiple != 0)
      return cast(DType::kBFloat16, x);
    auto [it, first] = rounded_.try_emplace(element->tensor.get());
    if (first) {
      const Tensor& source = element->tensor;
      it->second = compute(new_name(source->name + "_bf16"), source->shape,
                           [&](const std::vector<Expr>& i) { return cast(DType::kBFloat16, read(source, i)); });
    }
    return read(it->second, element->indices);
  }

  // `base`, or another name that no tensor of the program and none this rewrite made has.
  std::string new_name(const std::string& base) {
    std::string name = unused_name(program_, base);
    for (int n = 1; made_names_.count(name); ++n) name = unused_name(program_, base + "_" + std::to_string(n));
    made_names_.insert(name);
    return name;
  }

  // sum_rc f32(W[c, rc, 0, 0]) * f32(pairs[.., rc / 2, .., rc % 2]) (in the product's order), over rc alone, with
  // pairs[.., c2, .., p] = bf16(x[.. at rc = 2 c2 + p ..]), the loops of one iteration at 0. rc runs over the input
  // channels padded to the multiple, where the pairs are zero (and so is the padded weight, though any finite value
  // would do).
  Tensor conv_copy(const Tensor& t, const Bf16Conv& conv) {
    const ReduceNode* reduction = t->reduction();
    auto* product = reduction->source.as<BinaryNode>();
    auto* w = (conv.weight_first ? product->a : product->b).as<TensorReadNode>();
    const Expr x = mutate(conv.weight_first ? product->b : product->a);
    std::unordered_map<std::string, Expr> single;
    for (const IterVar& a : reduction->axes)
      if (a.name() != conv.rc.name()) single[a.name()] = Expr(int64_t(0));
    const int64_t channels = conv.rc.extent, padded = padded_channels(channels);
    std::vector<int64_t> shape = t->shape;
    shape[conv.channel_axis] = padded / 2;
    shape.push_back(2);
    Tensor pairs = compute(new_name(t->name + "_pairs"), shape, [&](const std::vector<Expr>& i) {
      std::unordered_map<std::string, Expr> at = single;
      for (size_t d = 0; d < t->axes.size(); ++d)
        if (d != conv.channel_axis) at[t->axes[d].name()] = i[d];
      const Expr channel = i[conv.channel_axis] * int64_t(2) + i.back();
      // A padded channel reads the last real one (in bounds) and gives zero.
      at[conv.rc.name()] = padded == channels ? channel : minimum(channel, Expr(channels - 1));
      auto* element = x.as<TensorReadNode>();
      std::vector<Expr> index;
      for (const Expr& e : element->indices) index.push_back(simplify(substitute(e, at)));
      const Expr value = read(element->tensor, index);
      return cast(DType::kBFloat16, padded == channels ? value : select(lt(channel, Expr(channels)), value, Expr(0.0)));
    });
    std::vector<Expr> pair_index;
    for (const IterVar& a : t->axes) pair_index.push_back(a.var);
    pair_index[conv.channel_axis] = conv.rc.var / int64_t(2);
    pair_index.push_back(conv.rc.var % int64_t(2));
    std::vector<Expr> weight_index;
    for (const Expr& index : w->indices) weight_index.push_back(substitute(index, single));
    const Expr bf16_x = cast(DType::kFloat32, read(pairs, pair_index));
    const Expr bf16_w = cast(DType::kFloat32, read(copies_.at(conv.weight), weight_index));
    return with_body(
        t, t->name,
        reduce(ReduceOp::kSum, conv.weight_first ? bf16_w * bf16_x : bf16_x * bf16_w, {IterVar{conv.rc.var, padded}}));
  }

  const Program& program_;
  const std::unordered_map<const TensorNode*, Bf16Sum>& sums_;
  const std::unordered_map<const TensorNode*, Bf16Conv>& convs_;
  const int64_t conv_channel_multiple_;
  std::unordered_map<const TensorNode*, Tensor> rounded_;  // per x read by such sums: x rounded to bf16
  std::set<std::string> made_names_;
};

}  // namespace

std::vector<int64_t> Bf16Weight::bf16_shape() const {
  std::vector<int64_t> padded = shape;
  padded[dim] += padding;
  return padded;
}

Bf16Program bf16_products(const Program& program, const std::vector<std::string>& weights,
                          int64_t conv_channel_multiple) {
  if (conv_channel_multiple < 2 || conv_channel_multiple % 2 != 0)
    throw std::invalid_argument("bf16 products: a convolution's channels pad to an even multiple, not " +
                                std::to_string(conv_channel_multiple));
  const std::set<std::string> weight_set(weights.begin(), weights.end());
  std::unordered_map<const TensorNode*, Bf16Sum> sums;
  std::map<const TensorNode*, int64_t> dims;  // per weight: the k dimension of every qualifying read, -1 if they differ
  std::unordered_map<const TensorNode*, Bf16Conv> convs;
  std::set<const TensorNode*> read_otherwise;
  for (const Tensor& t : program.computes()) {
    std::optional<Bf16Sum> sum = bf16_sum(t, weight_set);
    std::optional<Bf16Conv> conv = sum ? std::nullopt : bf16_conv(t, weight_set);
    const TensorNode* qualified = sum ? sum->weight : conv ? conv->weight : nullptr;
    if (sum || conv) {
      const int64_t dim = sum ? sum->dim : 1;
      if (sum) sums.emplace(t.get(), *sum);
      if (conv) convs.emplace(t.get(), *conv);
      auto [it, first] = dims.emplace(qualified, dim);
      if (!first && it->second != dim) it->second = -1;
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
  std::set<const TensorNode*> conv_weights;
  for (const auto& [t, conv] : convs) conv_weights.insert(conv.weight);
  Bf16Rewriter rewriter(program, sums, convs, conv_channel_multiple);
  for (const std::string& name : weights) {
    Tensor w = program.find(name);
    if (!w) continue;
    auto dim = dims.find(w.get());
    if (dim == dims.end() || dim->second < 0 || read_otherwise.count(w.get())) continue;
    Bf16Weight weight{w->name, w->shape, dim->second};
    if (conv_weights.count(w.get())) weight.padding = rewriter.padded_channels(w->shape[1]) - w->shape[1];
    rewritten[w.get()] = placeholder(w->name, weight.bf16_shape(), DType::kBFloat16);
    out.weights.push_back(weight);
  }
  for (auto it = sums.begin(); it != sums.end();)
    it = rewritten.count(it->second.weight) ? std::next(it) : sums.erase(it);
  for (auto it = convs.begin(); it != convs.end();)
    it = rewritten.count(it->second.weight) ? std::next(it) : convs.erase(it);
  rewriter.add_weights(rewritten);
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
                                  shape_to_string(w.shape) + " that the program reads");
    // Element by element in the bf16 shape: those past the f32 extent along dim are the padding's zeros.
    const std::vector<int64_t> shape = w.bf16_shape();
    HostTensor rounded(DType::kBFloat16, shape);
    int64_t inner = 1;  // elements per step of dim
    for (size_t d = size_t(w.dim) + 1; d < shape.size(); ++d) inner *= shape[d];
    for (int64_t i = 0; i < rounded.num_elements(); ++i) {
      const int64_t outer = i / (inner * shape[w.dim]), along = i / inner % shape[w.dim], rest = i % inner;
      rounded.set(i, along < w.shape[w.dim] ? f32.get((outer * w.shape[w.dim] + along) * inner + rest) : 0.0);
    }
    out[w.name] = std::move(rounded);
  }
  return out;
}

}  // namespace ingot

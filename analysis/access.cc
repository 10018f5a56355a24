#include "analysis/access.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "analysis/index_form.h"
#include "ir/affine.h"
#include "ir/functor.h"

namespace ingot {

const char* access_kind_name(AccessKind kind) {
  switch (kind) {
    case AccessKind::kIdentity: return "identity";
    case AccessKind::kBroadcast: return "broadcast";
    case AccessKind::kReduce: return "reduce";
    case AccessKind::kRemap: return "remap";
    case AccessKind::kNonAffine: return "non-affine";
    case AccessKind::kGather: return "gather";
  }
  return "?";
}

std::set<std::string> reduction_axes_along_memory(const Tensor& compute) {
  std::set<std::string> axes;
  const ReduceNode* r = compute->reduction();
  // The innermost spatial axis of more than one iteration: a row maximum kept as [rows, 1] (ONNX's keepdims, a
  // softmax's) moves along rows.
  auto innermost =
      std::find_if(compute->axes.rbegin(), compute->axes.rend(), [](const IterVar& axis) { return axis.extent > 1; });
  if (!r || innermost == compute->axes.rend()) return axes;
  const std::string last = innermost->name();
  for_each_node(compute->body, [&](const Expr& node) {
    auto* read = node.as<TensorReadNode>();
    if (!read) return;
    Expr offset = int_imm(0);
    for (size_t d = 0; d < read->indices.size(); ++d)
      offset = offset * int_imm(read->tensor->shape[d]) + read->indices[d];
    std::optional<AffineForm> form = as_affine(offset);
    if (!form) return;
    auto stride = [&](const std::string& v) {
      auto it = form->coeffs.find(v);
      return it == form->coeffs.end() ? int64_t(0) : it->second;
    };
    if (stride(last) == 0 || stride(last) == 1) return;
    for (const IterVar& k : r->axes)
      if (stride(k.name()) == 1) axes.insert(k.name());
  });
  return axes;
}

VarRanges axis_ranges(const Tensor& compute) {
  VarRanges ranges;
  for (const IterVar& axis : compute->axes) ranges[axis.name()] = IntRange{0, axis.extent - 1};
  if (const ReduceNode* r = compute->reduction())
    for (const IterVar& k : r->axes) ranges[k.name()] = IntRange{0, k.extent - 1};
  return ranges;
}

namespace {

using Box = std::vector<IntRange>;

bool reads_a_tensor(const Expr& e) {
  bool found = false;
  for_each_node(e, [&](const Expr& node) { found = found || node.kind() == ExprKind::kTensorRead; });
  return found;
}

bool is_empty(const Box& box) {
  for (const IntRange& r : box)
    if (r.lo > r.hi) return true;
  return false;
}

int64_t volume(const Box& box) {
  int64_t v = 1;
  for (const IntRange& r : box) v *= r.hi - r.lo + 1;
  return v;
}

bool contains(const Box& outer, const Box& inner) {
  for (size_t d = 0; d < outer.size(); ++d)
    if (inner[d].lo < outer[d].lo || inner[d].hi > outer[d].hi) return false;
  return true;
}

bool intersects(const Box& a, const Box& b) {
  for (size_t d = 0; d < a.size(); ++d)
    if (a[d].hi < b[d].lo || b[d].hi < a[d].lo) return false;
  return true;
}

// a and b as one box when their union is a box: equal in every dimension but one, where they overlap or touch.
bool try_merge(const Box& a, const Box& b, Box& merged) {
  int differing = -1;
  for (size_t d = 0; d < a.size(); ++d) {
    if (a[d] == b[d]) continue;
    if (differing >= 0) return false;
    differing = int(d);
  }
  if (differing < 0) {
    merged = a;
    return true;
  }
  const IntRange &x = a[differing], &y = b[differing];
  if (x.hi + 1 < y.lo || y.hi + 1 < x.lo) return false;
  merged = a;
  merged[differing] = IntRange{std::min(x.lo, y.lo), std::max(x.hi, y.hi)};
  return true;
}

Box hull(const std::vector<Box>& boxes) {
  Box h = boxes.front();
  for (const Box& b : boxes)
    for (size_t d = 0; d < h.size(); ++d) h[d] = IntRange{std::min(h[d].lo, b[d].lo), std::max(h[d].hi, b[d].hi)};
  return h;
}

// Elements in the union of boxes: exact when the boxes merge into disjoint boxes, else the bounding box's
// count (an over-estimate only for reads that overlap partly along several dimensions).
int64_t union_elements(std::vector<Box> boxes) {
  std::erase_if(boxes, is_empty);
  if (boxes.empty()) return 0;
  constexpr size_t kMaxExactBoxes = 64;  // merging is cubic in the number of read sites of one tensor
  if (boxes.size() > kMaxExactBoxes) return volume(hull(boxes));
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t a = 0; a < boxes.size() && !changed; ++a)
      for (size_t b = a + 1; b < boxes.size() && !changed; ++b) {
        Box merged;
        if (contains(boxes[a], boxes[b])) {
          merged = boxes[a];
        } else if (contains(boxes[b], boxes[a])) {
          merged = boxes[b];
        } else if (!try_merge(boxes[a], boxes[b], merged)) {
          continue;
        }
        boxes[a] = merged;
        boxes.erase(boxes.begin() + long(b));
        changed = true;
      }
  }
  int64_t total = 0;
  for (size_t a = 0; a < boxes.size(); ++a) {
    for (size_t b = a + 1; b < boxes.size(); ++b)
      if (intersects(boxes[a], boxes[b])) return volume(hull(boxes));
    total += volume(boxes[a]);
  }
  return total;
}

struct ReadSummary {
  AccessKind kind;
  Box box;
};

ReadSummary summarize_read(const Tensor& compute, const Tensor& input, const std::vector<Expr>& indices,
                           const IndexNormalizer& normalizer, const std::unordered_set<std::string>& reduce_names) {
  const std::vector<int64_t>& shape = input->shape;
  std::vector<IndexForm> forms;
  forms.reserve(indices.size());
  for (const Expr& index : indices) forms.push_back(normalizer.normalize(index));

  ReadSummary out{AccessKind::kRemap, {}};
  for (size_t d = 0; d < shape.size(); ++d) {
    std::optional<IntRange> r = normalizer.range(forms[d]);
    // An index the analysis cannot bound may touch the whole dimension; reads outside it are guarded away.
    IntRange whole{0, shape[d] - 1};
    out.box.push_back(r ? IntRange{std::max(r->lo, whole.lo), std::min(r->hi, whole.hi)} : whole);
  }

  if (std::any_of(indices.begin(), indices.end(), reads_a_tensor)) {
    out.kind = AccessKind::kGather;
    return out;
  }
  const std::vector<IterVar>& axes = compute->axes;
  bool identity = shape == compute->shape;
  for (size_t d = 0; identity && d < forms.size(); ++d) identity = forms[d].single_variable() == axes[d].name();
  if (identity) {
    out.kind = AccessKind::kIdentity;
    return out;
  }
  // The row-major offset decides: a reshape's div/mod cancel out of it, a roll's mod does not.
  IndexForm offset;
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    offset = normalizer.add(offset, normalizer.scale(forms[d], stride));
    stride *= shape[d];
  }
  if (!offset.is_affine()) {
    out.kind = AccessKind::kNonAffine;
    return out;
  }
  for (const auto& [key, entry] : offset.terms)
    if (reduce_names.count(entry.term->name)) {
      out.kind = AccessKind::kReduce;
      return out;
    }
  size_t next_axis = 0, used_axes = 0;
  bool broadcast = true;
  for (size_t d = 0; broadcast && d < forms.size(); ++d) {
    if (forms[d].is_constant() && forms[d].constant == 0 && shape[d] == 1) continue;
    std::string name = forms[d].single_variable();
    size_t a = next_axis;
    while (a < axes.size() && axes[a].name() != name) ++a;
    broadcast = a < axes.size() && axes[a].extent == shape[d];
    next_axis = a + 1;
    ++used_axes;
  }
  if (broadcast && used_axes < axes.size()) out.kind = AccessKind::kBroadcast;
  return out;
}

}  // namespace

AccessKind classify_read(const Tensor& compute, const Tensor& input, const std::vector<Expr>& indices) {
  std::unordered_set<std::string> reduce_names;
  if (const ReduceNode* r = compute->reduction())
    for (const IterVar& k : r->axes) reduce_names.insert(k.name());
  return summarize_read(compute, input, indices, IndexNormalizer(axis_ranges(compute)), reduce_names).kind;
}

std::vector<TensorAccess> analyze_accesses(const Tensor& compute) {
  std::vector<TensorAccess> accesses;
  if (compute->is_placeholder()) return accesses;
  std::unordered_set<std::string> reduce_names;
  if (const ReduceNode* r = compute->reduction())
    for (const IterVar& k : r->axes) reduce_names.insert(k.name());
  const IndexNormalizer normalizer(axis_ranges(compute));
  std::unordered_map<const TensorNode*, size_t> slot;
  std::vector<std::vector<Box>> boxes;
  for_each_node(compute->body, [&](const Expr& node) {
    auto* read = node.as<TensorReadNode>();
    if (!read) return;
    ReadSummary s = summarize_read(compute, read->tensor, read->indices, normalizer, reduce_names);
    auto [it, inserted] = slot.emplace(read->tensor.get(), accesses.size());
    if (inserted) {
      accesses.push_back(TensorAccess{read->tensor, s.kind, 0, {}, 0, 0});
      boxes.emplace_back();
    }
    TensorAccess& a = accesses[it->second];
    a.kind = std::max(a.kind, s.kind);
    ++a.reads;
    boxes[it->second].push_back(std::move(s.box));
  });
  for (size_t i = 0; i < accesses.size(); ++i) {
    TensorAccess& a = accesses[i];
    std::vector<Box> nonempty = boxes[i];
    std::erase_if(nonempty, is_empty);
    a.region = nonempty.empty() ? Box(a.tensor->shape.size(), IntRange{0, -1}) : hull(nonempty);
    a.elements = union_elements(std::move(boxes[i]));
    a.bytes = a.elements * dtype_bytes(a.tensor->dtype);
  }
  return accesses;
}

}  // namespace ingot

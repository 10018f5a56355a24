#include "interp/interpreter_plan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "interp/interpreter_kernels.h"

namespace ingot::interp {

bool LaneProgram::lane_active(int guard, int lane) const {
  if (guard < 0) return true;
  const Register& g = regs[size_t(guard)];
  return static_cast<const int64_t*>(g.data)[g.varying ? lane : 0] != 0;
}

int LaneProgram::first_active_lane(int guard) const {
  if (guard < 0) return 0;
  const Register& g = regs[size_t(guard)];
  const int64_t* v = static_cast<const int64_t*>(g.data);
  for (int l = 0; l < (g.varying ? lanes : 1); ++l)
    if (v[l]) return l;
  return -1;
}

std::string LaneProgram::describe_lane(int lane, bool with_reduce_axes) const {
  std::ostringstream os;
  size_t end = with_reduce_axes ? var_names.size() : size_t(num_spatial);
  for (size_t s = 0; s < end; ++s)
    os << (s ? ", " : "") << var_names[s] << "=" << vars[s] + (int(s) == vector_slot ? lane : 0);
  if (end == 0) os << "its only element";
  return os.str();
}

void round_lanes(DType dtype, float* values, int n) {
  if (dtype != DType::kFloat16 && dtype != DType::kBFloat16) return;
  thread_local HostTensor half(DType::kFloat16, {1});
  thread_local HostTensor brain(DType::kBFloat16, {1});
  HostTensor& scratch = dtype == DType::kFloat16 ? half : brain;
  for (int l = 0; l < n; ++l) {
    scratch.set(0, values[l]);
    values[l] = float(scratch.get(0));
  }
}

namespace {

// sum(coef * slot) + constant over the compute's axis slots.
struct Linear {
  int64_t constant = 0;
  std::map<int, int64_t> coefs;
};

class Compiler {
 public:
  // tile_slot: the innermost reduce axis when lanes are output elements of a reduction, else -1.
  Compiler(const TensorNode& compute, const TensorValues& values, LaneProgram& p, int tile_slot)
      : compute_(compute), values_(values), p_(p), tile_slot_(tile_slot) {}

  // The register holding e's value. guard: the select/&&/|| context e is evaluated in (an index into guards_).
  int emit(const Expr& e, int guard) {
    auto key = std::make_pair(e.get(), guard);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    int r = emit_uncached(e, guard);
    memo_[key] = r;
    return r;
  }

  std::vector<Instr> take_code() { return std::move(code_); }

 private:
  struct Guard {
    int parent;  // enclosing guard or -1
    int cond;    // bool register
    bool negate;
    int reg = -1;  // materialized mask, once some instruction needs it
  };

  int new_reg(DType dtype, bool varying, bool reduce_dependent) {
    Register r;
    r.dtype = dtype;
    r.varying = varying;
    r.reduce_dependent = reduce_dependent;
    size_t size = varying ? size_t(kMaxLanes) : 1;
    if (r.cls() == ValueClass::kFloat)
      r.f.assign(size, 0.0f);
    else
      r.i.assign(size, 0);
    p_.regs.push_back(std::move(r));
    return int(p_.regs.size()) - 1;
  }
  const Register& reg(int r) const { return p_.regs[size_t(r)]; }
  bool varying(int r) const { return r >= 0 && reg(r).varying; }
  bool reduce_dependent(int r) const { return r >= 0 && reg(r).reduce_dependent; }

  void push(Kernel run, int out, int a = -1, int b = -1, int c = -1) {
    Instr in;
    in.run = run;
    in.out = out;
    in.a = a;
    in.b = b;
    in.c = c;
    in.dtype = reg(out).dtype;
    code_.push_back(in);
  }

  // f16/bf16 results round and i32 results wrap after every operation, as code computing in those types does.
  void normalize(int r) {
    DType t = reg(r).dtype;
    if (t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kInt32) push(normalize_kernel(t), r, r);
  }

  int new_guard(int parent, int cond, bool negate) {
    guards_.push_back(Guard{parent, cond, negate});
    return int(guards_.size()) - 1;
  }

  int guard_register(int guard) {
    if (guard < 0) return -1;
    if (guards_[size_t(guard)].reg >= 0) return guards_[size_t(guard)].reg;
    int parent = guard_register(guards_[size_t(guard)].parent);
    Guard g = guards_[size_t(guard)];
    int out =
        new_reg(DType::kBool, varying(parent) || varying(g.cond), reduce_dependent(parent) || reduce_dependent(g.cond));
    push(mask_kernel(), out, parent, g.cond);
    code_.back().imm = g.negate;
    guards_[size_t(guard)].reg = out;
    return out;
  }

  int slot_of(const std::string& name) const {
    for (size_t s = 0; s < p_.var_names.size(); ++s)
      if (p_.var_names[s] == name) return int(s);
    throw std::invalid_argument("interpret: compute '" + compute_.name + "' uses variable '" + name +
                                "', which is not one of its axes");
  }

  std::optional<Linear> linear(const Expr& e) const {
    if (e.dtype() != DType::kInt64) return std::nullopt;
    if (const int64_t* v = as_const_int(e)) return Linear{*v, {}};
    if (auto* v = e.as<VarNode>()) return Linear{0, {{slot_of(v->name), 1}}};
    auto* b = e.as<BinaryNode>();
    if (!b || (b->op != BinaryOp::kAdd && b->op != BinaryOp::kSub && b->op != BinaryOp::kMul)) return std::nullopt;
    std::optional<Linear> x = linear(b->a), y = linear(b->b);
    if (!x || !y) return std::nullopt;
    if (b->op == BinaryOp::kMul) {
      if (!x->coefs.empty() && !y->coefs.empty()) return std::nullopt;
      if (x->coefs.empty()) std::swap(x, y);
      for (auto& [slot, coef] : x->coefs) coef *= y->constant;
      x->constant *= y->constant;
    } else {
      int64_t sign = b->op == BinaryOp::kAdd ? 1 : -1;
      for (auto& [slot, coef] : y->coefs) x->coefs[slot] += sign * coef;
      x->constant += sign * y->constant;
    }
    std::erase_if(x->coefs, [](const auto& kv) { return kv.second == 0; });
    return x;
  }

  int emit_uncached(const Expr& e, int guard) {
    switch (e.kind()) {
      case ExprKind::kIntImm: {
        int r = new_reg(e.dtype(), false, false);
        p_.regs[size_t(r)].i[0] = normalize_int(e.dtype(), e.as<IntImmNode>()->value);
        return r;
      }
      case ExprKind::kFloatImm: {
        int r = new_reg(e.dtype(), false, false);
        float v = float(e.as<FloatImmNode>()->value);
        round_lanes(e.dtype(), &v, 1);
        p_.regs[size_t(r)].f[0] = v;
        return r;
      }
      case ExprKind::kVar: {
        int slot = slot_of(e.as<VarNode>()->name);
        bool vector = slot == p_.vector_slot;
        int r = new_reg(DType::kInt64, vector, slot >= p_.num_spatial);
        push(var_kernel(vector), r);
        code_.back().imm = slot;
        return r;
      }
      case ExprKind::kBinary: return emit_binary(*e.as<BinaryNode>(), guard);
      case ExprKind::kCompare: {
        auto* n = e.as<CompareNode>();
        int a = emit(n->a, guard), b = emit(n->b, guard);
        int r = new_reg(DType::kBool, varying(a) || varying(b), reduce_dependent(a) || reduce_dependent(b));
        push(compare_kernel(n->op, reg(a).cls()), r, a, b);
        return r;
      }
      case ExprKind::kLogical: {
        // The right side is evaluated only where the left side does not decide, as && and || do in C++.
        auto* n = e.as<LogicalNode>();
        int a = emit(n->a, guard);
        int b = emit(n->b, new_guard(guard, a, n->op == LogicalOp::kOr));
        int r = new_reg(DType::kBool, varying(a) || varying(b), reduce_dependent(a) || reduce_dependent(b));
        push(logical_kernel(n->op), r, a, b);
        return r;
      }
      case ExprKind::kNot: {
        int a = emit(e.as<NotNode>()->a, guard);
        int r = new_reg(DType::kBool, varying(a), reduce_dependent(a));
        push(not_kernel(), r, a);
        return r;
      }
      case ExprKind::kSelect: {
        auto* n = e.as<SelectNode>();
        int c = emit(n->cond, guard);
        int t = emit(n->true_value, new_guard(guard, c, false));
        int f = emit(n->false_value, new_guard(guard, c, true));
        int r = new_reg(e.dtype(), varying(c) || varying(t) || varying(f),
                        reduce_dependent(c) || reduce_dependent(t) || reduce_dependent(f));
        push(select_kernel(reg(r).cls()), r, c, t, f);
        return r;
      }
      case ExprKind::kCast: {
        int a = emit(e.as<CastNode>()->value, guard);
        int r = new_reg(e.dtype(), varying(a), reduce_dependent(a));
        push(cast_kernel(reg(a).dtype, e.dtype()), r, a);
        return r;
      }
      case ExprKind::kCall: {
        auto* n = e.as<CallNode>();
        int a = emit(n->args[0], guard);
        int b = n->args.size() > 1 ? emit(n->args[1], guard) : -1;
        int r = new_reg(e.dtype(), varying(a) || varying(b), reduce_dependent(a) || reduce_dependent(b));
        if (n->func == MathFunc::kPow)
          push(pow_kernel(varying(a), varying(b)), r, a, b);
        else
          push(math_kernel(n->func, reg(a).cls()), r, a);
        normalize(r);
        return r;
      }
      case ExprKind::kTensorRead: return emit_read(*e.as<TensorReadNode>(), guard);
      case ExprKind::kBufferLoad:
        throw std::invalid_argument("interpret: compute '" + compute_.name + "' contains a buffer load (" +
                                    to_string(e) + "), which belongs to the loop IR");
      case ExprKind::kReduce:
        throw std::invalid_argument("interpret: compute '" + compute_.name +
                                    "' has a reduction that is not its whole body");
    }
    throw std::logic_error("interpret: unknown expression kind");
  }

  int emit_binary(const BinaryNode& n, int guard) {
    int a = emit(n.a, guard), b = emit(n.b, guard);
    bool v = varying(a) || varying(b);
    bool rd = reduce_dependent(a) || reduce_dependent(b);
    ValueClass cls = reg(a).cls();
    if (cls == ValueClass::kInt && (n.op == BinaryOp::kDiv || n.op == BinaryOp::kMod)) {
      // Only a divisor that may be zero needs to know which lanes are used.
      const int64_t* divisor = as_const_int(n.b);
      int g = divisor && *divisor != 0 ? -1 : guard_register(guard);
      int r = new_reg(n.dtype, v, rd || reduce_dependent(g));
      push(int_division_kernel(n.op), r, a, b);
      code_.back().guard = g;
      normalize(r);
      return r;
    }
    int r = new_reg(n.dtype, v, rd);
    push(binary_kernel(n.op, cls, varying(a), varying(b)), r, a, b);
    if (n.op != BinaryOp::kMin && n.op != BinaryOp::kMax) normalize(r);
    return r;
  }

  int emit_read(const TensorReadNode& n, int guard) {
    auto found = values_.find(n.tensor.get());
    if (found == values_.end())
      throw std::logic_error("interpret: compute '" + compute_.name + "' reads '" + n.tensor->name +
                             "' before it has a value");
    auto site = std::make_unique<ReadSite>();
    ReadSite& s = *site;
    s.tensor_name = n.tensor->name;
    s.shape = n.tensor->shape;
    s.strides.assign(s.shape.size(), 1);
    for (size_t d = s.shape.size(); d-- > 1;) s.strides[d - 1] = s.strides[d] * s.shape[d];
    s.dtype = n.tensor->dtype;
    s.tensor = found->second;
    s.data = static_cast<const uint8_t*>(s.tensor->data());

    std::vector<Linear> forms;
    for (const Expr& index : n.indices) {
      std::optional<Linear> form = linear(index);
      if (!form) break;
      forms.push_back(std::move(*form));
    }
    s.affine = forms.size() == n.indices.size();

    bool v = false, rd = false, needs_guard = false;
    if (s.affine) {
      std::map<int, int64_t> flat;
      for (size_t d = 0; d < forms.size(); ++d) {
        ReadSite::AffineDim dim;
        dim.constant = forms[d].constant;
        int64_t lo = dim.constant, hi = dim.constant;
        for (auto [slot, coef] : forms[d].coefs) {
          dim.terms.push_back({slot, coef});
          if (slot == p_.vector_slot) dim.vector_coef = coef;
          int64_t last = coef * (p_.var_extents[size_t(slot)] - 1);
          lo += std::min<int64_t>(0, last);
          hi += std::max<int64_t>(0, last);
          flat[slot] += coef * s.strides[d];
          rd = rd || slot >= p_.num_spatial;
        }
        dim.needs_check = lo < 0 || hi >= s.shape[d];
        needs_guard = needs_guard || dim.needs_check;
        v = v || dim.vector_coef != 0;
        s.flat_constant += dim.constant * s.strides[d];
        s.flat_step += dim.vector_coef * s.strides[d];
        s.dims.push_back(std::move(dim));
      }
      for (auto [slot, coef] : flat)
        if (coef != 0) s.flat_terms.push_back({slot, coef});
      if (tile_slot_ >= 0 && s.dtype == DType::kFloat32 && v && !needs_guard && s.flat_step != 1 &&
          flat.count(tile_slot_) && flat[tile_slot_] == 1)
        s.tile_slot = tile_slot_;
    } else {
      for (const Expr& index : n.indices) {
        int r = emit(index, guard);
        s.index_registers.push_back(r);
        v = v || varying(r);
        rd = rd || reduce_dependent(r);
      }
      needs_guard = true;
    }
    int g = needs_guard ? guard_register(guard) : -1;
    int r = new_reg(n.dtype, v, rd || reduce_dependent(g));
    push(read_kernel(s), r);
    code_.back().guard = g;
    code_.back().site = site.get();
    p_.sites.push_back(std::move(site));
    return r;
  }

  const TensorNode& compute_;
  const TensorValues& values_;
  LaneProgram& p_;
  const int tile_slot_;
  std::map<std::pair<const ExprNode*, int>, int> memo_;
  std::vector<Guard> guards_;
  std::vector<Instr> code_;
};

}  // namespace

int choose_vector_slot(const TensorNode& compute) {
  const std::vector<int64_t>& shape = compute.shape;
  int best = -1;
  if (!shape.empty()) {
    best = int(shape.size()) - 1;
    if (shape[size_t(best)] < 64)
      for (int d = best - 1; d >= 0; --d)
        if (shape[size_t(d)] > shape[size_t(best)]) best = d;
  }
  if (const ReduceNode* r = compute.reduction()) {
    int64_t spatial = best >= 0 ? shape[size_t(best)] : 1;
    int64_t inner = r->axes.back().extent;
    if (best < 0 || (inner > spatial && spatial < 64)) return int(shape.size() + r->axes.size()) - 1;
  }
  return best;
}

LaneProgram compile_compute(const TensorNode& compute, int vector_slot, const TensorValues& values) {
  LaneProgram p;
  p.compute_name = compute.name;
  for (const IterVar& axis : compute.axes) {
    p.var_names.push_back(axis.name());
    p.var_extents.push_back(axis.extent);
  }
  p.num_spatial = int(compute.axes.size());
  const ReduceNode* reduction = compute.reduction();
  if (reduction)
    for (const IterVar& axis : reduction->axes) {
      p.var_names.push_back(axis.name());
      p.var_extents.push_back(axis.extent);
    }
  p.vector_slot = vector_slot;
  p.vars.assign(p.var_names.size(), 0);

  bool reduce_over_outputs = reduction && vector_slot >= 0 && vector_slot < p.num_spatial;
  Compiler compiler(compute, values, p, reduce_over_outputs ? int(p.var_names.size()) - 1 : -1);
  const Expr& source = reduction ? reduction->source : compute.body;
  auto* product = source.as<BinaryNode>();
  if (reduction && reduction->op == ReduceOp::kSum && source.dtype() == DType::kFloat32 && product &&
      product->op == BinaryOp::kMul) {
    p.product_a = compiler.emit(product->a, -1);
    p.product_b = compiler.emit(product->b, -1);
  } else {
    p.result = compiler.emit(source, -1);
  }
  for (Instr& in : compiler.take_code()) (p.regs[size_t(in.out)].reduce_dependent ? p.inner : p.pre).push_back(in);
  for (Register& r : p.regs) r.data = r.cls() == ValueClass::kFloat ? static_cast<const void*>(r.f.data()) : r.i.data();
  return p;
}

}  // namespace ingot::interp

#include "interp/interpreter_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <type_traits>

namespace ingot::interp {

namespace {

// 0 for a uniform register, 1 for a varying one: lane l of register r is at l * stride.
int stride_of(const LaneProgram& p, int r) { return p.regs[r].varying ? 1 : 0; }

// ---- scalar semantics (what generated C++ computes) ----

int64_t wrap_add(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
int64_t wrap_sub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
int64_t wrap_mul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }

// Floor division and modulo; b != 0. b == -1 is separate so that INT64_MIN / -1 wraps instead of trapping.
int64_t floor_div(int64_t a, int64_t b) {
  if (b == -1) return wrap_sub(0, a);
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t floor_mod(int64_t a, int64_t b) {
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// Truncation toward zero, saturating where C++ would be undefined (NaN gives 0).
int64_t float_to_int(float v, int64_t lo, int64_t hi) {
  if (std::isnan(v)) return 0;
  if (v <= float(lo)) return lo;
  if (v >= float(hi)) return hi;
  return int64_t(v);
}

struct AddOp {
  static float apply(float a, float b) { return a + b; }
  static int64_t apply(int64_t a, int64_t b) { return wrap_add(a, b); }
};
struct SubOp {
  static float apply(float a, float b) { return a - b; }
  static int64_t apply(int64_t a, int64_t b) { return wrap_sub(a, b); }
};
struct MulOp {
  static float apply(float a, float b) { return a * b; }
  static int64_t apply(int64_t a, int64_t b) { return wrap_mul(a, b); }
};
struct DivOp {
  static float apply(float a, float b) { return a / b; }
};
struct MinOp {
  template <class T>
  static T apply(T a, T b) {
    return std::min(a, b);
  }
};
struct MaxOp {
  template <class T>
  static T apply(T a, T b) {
    return std::max(a, b);
  }
};
struct PowOp {
  static float apply(float a, float b) { return powf(a, b); }
};

struct LtOp {
  template <class T>
  static bool apply(T a, T b) {
    return a < b;
  }
};
struct LeOp {
  template <class T>
  static bool apply(T a, T b) {
    return a <= b;
  }
};
struct GtOp {
  template <class T>
  static bool apply(T a, T b) {
    return a > b;
  }
};
struct GeOp {
  template <class T>
  static bool apply(T a, T b) {
    return a >= b;
  }
};
struct EqOp {
  template <class T>
  static bool apply(T a, T b) {
    return a == b;
  }
};
struct NeOp {
  template <class T>
  static bool apply(T a, T b) {
    return a != b;
  }
};

struct ExpOp {
  static float apply(float x) { return expf(x); }
};
struct LogOp {
  static float apply(float x) { return logf(x); }
};
struct TanhOp {
  static float apply(float x) { return tanhf(x); }
};
struct SigmoidOp {
  static float apply(float x) { return 1.0f / (1.0f + expf(-x)); }
};
struct SqrtOp {
  static float apply(float x) { return sqrtf(x); }
};
struct RsqrtOp {
  static float apply(float x) { return 1.0f / sqrtf(x); }
};
struct ErfOp {
  static float apply(float x) { return erff(x); }
};
struct AbsOp {
  static float apply(float x) { return fabsf(x); }
  static int64_t apply(int64_t x) { return x < 0 ? wrap_sub(0, x) : x; }
};

template <class T>
T* out_ptr(LaneProgram& p, int r) {
  if constexpr (std::is_same_v<T, float>)
    return p.fout(r);
  else
    return p.iout(r);
}

// ---- kernels ----

template <bool kVector>
void var_run(const Instr& in, LaneProgram& p) {
  int64_t* __restrict o = p.iout(in.out);
  const int64_t first = p.vars[size_t(in.imm)];
  if (kVector) {
    for (int l = 0; l < p.lanes; ++l) o[l] = first + l;
  } else {
    o[0] = first;
  }
}

template <class T, class Op, bool AV, bool BV>
void binary_run(const Instr& in, LaneProgram& p) {
  const T* __restrict a = p.in<T>(in.a);
  const T* __restrict b = p.in<T>(in.b);
  T* __restrict o = out_ptr<T>(p, in.out);
  const int n = (AV || BV) ? p.lanes : 1;
  for_lanes(n, [=](int l) { o[l] = Op::apply(a[AV ? l : 0], b[BV ? l : 0]); });
}

template <class T, class Op>
Kernel pick_binary(bool av, bool bv) {
  if (av && bv) return binary_run<T, Op, true, true>;
  if (av) return binary_run<T, Op, true, false>;
  if (bv) return binary_run<T, Op, false, true>;
  return binary_run<T, Op, false, false>;
}

template <bool kMod>
void int_division_run(const Instr& in, LaneProgram& p) {
  const int64_t* a = p.in<int64_t>(in.a);
  const int64_t* b = p.in<int64_t>(in.b);
  const int sa = stride_of(p, in.a), sb = stride_of(p, in.b);
  const bool varying = p.regs[in.out].varying;
  const int n = p.count(in.out);
  int64_t* o = p.iout(in.out);
  for (int l = 0; l < n; ++l) {
    int64_t x = a[l * sa], y = b[l * sb];
    if (y != 0) {
      o[l] = kMod ? floor_mod(x, y) : floor_div(x, y);
      continue;
    }
    int lane = varying ? (p.lane_active(in.guard, l) ? l : -1) : p.first_active_lane(in.guard);
    if (lane >= 0)
      throw std::invalid_argument("interpret: compute '" + p.compute_name + "' " +
                                  (kMod ? "takes % by" : "divides by") + " zero (at " +
                                  p.describe_lane(lane, p.regs[in.out].reduce_dependent) + ")");
    o[l] = 0;
  }
}

template <class T, class Op>
void compare_run(const Instr& in, LaneProgram& p) {
  const T* a = p.in<T>(in.a);
  const T* b = p.in<T>(in.b);
  const int sa = stride_of(p, in.a), sb = stride_of(p, in.b);
  const int n = p.count(in.out);
  int64_t* __restrict o = p.iout(in.out);
  for (int l = 0; l < n; ++l) o[l] = Op::apply(a[l * sa], b[l * sb]);
}

template <class Op>
Kernel pick_compare(ValueClass cls) {
  return cls == ValueClass::kFloat ? compare_run<float, Op> : compare_run<int64_t, Op>;
}

template <bool kAnd>
void logical_run(const Instr& in, LaneProgram& p) {
  const int64_t* a = p.in<int64_t>(in.a);
  const int64_t* b = p.in<int64_t>(in.b);
  const int sa = stride_of(p, in.a), sb = stride_of(p, in.b);
  const int n = p.count(in.out);
  int64_t* __restrict o = p.iout(in.out);
  for (int l = 0; l < n; ++l) o[l] = kAnd ? (a[l * sa] != 0 && b[l * sb] != 0) : (a[l * sa] != 0 || b[l * sb] != 0);
}

void not_run(const Instr& in, LaneProgram& p) {
  const int64_t* a = p.in<int64_t>(in.a);
  const int n = p.count(in.out);
  int64_t* __restrict o = p.iout(in.out);
  for (int l = 0; l < n; ++l) o[l] = a[l] == 0;
}

void mask_run(const Instr& in, LaneProgram& p) {
  const int64_t* cond = p.in<int64_t>(in.b);
  const int sc = stride_of(p, in.b);
  const bool negate = in.imm != 0;
  const int n = p.count(in.out);
  int64_t* __restrict o = p.iout(in.out);
  if (in.a < 0) {
    for (int l = 0; l < n; ++l) o[l] = (cond[l * sc] != 0) != negate;
  } else {
    const int64_t* parent = p.in<int64_t>(in.a);
    const int sp = stride_of(p, in.a);
    for (int l = 0; l < n; ++l) o[l] = parent[l * sp] != 0 && (cond[l * sc] != 0) != negate;
  }
}

template <class T>
void select_run(const Instr& in, LaneProgram& p) {
  const int64_t* c = p.in<int64_t>(in.a);
  const T* t = p.in<T>(in.b);
  const T* f = p.in<T>(in.c);
  const int sc = stride_of(p, in.a), st = stride_of(p, in.b), sf = stride_of(p, in.c);
  const int n = p.count(in.out);
  T* __restrict o = out_ptr<T>(p, in.out);
  if (sc && st && sf)
    for_lanes(n, [=](int l) { o[l] = c[l] ? t[l] : f[l]; });
  else
    for (int l = 0; l < n; ++l) o[l] = c[l * sc] ? t[l * st] : f[l * sf];
}

template <ValueClass kFrom, ValueClass kTo>
void cast_run(const Instr& in, LaneProgram& p) {
  const int n = p.count(in.out);
  const DType to = in.dtype;
  if constexpr (kFrom == ValueClass::kFloat && kTo == ValueClass::kFloat) {
    const float* a = p.in<float>(in.a);
    float* o = p.fout(in.out);
    std::copy(a, a + n, o);
    round_lanes(to, o, n);
  } else if constexpr (kFrom == ValueClass::kFloat) {
    const float* a = p.in<float>(in.a);
    int64_t* o = p.iout(in.out);
    if (to == DType::kBool) {
      for (int l = 0; l < n; ++l) o[l] = a[l] != 0.0f;
    } else if (to == DType::kInt32) {
      for (int l = 0; l < n; ++l)
        o[l] = float_to_int(a[l], std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
    } else {
      for (int l = 0; l < n; ++l)
        o[l] = float_to_int(a[l], std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
    }
  } else if constexpr (kTo == ValueClass::kFloat) {
    const int64_t* a = p.in<int64_t>(in.a);
    float* o = p.fout(in.out);
    for (int l = 0; l < n; ++l) o[l] = float(a[l]);
    round_lanes(to, o, n);
  } else {
    const int64_t* a = p.in<int64_t>(in.a);
    int64_t* o = p.iout(in.out);
    for (int l = 0; l < n; ++l) o[l] = normalize_int(to, a[l]);
  }
}

template <class T, class Op>
void unary_math_run(const Instr& in, LaneProgram& p) {
  const T* __restrict a = p.in<T>(in.a);
  T* __restrict o = out_ptr<T>(p, in.out);
  const int n = p.count(in.out);
  for (int l = 0; l < n; ++l) o[l] = Op::apply(a[l]);
}

void normalize_float_run(const Instr& in, LaneProgram& p) {
  const float* a = p.in<float>(in.out);
  float* o = p.regs[in.out].f.data();
  const int n = p.count(in.out);
  if (a != o) std::copy(a, a + n, o);
  p.regs[in.out].data = o;
  round_lanes(in.dtype, o, n);
}

void normalize_int_run(const Instr& in, LaneProgram& p) {
  const int64_t* a = p.in<int64_t>(in.out);
  int64_t* o = p.regs[in.out].i.data();
  const int n = p.count(in.out);
  for (int l = 0; l < n; ++l) o[l] = normalize_int(in.dtype, a[l]);
  p.regs[in.out].data = o;
}

// ---- tensor reads ----

float load_float(const ReadSite& s, int64_t flat) {
  if (s.dtype == DType::kFloat32) return reinterpret_cast<const float*>(s.data)[flat];
  return float(s.tensor->get(flat));
}

int64_t load_int(const ReadSite& s, int64_t flat) {
  switch (s.dtype) {
    case DType::kInt64: return reinterpret_cast<const int64_t*>(s.data)[flat];
    case DType::kInt32: return reinterpret_cast<const int32_t*>(s.data)[flat];
    case DType::kBool: return s.data[flat] != 0;
    default: return int64_t(s.tensor->get(flat));
  }
}

// Lanes [0, n) at flat offsets base + step * l, all known to be in bounds.
void gather(const ReadSite& s, LaneProgram& p, int out, int64_t base, int64_t step, int n) {
  Register& r = p.regs[out];
  switch (s.dtype) {
    case DType::kFloat32: {
      const float* src = reinterpret_cast<const float*>(s.data) + base;
      if (n == 1 || step == 1) {
        r.data = src;
        return;
      }
      float* __restrict o = p.fout(out);
      for (int l = 0; l < n; ++l) o[l] = src[l * step];
      return;
    }
    case DType::kInt64: {
      const int64_t* src = reinterpret_cast<const int64_t*>(s.data) + base;
      if (n == 1 || step == 1) {
        r.data = src;
        return;
      }
      int64_t* __restrict o = p.iout(out);
      for (int l = 0; l < n; ++l) o[l] = src[l * step];
      return;
    }
    case DType::kInt32: {
      const int32_t* src = reinterpret_cast<const int32_t*>(s.data) + base;
      int64_t* __restrict o = p.iout(out);
      for (int l = 0; l < n; ++l) o[l] = src[l * step];
      return;
    }
    case DType::kBool: {
      const uint8_t* src = s.data + base;
      int64_t* __restrict o = p.iout(out);
      for (int l = 0; l < n; ++l) o[l] = src[l * step] != 0;
      return;
    }
    case DType::kFloat16:
    case DType::kBFloat16: {
      float* o = p.fout(out);
      for (int l = 0; l < n; ++l) o[l] = float(s.tensor->get(base + l * step));
      return;
    }
  }
}

std::string join(const std::vector<int64_t>& v) {
  std::ostringstream os;
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  return os.str();
}

// Called with the lanes' indices when some index is outside the tensor: an error if the lane is used, else
// the lane reads 0 (it is the unchosen branch of a select, as padding is written).
void out_of_bounds(const Instr& in, const LaneProgram& p, const std::vector<int64_t>& index, int lane) {
  bool varying = p.regs[in.out].varying;
  int used = varying ? (p.lane_active(in.guard, lane) ? lane : -1) : p.first_active_lane(in.guard);
  if (used < 0) return;
  const ReadSite& s = *in.site;
  throw std::invalid_argument("interpret: compute '" + p.compute_name + "' reads '" + s.tensor_name + "' at [" +
                              join(index) + "], outside its shape [" + join(s.shape) + "] (at " +
                              p.describe_lane(used, p.regs[in.out].reduce_dependent) + ")");
}

void store_lane(const ReadSite& s, LaneProgram& p, int out, int lane, bool in_bounds, int64_t flat) {
  Register& r = p.regs[out];
  if (r.cls() == ValueClass::kFloat) {
    r.f[size_t(lane)] = in_bounds ? load_float(s, flat) : 0.0f;
    r.data = r.f.data();
  } else {
    r.i[size_t(lane)] = in_bounds ? load_int(s, flat) : 0;
    r.data = r.i.data();
  }
}

// Lane by lane, for a batch in which some lane's index leaves the tensor.
void affine_read_checked(const Instr& in, LaneProgram& p) {
  const ReadSite& s = *in.site;
  const int n = p.count(in.out);
  std::vector<int64_t> index(s.dims.size());
  for (int l = 0; l < n; ++l) {
    bool in_bounds = true;
    int64_t flat = 0;
    for (size_t d = 0; d < s.dims.size(); ++d) {
      int64_t v = s.dims[d].constant + s.dims[d].vector_coef * l;
      for (const ReadSite::Term& t : s.dims[d].terms) v += t.coef * p.vars[size_t(t.slot)];
      index[d] = v;
      if (v < 0 || v >= s.shape[d]) in_bounds = false;
      flat += v * s.strides[d];
    }
    if (!in_bounds) out_of_bounds(in, p, index, l);
    store_lane(s, p, in.out, l, in_bounds, flat);
  }
}

// Lanes [0, n) of a tiled read (all in bounds) at flat offsets base + flat_step * l.
void tiled_read(ReadSite& s, LaneProgram& p, int out, int64_t base, int n) {
  const int64_t step = p.vars[size_t(s.tile_slot)];
  int64_t row = step - s.tile_first;
  if (s.tile_lanes != n || row < 0 || row >= s.tile_rows || base != s.tile_base + row) {
    int rows = int(std::min<int64_t>(ReadSite::kTileRows, p.var_extents[size_t(s.tile_slot)] - step));
    if (s.tile.empty()) s.tile.resize(size_t(ReadSite::kTileRows) * kMaxLanes);
    const float* src = reinterpret_cast<const float*>(s.data) + base;
    float* tile = s.tile.data();
    for (int l = 0; l < n; ++l) {
      const float* lane = src + l * s.flat_step;
      // The lanes' rows are far apart, so the hardware prefetcher does not see them coming.
      __builtin_prefetch(lane + 8 * s.flat_step);
      __builtin_prefetch(lane + 8 * s.flat_step + ReadSite::kTileRows - 1);
      for (int r = 0; r < rows; ++r) tile[r * kMaxLanes + l] = lane[r];
    }
    s.tile_base = base;
    s.tile_first = step;
    s.tile_rows = rows;
    s.tile_lanes = n;
    row = 0;
  }
  p.regs[size_t(out)].data = s.tile.data() + row * kMaxLanes;
}

void affine_read_run(const Instr& in, LaneProgram& p) {
  ReadSite& s = *in.site;
  const int n = p.count(in.out);
  for (const ReadSite::AffineDim& d : s.dims) {
    if (!d.needs_check) continue;
    int64_t first = d.constant;
    for (const ReadSite::Term& t : d.terms) first += t.coef * p.vars[size_t(t.slot)];
    int64_t last = first + d.vector_coef * (n - 1);
    if (std::min(first, last) < 0 || std::max(first, last) >= s.shape[size_t(&d - s.dims.data())]) {
      affine_read_checked(in, p);
      return;
    }
  }
  int64_t base = s.flat_constant;
  for (const ReadSite::Term& t : s.flat_terms) base += t.coef * p.vars[size_t(t.slot)];
  if (s.tile_slot >= 0)
    tiled_read(s, p, in.out, base, n);
  else
    gather(s, p, in.out, base, s.flat_step, n);
}

void general_read_run(const Instr& in, LaneProgram& p) {
  const ReadSite& s = *in.site;
  const int n = p.count(in.out);
  const size_t rank = s.index_registers.size();
  std::vector<int64_t> index(rank);
  for (int l = 0; l < n; ++l) {
    bool in_bounds = true;
    int64_t flat = 0;
    for (size_t d = 0; d < rank; ++d) {
      int r = s.index_registers[d];
      int64_t v = p.in<int64_t>(r)[l * stride_of(p, r)];
      index[d] = v;
      if (v < 0 || v >= s.shape[d]) in_bounds = false;
      flat += v * s.strides[d];
    }
    if (!in_bounds) out_of_bounds(in, p, index, l);
    store_lane(s, p, in.out, l, in_bounds, flat);
  }
}

}  // namespace

Kernel var_kernel(bool vector) { return vector ? var_run<true> : var_run<false>; }

Kernel binary_kernel(BinaryOp op, ValueClass cls, bool av, bool bv) {
  bool is_f = cls == ValueClass::kFloat;
  switch (op) {
    case BinaryOp::kAdd: return is_f ? pick_binary<float, AddOp>(av, bv) : pick_binary<int64_t, AddOp>(av, bv);
    case BinaryOp::kSub: return is_f ? pick_binary<float, SubOp>(av, bv) : pick_binary<int64_t, SubOp>(av, bv);
    case BinaryOp::kMul: return is_f ? pick_binary<float, MulOp>(av, bv) : pick_binary<int64_t, MulOp>(av, bv);
    case BinaryOp::kMin: return is_f ? pick_binary<float, MinOp>(av, bv) : pick_binary<int64_t, MinOp>(av, bv);
    case BinaryOp::kMax: return is_f ? pick_binary<float, MaxOp>(av, bv) : pick_binary<int64_t, MaxOp>(av, bv);
    case BinaryOp::kDiv:
      if (is_f) return pick_binary<float, DivOp>(av, bv);
      return int_division_kernel(op);
    case BinaryOp::kMod:
      if (is_f) throw std::invalid_argument("interpret: % on floating-point values");
      return int_division_kernel(op);
  }
  throw std::logic_error("interpret: unknown binary operator");
}

Kernel int_division_kernel(BinaryOp op) {
  return op == BinaryOp::kMod ? int_division_run<true> : int_division_run<false>;
}

Kernel compare_kernel(CompareOp op, ValueClass cls) {
  switch (op) {
    case CompareOp::kLT: return pick_compare<LtOp>(cls);
    case CompareOp::kLE: return pick_compare<LeOp>(cls);
    case CompareOp::kGT: return pick_compare<GtOp>(cls);
    case CompareOp::kGE: return pick_compare<GeOp>(cls);
    case CompareOp::kEQ: return pick_compare<EqOp>(cls);
    case CompareOp::kNE: return pick_compare<NeOp>(cls);
  }
  throw std::logic_error("interpret: unknown comparison");
}

Kernel logical_kernel(LogicalOp op) { return op == LogicalOp::kAnd ? logical_run<true> : logical_run<false>; }
Kernel not_kernel() { return not_run; }
Kernel mask_kernel() { return mask_run; }
Kernel select_kernel(ValueClass cls) { return cls == ValueClass::kFloat ? select_run<float> : select_run<int64_t>; }

Kernel cast_kernel(DType from, DType to) {
  bool ff = is_float(from), tf = is_float(to);
  if (ff && tf) return cast_run<ValueClass::kFloat, ValueClass::kFloat>;
  if (ff) return cast_run<ValueClass::kFloat, ValueClass::kInt>;
  if (tf) return cast_run<ValueClass::kInt, ValueClass::kFloat>;
  return cast_run<ValueClass::kInt, ValueClass::kInt>;
}

Kernel math_kernel(MathFunc func, ValueClass cls) {
  if (func == MathFunc::kAbs)
    return cls == ValueClass::kFloat ? unary_math_run<float, AbsOp> : unary_math_run<int64_t, AbsOp>;
  switch (func) {
    case MathFunc::kExp: return unary_math_run<float, ExpOp>;
    case MathFunc::kLog: return unary_math_run<float, LogOp>;
    case MathFunc::kTanh: return unary_math_run<float, TanhOp>;
    case MathFunc::kSigmoid: return unary_math_run<float, SigmoidOp>;
    case MathFunc::kSqrt: return unary_math_run<float, SqrtOp>;
    case MathFunc::kRsqrt: return unary_math_run<float, RsqrtOp>;
    case MathFunc::kErf: return unary_math_run<float, ErfOp>;
    case MathFunc::kPow: break;  // binary: see pow_kernel
    case MathFunc::kAbs: break;
  }
  throw std::logic_error("interpret: math_kernel called for a binary function");
}

Kernel pow_kernel(bool av, bool bv) { return pick_binary<float, PowOp>(av, bv); }

Kernel normalize_kernel(DType dtype) { return is_float(dtype) ? normalize_float_run : normalize_int_run; }

Kernel read_kernel(const ReadSite& site) { return site.affine ? affine_read_run : general_read_run; }

}  // namespace ingot::interp

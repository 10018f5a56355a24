#include "interp/interpreter.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "interp/interpreter_plan.h"

namespace ingot {

namespace {

using interp::Instr;
using interp::kMaxLanes;
using interp::LaneProgram;
using interp::ValueClass;

std::string describe(DType dtype, const std::vector<int64_t>& shape) {
  std::ostringstream os;
  os << dtype_name(dtype) << "[";
  for (size_t d = 0; d < shape.size(); ++d) os << (d ? ", " : "") << shape[d];
  os << "]";
  return os.str();
}

void run(const std::vector<Instr>& code, LaneProgram& p) {
  for (const Instr& in : code) in.run(in, p);
}

// Advances slots [first, last) of vars row-major (the last slot fastest), leaving `skip` alone; false once every
// combination has been visited (the slots are then back at 0).
bool advance(std::vector<int64_t>& vars, const std::vector<int64_t>& extents, int first, int last, int skip) {
  for (int s = last - 1; s >= first; --s) {
    if (s == skip) continue;
    if (++vars[size_t(s)] < extents[size_t(s)]) return true;
    vars[size_t(s)] = 0;
  }
  return false;
}

// Sets slots [0, spatial) but `skip` to their combination number `row` in advance()'s order.
void seek(std::vector<int64_t>& vars, const std::vector<int64_t>& extents, int spatial, int skip, int64_t row) {
  for (int s = spatial - 1; s >= 0; --s) {
    if (s == skip) continue;
    vars[size_t(s)] = row % extents[size_t(s)];
    row /= extents[size_t(s)];
  }
}

int64_t wrap_add(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }

// Writes lanes [0, n) of values (stride 0 broadcasts one value) to out at base + step * lane.
void store(HostTensor& out, int64_t base, int64_t step, const float* values, int stride, int n) {
  if (out.dtype() == DType::kFloat32) {
    float* __restrict o = out.f32() + base;
    if (step == 1 && stride == 1)
      interp::for_lanes(n, [=](int l) { o[l] = values[l]; });
    else
      for (int l = 0; l < n; ++l) o[l * step] = values[l * stride];
  } else {
    for (int l = 0; l < n; ++l) out.set(base + l * step, values[l * stride]);
  }
}
void store(HostTensor& out, int64_t base, int64_t step, const int64_t* values, int stride, int n) {
  if (out.dtype() == DType::kInt64) {
    int64_t* o = out.i64() + base;
    for (int l = 0; l < n; ++l) o[l * step] = values[l * stride];
  } else {
    for (int l = 0; l < n; ++l) out.set(base + l * step, double(values[l * stride]));
  }
}

// Kept out of line: inlined into the driver loops, the pointers would lose __restrict and the loop its SIMD. Acc is
// float, or double for wide sums (the product is then exact).
template <class Acc, bool AV, bool BV>
[[gnu::noinline]] void accumulate_products(Acc* __restrict acc, const float* __restrict a, const float* __restrict b,
                                           int n) {
  if constexpr (AV && BV) {
    interp::for_lanes(n, [=](int l) { acc[l] += Acc(a[l]) * b[l]; });
  } else {
    const float x = a[0], y = b[0];
    interp::for_lanes(n, [=](int l) { acc[l] += Acc(AV ? a[l] : x) * (BV ? b[l] : y); });
  }
}
template <class Acc>
void accumulate_products(Acc* acc, const LaneProgram& p, int n) {
  const float* a = p.in<float>(p.product_a);
  const float* b = p.in<float>(p.product_b);
  bool av = p.regs[size_t(p.product_a)].varying, bv = p.regs[size_t(p.product_b)].varying;
  if (av && bv)
    accumulate_products<Acc, true, true>(acc, a, b, n);
  else if (av)
    accumulate_products<Acc, true, false>(acc, a, b, n);
  else if (bv)
    accumulate_products<Acc, false, true>(acc, a, b, n);
  else
    accumulate_products<Acc, false, false>(acc, a, b, n);
}
// Folds lanes [0, n) of a product (stride 0 for a uniform operand) or of a value into acc, in lane order.
template <class Acc>
Acc fold_products(Acc acc, const float* a, int sa, const float* b, int sb, int n) {
  for (int l = 0; l < n; ++l) acc += Acc(a[l * sa]) * b[l * sb];
  return acc;
}

template <class A, class T, class Op>
[[gnu::noinline]] void accumulate_lanes(A* __restrict acc, const T* __restrict s, bool varying, int n, Op op) {
  if (varying) {
    interp::for_lanes(n, [=](int l) { acc[l] = op(acc[l], s[l]); });
  } else {
    const T v = s[0];
    interp::for_lanes(n, [=](int l) { acc[l] = op(acc[l], v); });
  }
}

// The running values of a reduction, in the reduction's dtype: one per lane when the lanes are output
// elements, or a single one folded over the lanes in order when the lanes are reduce steps. An f32 sum is kept in
// double instead when the interpretation asks for wide sums.
class Accumulator {
 public:
  Accumulator(ReduceOp op, DType dtype, bool wide_sums)
      : op_(op), dtype_(dtype), wide_(wide_sums && op == ReduceOp::kSum && dtype == DType::kFloat32) {}

  void reset(int n) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    float fv = float(op_ == ReduceOp::kSum ? 0.0 : op_ == ReduceOp::kMax ? -inf : inf);
    int64_t iv = op_ == ReduceOp::kSum   ? 0
                 : op_ == ReduceOp::kMax ? std::numeric_limits<int64_t>::min()
                                         : std::numeric_limits<int64_t>::max();
    std::fill(f_, f_ + n, fv);
    std::fill(d_, d_ + n, 0.0);
    std::fill(i_, i_ + n, iv);
  }

  // Lane l of the source joins accumulator l.
  void add_lanes(const LaneProgram& p, int n) {
    if (p.product_a >= 0) {
      if (wide_)
        accumulate_products(d_, p, n);
      else
        accumulate_products(f_, p, n);
      return;
    }
    bool varying = p.regs[size_t(p.result)].varying;
    if (wide_) {
      accumulate_lanes(d_, p.in<float>(p.result), varying, n, [](double x, float y) { return x + y; });
    } else if (is_float(dtype_)) {
      const float* s = p.in<float>(p.result);
      switch (op_) {
        case ReduceOp::kSum: accumulate_lanes(f_, s, varying, n, [](float x, float y) { return x + y; }); break;
        case ReduceOp::kMax:
          accumulate_lanes(f_, s, varying, n, [](float x, float y) { return std::max(x, y); });
          break;
        case ReduceOp::kMin:
          accumulate_lanes(f_, s, varying, n, [](float x, float y) { return std::min(x, y); });
          break;
      }
      interp::round_lanes(dtype_, f_, n);
    } else {
      const int64_t* s = p.in<int64_t>(p.result);
      switch (op_) {
        case ReduceOp::kSum: accumulate_lanes(i_, s, varying, n, wrap_add); break;
        case ReduceOp::kMax:
          accumulate_lanes(i_, s, varying, n, [](int64_t x, int64_t y) { return std::max(x, y); });
          break;
        case ReduceOp::kMin:
          accumulate_lanes(i_, s, varying, n, [](int64_t x, int64_t y) { return std::min(x, y); });
          break;
      }
      if (dtype_ != DType::kInt64)
        for (int l = 0; l < n; ++l) i_[l] = interp::normalize_int(dtype_, i_[l]);
    }
  }

  // Every lane of the source, in lane order, joins accumulator 0: the lanes are consecutive reduce steps.
  void fold_lanes(const LaneProgram& p, int n) {
    if (p.product_a >= 0) {
      const float* a = p.in<float>(p.product_a);
      const float* b = p.in<float>(p.product_b);
      int sa = p.regs[size_t(p.product_a)].varying, sb = p.regs[size_t(p.product_b)].varying;
      if (wide_)
        d_[0] = fold_products(d_[0], a, sa, b, sb, n);
      else
        f_[0] = fold_products(f_[0], a, sa, b, sb, n);
      return;
    }
    int s = p.regs[size_t(p.result)].varying;
    if (wide_) {
      const float* v = p.in<float>(p.result);
      for (int l = 0; l < n; ++l) d_[0] += v[l * s];
    } else if (is_float(dtype_)) {
      const float* v = p.in<float>(p.result);
      float acc = f_[0];
      bool round = dtype_ != DType::kFloat32;
      for (int l = 0; l < n; ++l) {
        float x = v[l * s];
        acc = op_ == ReduceOp::kSum ? acc + x : op_ == ReduceOp::kMax ? std::max(acc, x) : std::min(acc, x);
        if (round) interp::round_lanes(dtype_, &acc, 1);
      }
      f_[0] = acc;
    } else {
      const int64_t* v = p.in<int64_t>(p.result);
      int64_t acc = i_[0];
      for (int l = 0; l < n; ++l) {
        int64_t x = v[l * s];
        acc = op_ == ReduceOp::kSum ? wrap_add(acc, x) : op_ == ReduceOp::kMax ? std::max(acc, x) : std::min(acc, x);
        acc = interp::normalize_int(dtype_, acc);
      }
      i_[0] = acc;
    }
  }

  void store_to(HostTensor& out, int64_t base, int64_t step, int n) {
    if (wide_) {
      for (int l = 0; l < n; ++l) f_[l] = float(d_[l]);
      store(out, base, step, f_, 1, n);
    } else if (is_float(dtype_)) {
      store(out, base, step, f_, 1, n);
    } else {
      store(out, base, step, i_, 1, n);
    }
  }

 private:
  ReduceOp op_;
  DType dtype_;
  bool wide_;
  alignas(64) float f_[kMaxLanes];
  alignas(64) double d_[kMaxLanes];
  alignas(64) int64_t i_[kMaxLanes];
};

void store_result(const LaneProgram& p, HostTensor& out, int64_t base, int64_t step, int n) {
  const interp::Register& r = p.regs[size_t(p.result)];
  int stride = r.varying ? 1 : 0;
  if (r.cls() == ValueClass::kFloat)
    store(out, base, step, p.in<float>(p.result), stride, n);
  else
    store(out, base, step, p.in<int64_t>(p.result), stride, n);
}

// The batches of lanes along a compute's lanes axis, when its lanes are output elements (one batch without one).
int64_t lane_batches(const LaneProgram& p) {
  return p.vector_slot >= 0 ? (p.var_extents[size_t(p.vector_slot)] + kMaxLanes - 1) / kMaxLanes : 1;
}

// How many rows a compute has, in the order its elements are evaluated: for lanes over outputs, each combination of
// the spatial axes but the lanes' one times each batch of lanes; for lanes over reduce steps, each combination of the
// spatial axes. Threads evaluate ranges of rows.
int64_t row_count(const LaneProgram& p, bool reduce_lanes) {
  int64_t rows = reduce_lanes ? 1 : lane_batches(p);
  for (int s = 0; s < p.num_spatial; ++s)
    if (reduce_lanes || s != p.vector_slot) rows *= p.var_extents[size_t(s)];
  return rows;
}

// Lanes are output elements along the vector axis (or a single element when there is none); a reduction
// runs every reduce step for the whole batch of outputs. Evaluates rows [first_row, end_row).
void run_output_lanes(LaneProgram& p, const ReduceNode* reduction, HostTensor& out, const std::vector<int64_t>& strides,
                      bool wide_sums, int64_t first_row, int64_t end_row) {
  const int spatial = p.num_spatial, all = int(p.vars.size()), vec = p.vector_slot;
  const int64_t extent = vec >= 0 ? p.var_extents[size_t(vec)] : 1;
  const int64_t step = vec >= 0 ? strides[size_t(vec)] : 0;
  const int64_t batches = lane_batches(p);
  std::unique_ptr<Accumulator> acc;
  if (reduction) acc = std::make_unique<Accumulator>(reduction->op, reduction->dtype, wide_sums);
  std::fill(p.vars.begin(), p.vars.end(), 0);
  seek(p.vars, p.var_extents, spatial, vec, first_row / batches);
  int64_t batch = first_row % batches;
  for (int64_t row = first_row; row < end_row; ++row) {
    const int64_t first = batch * kMaxLanes;
    const int n = int(std::min<int64_t>(kMaxLanes, extent - first));
    if (vec >= 0) p.vars[size_t(vec)] = first;
    p.lanes = n;
    int64_t base = 0;
    for (int s = 0; s < spatial; ++s) base += strides[size_t(s)] * p.vars[size_t(s)];
    run(p.pre, p);
    if (!reduction) {
      store_result(p, out, base, step, n);
    } else {
      acc->reset(n);
      do {
        run(p.inner, p);
        acc->add_lanes(p, n);
      } while (advance(p.vars, p.var_extents, spatial, all, -1));
      acc->store_to(out, base, step, n);
    }
    if (++batch == batches) {
      batch = 0;
      advance(p.vars, p.var_extents, 0, spatial, vec);
    }
  }
}

// Lanes are consecutive steps of the innermost reduce axis, folded in order into one output element. Evaluates rows
// [first_row, end_row).
void run_reduce_lanes(LaneProgram& p, const ReduceNode* reduction, HostTensor& out, const std::vector<int64_t>& strides,
                      bool wide_sums, int64_t first_row, int64_t end_row) {
  const int spatial = p.num_spatial, last = int(p.vars.size()) - 1;
  const int64_t extent = p.var_extents[size_t(last)];
  Accumulator acc(reduction->op, reduction->dtype, wide_sums);
  std::fill(p.vars.begin(), p.vars.end(), 0);
  seek(p.vars, p.var_extents, spatial, -1, first_row);
  for (int64_t row = first_row; row < end_row; ++row, advance(p.vars, p.var_extents, 0, spatial, -1)) {
    p.lanes = 1;
    p.vars[size_t(last)] = 0;
    run(p.pre, p);
    acc.reset(1);
    do {
      for (int64_t first = 0; first < extent; first += kMaxLanes) {
        const int n = int(std::min<int64_t>(kMaxLanes, extent - first));
        p.vars[size_t(last)] = first;
        p.lanes = n;
        run(p.inner, p);
        acc.fold_lanes(p, n);
      }
    } while (advance(p.vars, p.var_extents, spatial, last, -1));
    int64_t base = 0;
    for (int s = 0; s < spatial; ++s) base += strides[size_t(s)] * p.vars[size_t(s)];
    acc.store_to(out, base, 0, 1);
  }
}

// Below this many element steps (output elements times reduce steps) a compute runs on one thread: starting threads
// and compiling the body for each costs tens of microseconds.
constexpr double kParallelSteps = 1 << 18;

int available_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

HostTensor evaluate(const TensorNode& compute, const interp::TensorValues& values, InterpretOptions options) {
  HostTensor out(compute.dtype, compute.shape);
  std::vector<int64_t> strides(compute.shape.size(), 1);
  for (size_t d = compute.shape.size(); d-- > 1;) strides[d - 1] = strides[d] * compute.shape[d];
  const int vector_slot = interp::choose_vector_slot(compute);
  LaneProgram first = interp::compile_compute(compute, vector_slot, values);
  const ReduceNode* reduction = compute.reduction();
  const bool reduce_lanes = reduction && first.vector_slot >= first.num_spatial;
  const int64_t rows = row_count(first, reduce_lanes);
  auto run_rows = [&](LaneProgram& p, int64_t first_row, int64_t end_row) {
    if (reduce_lanes)
      run_reduce_lanes(p, reduction, out, strides, options.wide_sums, first_row, end_row);
    else
      run_output_lanes(p, reduction, out, strides, options.wide_sums, first_row, end_row);
  };
  double steps = double(out.num_elements());
  for (size_t s = size_t(first.num_spatial); s < first.var_extents.size(); ++s) steps *= double(first.var_extents[s]);
  int threads = options.threads > 0 ? options.threads : available_cores();
  threads = int(std::min<int64_t>(threads, rows));
  if (steps < kParallelSteps || threads <= 1) {
    run_rows(first, 0, rows);
    return out;
  }
  // Each thread evaluates a contiguous range of rows with its own compiled body; every element is computed by the
  // same operations in the same order as on one thread. The error of the earliest range is the one a single thread
  // would have met first.
  std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
  // Range 0 runs with the body compiled above, every other with its own.
  auto range = [&](int t) {
    try {
      if (t == 0) {
        run_rows(first, 0, rows / threads);
      } else {
        LaneProgram own = interp::compile_compute(compute, vector_slot, values);
        run_rows(own, rows * t / threads, rows * (t + 1) / threads);
      }
    } catch (...) {
      errors[size_t(t)] = std::current_exception();
    }
  };
  // A range whose thread could not be started (a limit on threads) runs here; every started thread is joined.
  std::vector<std::thread> others;
  others.reserve(size_t(threads - 1));
  int started = 1;
  try {
    for (; started < threads; ++started) others.emplace_back(range, started);
  } catch (const std::system_error&) {
  }
  range(0);
  for (int t = started; t < threads; ++t) range(t);
  for (std::thread& t : others) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

}  // namespace

namespace {

double tensor_bytes(const Tensor& t) {
  double bytes = dtype_bytes(t->dtype);
  for (int64_t extent : t->shape) bytes *= double(extent);
  return bytes;
}

}  // namespace

double program_tensor_bytes(const Program& program) {
  double bytes = 0;
  for (const Tensor& t : program.tensors()) bytes += tensor_bytes(t);
  return bytes;
}

void check_program_fits_memory(const Program& program, double machine_bytes) {
  if (machine_bytes <= 0) machine_bytes = double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGE_SIZE));
  const double needed = program_tensor_bytes(program);
  if (needed <= machine_bytes) return;
  Tensor largest;
  double largest_bytes = -1;
  for (const Tensor& t : program.tensors())
    if (tensor_bytes(t) > largest_bytes) largest = t, largest_bytes = tensor_bytes(t);
  auto gb = [](double bytes) {
    std::ostringstream s;
    s.setf(std::ios::fixed);
    s.precision(1);
    s << bytes / 1e9 << " GB";
    return s.str();
  };
  throw MemoryNeedError("program '" + program.name() + "' needs " + gb(needed) + " for its tensors (the largest, '" +
                        largest->name + "' " + describe(largest->dtype, largest->shape) + ": " + gb(largest_bytes) +
                        "), this machine has " + gb(machine_bytes));
}

TensorMap interpret(const Program& program, const TensorMap& inputs, InterpretOptions options) {
  check_program_fits_memory(program);
  interp::TensorValues values;
  for (const Tensor& t : program.placeholders()) {
    auto it = inputs.find(t->name);
    if (it == inputs.end())
      throw std::invalid_argument("interpret: no input for placeholder '" + t->name + "' (" +
                                  describe(t->dtype, t->shape) + ") of program '" + program.name() + "'");
    const HostTensor& h = it->second;
    if (h.dtype() != t->dtype || h.shape() != t->shape)
      throw std::invalid_argument("interpret: input for placeholder '" + t->name + "' is " +
                                  describe(h.dtype(), h.shape()) + " but the placeholder is " +
                                  describe(t->dtype, t->shape));
    values[t.get()] = &h;
  }
  // With outputs_only: for each compute, the intermediates whose last reader it is.
  std::map<const TensorNode*, std::vector<const TensorNode*>> last_read_by;
  if (options.outputs_only)
    for (const Tensor& t : program.computes())
      if (!program.is_output(t) && !program.readers(t).empty())
        last_read_by[program.readers(t).back().get()].push_back(t.get());
  TensorMap results;
  for (const Tensor& t : program.tensors()) {
    if (t->is_placeholder()) continue;
    // Map nodes never move, so the pointer stays valid while later computes read it.
    auto [it, inserted] = results.emplace(t->name, evaluate(*t.get(), values, options));
    values[t.get()] = &it->second;
    if (auto done = last_read_by.find(t.get()); done != last_read_by.end())
      for (const TensorNode* read : done->second) {
        results.erase(read->name);
        values.erase(read);
      }
  }
  return results;
}

ValueRange input_range(const Tensor& placeholder, const InputRanges& ranges) {
  auto it = ranges.find(placeholder->name);
  return it != ranges.end() ? it->second : default_value_range(placeholder->dtype);
}

TensorMap random_inputs(const Program& program, uint64_t seed, const InputRanges& ranges) {
  check_program_fits_memory(program);
  TensorMap inputs;
  uint64_t n = 0;
  for (const Tensor& t : program.placeholders())
    inputs.emplace(t->name, random_tensor(t->dtype, t->shape, seed + n++, input_range(t, ranges)));
  return inputs;
}

}  // namespace ingot

// Private to the reference interpreter (interp/interpreter.cc): a compute's body compiled once into a flat list of
// lane-wise instructions over registers of up to kMaxLanes values, so that one dispatch covers a whole batch of
// output elements (or of reduction steps). Not for use outside the interpreter.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/host_tensor.h"
#include "ir/tensor.h"

namespace ingot::interp {

// Lanes in one batch: long enough to amortize dispatch, short enough that registers stay in L1.
constexpr int kMaxLanes = 256;

// f32, f16 and bf16 values are held as float (f16/bf16 rounded after every operation); i64, i32 and bool as
// int64_t (i32 wrapped and bool normalized to 0/1 after every operation).
enum class ValueClass : uint8_t { kFloat, kInt };
inline ValueClass value_class(DType t) { return is_float(t) ? ValueClass::kFloat : ValueClass::kInt; }

struct Register {
  DType dtype = DType::kFloat32;
  bool varying = false;           // one value per lane; otherwise one value shared by the whole batch
  bool reduce_dependent = false;  // changes with the reduce axes, so it is recomputed for every reduce step
  std::vector<float> f;           // storage, by value class
  std::vector<int64_t> i;
  const void* data = nullptr;  // what readers see: the storage, or a view straight into a tensor
  ValueClass cls() const { return value_class(dtype); }
};

// Where a TensorRead reads. Affine reads (every index a sum of constant * axis) get their flat offset and
// bounds from a few scalar operations per batch; other reads evaluate their index registers lane by lane.
struct ReadSite {
  struct Term {
    int slot;
    int64_t coef;
  };
  struct AffineDim {
    int64_t constant = 0;
    std::vector<Term> terms;  // every slot, the vector slot included (its variable holds the batch's first value)
    int64_t vector_coef = 0;
    bool needs_check = true;  // false when the axis extents prove the index in bounds
  };
  std::string tensor_name;
  std::vector<int64_t> shape, strides;
  DType dtype = DType::kFloat32;
  const HostTensor* tensor = nullptr;
  const uint8_t* data = nullptr;

  bool affine = false;
  std::vector<AffineDim> dims;
  int64_t flat_constant = 0;
  std::vector<Term> flat_terms;
  int64_t flat_step = 0;  // flat offset between neighbouring lanes

  std::vector<int> index_registers;  // non-affine reads: one i64 register per dimension

  // A read whose lanes are far apart in memory but whose innermost reduce axis walks contiguously (W[i, k] with
  // lanes over i) loads kTileRows reduce steps of every lane at once, a cache line per lane instead of a line
  // per lane and step; later steps view a row of the tile.
  static constexpr int kTileRows = 32;
  int tile_slot = -1;  // the innermost reduce axis, when this read is tiled
  std::vector<float> tile;
  int64_t tile_base = 0, tile_first = 0;  // flat offset of lane 0 and the reduce value of row 0
  int tile_rows = 0, tile_lanes = 0;
};

struct LaneProgram;
struct Instr;
using Kernel = void (*)(const Instr&, LaneProgram&);

struct Instr {
  Kernel run = nullptr;
  int out = -1, a = -1, b = -1, c = -1;
  // A bool register: the lanes whose value is really used (a select branch or the right side of && and ||).
  // Reads and integer divisions report errors only in those lanes; -1 means every lane.
  int guard = -1;
  int64_t imm = 0;  // a variable slot, or a kernel's flag
  DType dtype = DType::kFloat32;
  ReadSite* site = nullptr;
};

// A compute's body, compiled, together with the state of the batch being evaluated.
struct LaneProgram {
  std::string compute_name;
  std::vector<std::string> var_names;  // slots: spatial axes in order, then reduce axes in order
  std::vector<int64_t> var_extents;
  int num_spatial = 0;
  int vector_slot = -1;  // the axis spread over lanes; -1 when every register is uniform

  std::vector<Instr> pre;              // instructions independent of the reduce axes: run once per batch
  std::vector<Instr> inner;            // the rest: run for every reduce step
  int result = -1;                     // the body's value (a reduction's source)
  int product_a = -1, product_b = -1;  // sum(a * b) in f32: the accumulation multiplies in place
  std::vector<std::unique_ptr<ReadSite>> sites;
  std::vector<Register> regs;

  // Batch state.
  std::vector<int64_t> vars;  // each slot's value; the vector slot holds the batch's first value
  int lanes = 1;

  int count(int r) const { return regs[r].varying ? lanes : 1; }
  template <class T>
  const T* in(int r) const {
    return static_cast<const T*>(regs[r].data);
  }
  float* fout(int r) {
    Register& g = regs[r];
    g.data = g.f.data();
    return g.f.data();
  }
  int64_t* iout(int r) {
    Register& g = regs[r];
    g.data = g.i.data();
    return g.i.data();
  }
  // Whether lane `lane` of an instruction guarded by `guard` is used; for a uniform instruction, the first
  // used lane or -1.
  bool lane_active(int guard, int lane) const;
  int first_active_lane(int guard) const;
  // "i=3, j=0, k=1" for a lane: the axis values an error happened at.
  std::string describe_lane(int lane, bool with_reduce_axes) const;
};

using TensorValues = std::unordered_map<const TensorNode*, const HostTensor*>;

// Compiles a compute (vector_slot as chosen by choose_vector_slot). values must hold every tensor the body
// reads. Throws std::invalid_argument for a body the interpreter cannot evaluate (an unbound variable, a
// buffer load, a nested reduction).
LaneProgram compile_compute(const TensorNode& compute, int vector_slot, const TensorValues& values);

// The axis to spread over lanes: a spatial axis (the innermost unless a longer one exists and the innermost is
// short), or the innermost reduce axis when the output axes are short and the reduction is longer.
int choose_vector_slot(const TensorNode& compute);

// Calls f(l) for l in [0, n) in fixed blocks of 8 so that the compiler vectorizes the loop body.
template <class F>
inline void for_lanes(int n, F f) {
  int l = 0;
  for (; l + 8 <= n; l += 8)
    for (int t = 0; t < 8; ++t) f(l + t);
  for (; l < n; ++l) f(l);
}

// Rounds float lanes to f16 or bf16 through HostTensor::set/get (no-op for f32).
void round_lanes(DType dtype, float* values, int n);
// Wraps to i32, or makes a bool 0/1; identity for i64.
inline int64_t normalize_int(DType dtype, int64_t v) {
  if (dtype == DType::kInt32) return int64_t(int32_t(uint32_t(uint64_t(v))));
  if (dtype == DType::kBool) return v != 0;
  return v;
}

}  // namespace ingot::interp

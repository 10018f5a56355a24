// Tensors in host memory: what the interpreter computes on and what compiled kernels read and write.
// Storage is 64-byte aligned raw bytes in the tensor's dtype; f16/bf16 are stored as their 16-bit patterns.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace ingot {

class HostTensor {
 public:
  HostTensor() = default;
  HostTensor(DType dtype, std::vector<int64_t> shape);  // zero-filled
  HostTensor(const HostTensor& other);
  HostTensor& operator=(const HostTensor& other);
  HostTensor(HostTensor&&) noexcept = default;
  HostTensor& operator=(HostTensor&&) noexcept = default;

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t num_elements() const { return num_elements_; }
  size_t num_bytes() const { return size_t(num_elements_) * size_t(dtype_bytes(dtype_)); }
  void* data() { return data_.get(); }
  const void* data() const { return data_.get(); }
  // Typed views; each checks the dtype and throws std::logic_error on a mismatch.
  float* f32();
  const float* f32() const;
  int64_t* i64();
  const int64_t* i64() const;
  int32_t* i32();
  const int32_t* i32() const;

  // Element i converted to double, and back (rounding to the dtype), for any dtype.
  double get(int64_t i) const;
  void set(int64_t i, double v);

 private:
  struct Free {
    void operator()(void* p) const;
  };
  DType dtype_ = DType::kFloat32;
  std::vector<int64_t> shape_;
  int64_t num_elements_ = 0;
  std::unique_ptr<uint8_t, Free> data_;
};

using TensorMap = std::map<std::string, HostTensor>;

// Where random values lie: uniform in [low, high) for floats, integers floor(low + (high - low) * u) for
// integer dtypes. Models state theirs because well-trained or well-initialised weights are small: an LSTM
// with weights in [-1, 1) is chaotic, so no two correct float programs agree after a hundred steps.
struct ValueRange {
  double low = -1.0, high = 1.0;
  bool operator==(const ValueRange&) const = default;
};
// The range used for a dtype when none is given: [-1, 1) for floats, [0, 8) for integers.
ValueRange default_value_range(DType dtype);

// Uniform values in the range (the dtype's default range if none), from a fixed-seed generator: the same seed
// gives the same tensor on every machine.
HostTensor random_tensor(DType dtype, const std::vector<int64_t>& shape, uint64_t seed);
HostTensor random_tensor(DType dtype, const std::vector<int64_t>& shape, uint64_t seed, ValueRange range);

// Element-wise comparison: passes when |a - b| <= atol + rtol * |b| everywhere (NaN never passes).
struct Comparison {
  bool ok = false;
  double max_abs_error = 0;
  double max_rel_error = 0;
  int64_t first_bad_index = -1;  // -1 when ok
  std::string message;           // says where and by how much it failed, or why shapes differ
};
// The default verification tolerance: every element within kDefaultAtol * max(1, max |expected|) + kDefaultRtol *
// |expected| (run configs, `ingot run`, the runners and the exported programs' checks all start from these), plus
// kRoundingNoiseFactor times the output's rounding noise (below) where it is known.
inline constexpr double kDefaultRtol = 1e-4;
inline constexpr double kDefaultAtol = 1e-5;
Comparison compare(const HostTensor& actual, const HostTensor& expected, double rtol = kDefaultRtol,
                   double atol = kDefaultAtol);

// max(1, max |x|): the scale of an absolute tolerance for outputs whose reductions may be summed in another
// order than the interpreter's (f32 rounding grows with the partial sums, not with the result).
double magnitude(const HostTensor& t);

// Per output name: how far f32 rounding alone moves the interpreter's output (interp/rounding_noise.h); an output
// not named has none.
using RoundingNoise = std::map<std::string, double>;
// The multiple of an output's rounding noise that verification allows besides rtol and atol. A program that sums in
// another order differs from the interpreter by its own rounding plus the interpreter's, each about the noise: a deep
// model's correct programs measured 1.1-1.5x it (ResNeXt-101's ONNX file, docs/precision.md), while a wrong index
// or a lost term moves outputs by the size of the values.
inline constexpr double kRoundingNoiseFactor = 4;
// The absolute part of an output's verification tolerance: atol * magnitude(expected) + kRoundingNoiseFactor * the
// output's noise (0 when `noise` does not name it).
double absolute_tolerance(double atol, const HostTensor& expected, const std::string& name, const RoundingNoise& noise);

}  // namespace ingot

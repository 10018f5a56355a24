#include "ir/host_tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <stdexcept>

namespace ingot {

namespace {

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = int32_t((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff) return uint16_t(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 31) return uint16_t(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return uint16_t(sign);
    mant |= 0x800000u;
    uint32_t shift = uint32_t(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = sign | (uint32_t(exp) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;
  return uint16_t(half);
}

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while (!(mant & 0x400u));
      x = sign | (uint32_t(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if (std::isnan(f)) return uint16_t((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return uint16_t(x >> 16);
}

float bf16_to_float(uint16_t b) {
  uint32_t x = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

}  // namespace

void HostTensor::Free::operator()(void* p) const { std::free(p); }

HostTensor::HostTensor(DType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  num_elements_ = 1;
  for (int64_t d : shape_) {
    if (d < 0) throw std::invalid_argument("host tensor with a negative dimension");
    num_elements_ *= d;
  }
  size_t bytes = (num_bytes() + 63) / 64 * 64;
  data_.reset(static_cast<uint8_t*>(std::aligned_alloc(64, bytes ? bytes : 64)));
  if (!data_) throw std::bad_alloc();
  std::memset(data_.get(), 0, bytes ? bytes : 64);
}

HostTensor::HostTensor(const HostTensor& other) : HostTensor(other.dtype_, other.shape_) {
  std::memcpy(data_.get(), other.data_.get(), num_bytes());
}

HostTensor& HostTensor::operator=(const HostTensor& other) {
  if (this != &other) *this = HostTensor(other);
  return *this;
}

#define INGOT_TYPED_VIEW(NAME, TYPE, DT)                                                                            \
  TYPE* HostTensor::NAME() {                                                                                        \
    if (dtype_ != DT) throw std::logic_error(std::string("host tensor is ") + dtype_name(dtype_) + ", not " #NAME); \
    return reinterpret_cast<TYPE*>(data_.get());                                                                    \
  }                                                                                                                 \
  const TYPE* HostTensor::NAME() const { return const_cast<HostTensor*>(this)->NAME(); }
INGOT_TYPED_VIEW(f32, float, DType::kFloat32)
INGOT_TYPED_VIEW(i64, int64_t, DType::kInt64)
INGOT_TYPED_VIEW(i32, int32_t, DType::kInt32)
#undef INGOT_TYPED_VIEW

double HostTensor::get(int64_t i) const {
  const uint8_t* p = data_.get();
  switch (dtype_) {
    case DType::kBool: return p[i] ? 1.0 : 0.0;
    case DType::kInt32: return reinterpret_cast<const int32_t*>(p)[i];
    case DType::kInt64: return double(reinterpret_cast<const int64_t*>(p)[i]);
    case DType::kFloat16: return half_to_float(reinterpret_cast<const uint16_t*>(p)[i]);
    case DType::kBFloat16: return bf16_to_float(reinterpret_cast<const uint16_t*>(p)[i]);
    case DType::kFloat32: return reinterpret_cast<const float*>(p)[i];
  }
  return 0;
}

void HostTensor::set(int64_t i, double v) {
  uint8_t* p = data_.get();
  switch (dtype_) {
    case DType::kBool: p[i] = v != 0; return;
    case DType::kInt32: reinterpret_cast<int32_t*>(p)[i] = int32_t(v); return;
    case DType::kInt64: reinterpret_cast<int64_t*>(p)[i] = int64_t(v); return;
    case DType::kFloat16: reinterpret_cast<uint16_t*>(p)[i] = float_to_half(float(v)); return;
    case DType::kBFloat16: reinterpret_cast<uint16_t*>(p)[i] = float_to_bf16(float(v)); return;
    case DType::kFloat32: reinterpret_cast<float*>(p)[i] = float(v); return;
  }
}

ValueRange default_value_range(DType dtype) { return is_float(dtype) ? ValueRange{-1.0, 1.0} : ValueRange{0.0, 8.0}; }

HostTensor random_tensor(DType dtype, const std::vector<int64_t>& shape, uint64_t seed) {
  return random_tensor(dtype, shape, seed, default_value_range(dtype));
}

HostTensor random_tensor(DType dtype, const std::vector<int64_t>& shape, uint64_t seed, ValueRange range) {
  HostTensor t(dtype, shape);
  std::mt19937_64 gen(seed);
  const double width = range.high - range.low;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    // Top 24 bits give a uniform float in [0, 1) that is exact in f32 and the same everywhere.
    double u = double(gen() >> 40) / double(1 << 24);
    double v = range.low + width * u;
    t.set(i, is_float(dtype) ? v : std::floor(v));
  }
  return t;
}

Comparison compare(const HostTensor& actual, const HostTensor& expected, double rtol, double atol) {
  Comparison c;
  if (actual.shape() != expected.shape() || actual.dtype() != expected.dtype()) {
    c.message = "shape or dtype differs";
    return c;
  }
  double worst_excess = 0;
  for (int64_t i = 0; i < actual.num_elements(); ++i) {
    double a = actual.get(i), b = expected.get(i);
    double err = std::fabs(a - b);
    bool bad = std::isnan(a) != std::isnan(b) || (!std::isnan(a) && !(err <= atol + rtol * std::fabs(b)));
    if (std::isnan(a) && std::isnan(b)) bad = false, err = 0;
    if (!std::isnan(err)) {
      c.max_abs_error = std::max(c.max_abs_error, err);
      if (b != 0) c.max_rel_error = std::max(c.max_rel_error, err / std::fabs(b));
    }
    if (bad) {
      double excess = std::isnan(err) ? INFINITY : err - (atol + rtol * std::fabs(b));
      if (c.first_bad_index < 0) {
        c.first_bad_index = i;
        std::ostringstream os;
        os << "element " << i << ": got " << a << ", expected " << b;
        c.message = os.str();
      }
      worst_excess = std::max(worst_excess, excess);
    }
  }
  c.ok = c.first_bad_index < 0;
  if (c.ok) {
    c.message = "ok";
  } else {
    std::ostringstream os;
    os << c.message << " (max abs error " << c.max_abs_error << ", rtol " << rtol << ", atol " << atol << ")";
    c.message = os.str();
  }
  return c;
}

double magnitude(const HostTensor& t) {
  double scale = 1;
  for (int64_t i = 0; i < t.num_elements(); ++i) scale = std::max(scale, std::fabs(t.get(i)));
  return scale;
}

double absolute_tolerance(double atol, const HostTensor& expected, const std::string& name,
                          const RoundingNoise& noise) {
  auto it = noise.find(name);
  return atol * magnitude(expected) + (it == noise.end() ? 0.0 : kRoundingNoiseFactor * it->second);
}

}  // namespace ingot

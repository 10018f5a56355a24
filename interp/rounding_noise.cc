#include "interp/rounding_noise.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ingot {

RoundingNoise rounding_noise(const Program& program, const TensorMap& inputs, const TensorMap& expected) {
  for (const Tensor& t : program.outputs())
    if (!expected.count(t->name))
      throw std::invalid_argument("rounding_noise: no expected tensor for output '" + t->name + "'");
  const TensorMap wide = interpret(program, inputs, {.wide_sums = true, .outputs_only = true});
  RoundingNoise noise;
  for (const Tensor& t : program.outputs()) {
    if (!is_float(t->dtype)) continue;
    const HostTensor& a = expected.at(t->name);
    const HostTensor& b = wide.at(t->name);
    double largest = 0;
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      const double d = std::fabs(a.get(i) - b.get(i));
      if (std::isfinite(d)) largest = std::max(largest, d);
    }
    noise[t->name] = std::min(largest, kMaxRoundingNoise * magnitude(a));
  }
  return noise;
}

}  // namespace ingot

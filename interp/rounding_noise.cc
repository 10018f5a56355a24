#include "interp/rounding_noise.h"

#include <cmath>
#include <stdexcept>

namespace ingot {

RoundingNoise rounding_noise(const Program& program, const TensorMap& inputs, const TensorMap& expected) {
  const TensorMap wide = interpret(program, inputs, {.wide_sums = true});
  RoundingNoise noise;
  for (const Tensor& t : program.outputs()) {
    auto it = expected.find(t->name);
    if (it == expected.end())
      throw std::invalid_argument("rounding_noise: no expected tensor for output '" + t->name + "'");
    const HostTensor& a = it->second;
    const HostTensor& b = wide.at(t->name);
    double largest = 0;
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      const double d = std::fabs(a.get(i) - b.get(i));
      if (std::isfinite(d)) largest = std::max(largest, d);
    }
    noise[t->name] = largest;
  }
  return noise;
}

}  // namespace ingot

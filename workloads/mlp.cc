#include "workloads/mlp.h"

#include <cmath>
#include <stdexcept>

namespace ingot {

Program mlp(const MlpSizes& s) {
  if (s.batch <= 0 || s.in <= 0 || s.hidden <= 0 || s.out <= 0)
    throw std::invalid_argument("mlp: every size (batch, in, hidden, out) must be positive");
  Tensor X = placeholder("X", {s.batch, s.in});
  Tensor W1 = placeholder("W1", {s.in, s.hidden}), b1 = placeholder("b1", {s.hidden});
  Tensor W2 = placeholder("W2", {s.hidden, s.out}), b2 = placeholder("b2", {s.out});
  using Axes = std::vector<Expr>;

  IterVar k1 = reduce_axis(s.in, "k");
  Tensor mm1 =
      compute("mm1", {s.batch, s.hidden}, [&](const Axes& i) { return sum(X(i[0], k1.var) * W1(k1.var, i[1]), {k1}); });
  Tensor z1 = compute("z1", {s.batch, s.hidden}, [&](const Axes& i) { return mm1(i[0], i[1]) + b1(i[1]); });
  const double sqrt2 = std::sqrt(2.0);
  Tensor a1 = compute("a1", {s.batch, s.hidden}, [&](const Axes& i) {
    Expr x = z1(i[0], i[1]);
    return x * 0.5 * (1.0 + math::erf(x / sqrt2));
  });
  IterVar k2 = reduce_axis(s.hidden, "k");
  Tensor mm2 =
      compute("mm2", {s.batch, s.out}, [&](const Axes& i) { return sum(a1(i[0], k2.var) * W2(k2.var, i[1]), {k2}); });
  Tensor Y = compute("Y", {s.batch, s.out}, [&](const Axes& i) { return mm2(i[0], i[1]) + b2(i[1]); });
  return Program({Y}, "mlp");
}

std::vector<std::string> mlp_weight_names() { return {"W1", "b1", "W2", "b2"}; }

InputRanges mlp_input_ranges(const MlpSizes& sizes) {
  const double first = 1.0 / std::sqrt(double(sizes.in)), second = 1.0 / std::sqrt(double(sizes.hidden));
  return {{"W1", {-first, first}}, {"b1", {-first, first}}, {"W2", {-second, second}}, {"b2", {-second, second}}};
}

}  // namespace ingot

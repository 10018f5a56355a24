#include "costmodel/cost_model.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ingot {

namespace {
const char kUniformHeader[] = "ingot cost model: uniform 1\n";
}  // namespace

std::vector<double> UniformCostModel::predict(const Program&, const std::vector<Schedule>& schedules) const {
  return std::vector<double>(schedules.size(), 0.0);
}

void UniformCostModel::save(const std::string& path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << kUniformHeader;
  out.close();
  if (!out) throw std::runtime_error("cannot write the cost model file " + path);
}

void UniformCostModel::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the cost model file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str() != kUniformHeader)
    throw std::runtime_error(path + " is not a uniform cost model (expected the line \"ingot cost model: uniform 1\")");
}

}  // namespace ingot

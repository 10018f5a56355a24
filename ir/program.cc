#include "ir/program.h"

#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>

#include "ir/hash.h"

namespace ingot {

Program::Program(std::vector<Tensor> outputs, std::string name) : name_(std::move(name)), outputs_(std::move(outputs)) {
  if (outputs_.empty()) throw std::invalid_argument("program '" + name_ + "' has no outputs");
  std::map<std::string, const TensorNode*> by_name;
  std::function<void(const Tensor&)> visit = [&](const Tensor& t) {
    auto it = by_name.find(t->name);
    if (it != by_name.end()) {
      if (it->second != t.get())
        throw std::invalid_argument("program '" + name_ + "': two different tensors are named '" + t->name + "'");
      return;
    }
    by_name[t->name] = t.get();
    for (const Tensor& in : t->inputs()) visit(in);
    order_.push_back(t);
  };
  for (const Tensor& t : outputs_) {
    if (!t) throw std::invalid_argument("program '" + name_ + "' has a null output");
    visit(t);
  }
  for (const Tensor& c : order_)
    for (const Tensor& in : c->inputs()) readers_of_[in.get()].push_back(c);
}

std::vector<Tensor> Program::placeholders() const {
  std::vector<Tensor> out;
  for (const Tensor& t : order_)
    if (t->is_placeholder()) out.push_back(t);
  return out;
}

std::vector<Tensor> Program::computes() const {
  std::vector<Tensor> out;
  for (const Tensor& t : order_)
    if (!t->is_placeholder()) out.push_back(t);
  return out;
}

Tensor Program::find(const std::string& name) const {
  for (const Tensor& t : order_)
    if (t->name == name) return t;
  return Tensor();
}

bool Program::is_output(const Tensor& t) const {
  for (const Tensor& o : outputs_)
    if (o.same_as(t)) return true;
  return false;
}

std::vector<Tensor> Program::readers(const Tensor& t) const {
  auto it = readers_of_.find(t.get());
  return it == readers_of_.end() ? std::vector<Tensor>{} : it->second;
}

std::string unused_name(const Program& program, const std::string& base) {
  std::string name = base;
  for (int n = 1; program.find(name); ++n) name = base + "_" + std::to_string(n);
  return name;
}

std::string tensor_definition(const Tensor& t) {
  std::ostringstream os;
  os << t->name << ": " << dtype_name(t->dtype) << "[";
  for (size_t d = 0; d < t->shape.size(); ++d) os << (d ? ", " : "") << t->shape[d];
  os << "]";
  if (t->is_placeholder()) {
    os << " = placeholder";
  } else {
    os << " = compute(";
    for (size_t d = 0; d < t->axes.size(); ++d) os << (d ? ", " : "") << t->axes[d].name();
    os << ") " << to_string(t->body);
  }
  return os.str();
}

std::string Program::to_string() const {
  std::ostringstream os;
  os << "program " << name_ << " {\n";
  for (const Tensor& t : order_) os << "  " << tensor_definition(t) << "\n";
  os << "  outputs:";
  for (const Tensor& t : outputs_) os << " " << t->name;
  os << "\n}\n";
  return os.str();
}

uint64_t Program::structural_hash() const { return fnv1a64(to_string()); }

}  // namespace ingot

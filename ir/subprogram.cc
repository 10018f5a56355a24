#include "ir/subprogram.h"

#include <memory>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "ir/tensor_copier.h"

namespace ingot {
namespace {

// Rebuilds the part's computes over new tensors: reads of the part's computes go to their copies, reads of anything
// else to placeholders.
class PartBuilder final : public TensorCopier {
 public:
  PartBuilder(const std::set<const TensorNode*>& part, const std::map<std::string, std::string>& rename)
      : part_(part), rename_(rename) {}

 private:
  Tensor make_copy(const Tensor& t) override {
    if (!part_.count(t.get())) return placeholder(new_name(t->name), t->shape, t->dtype);
    return with_body(t, new_name(t->name), mutate(t->body));
  }
  std::string new_name(const std::string& name) const {
    auto it = rename_.find(name);
    return it == rename_.end() ? name : it->second;
  }
  const std::set<const TensorNode*>& part_;
  const std::map<std::string, std::string>& rename_;
};

}  // namespace

Program extract_subprogram(const Program& program, const std::vector<std::string>& computes, const std::string& name,
                           const std::map<std::string, std::string>& rename) {
  const std::string where = "subprogram '" + name + "' of program '" + program.name() + "': ";
  if (computes.empty()) throw std::invalid_argument(where + "no computes given");
  std::set<const TensorNode*> part;
  for (const std::string& c : computes) {
    Tensor t = program.find(c);
    if (!t.get()) throw std::invalid_argument(where + "no tensor named '" + c + "'");
    if (t->is_placeholder()) throw std::invalid_argument(where + "'" + c + "' is a placeholder, not a compute");
    if (!part.insert(t.get()).second) throw std::invalid_argument(where + "'" + c + "' is named twice");
  }
  std::vector<Tensor> outputs;
  for (const Tensor& t : program.tensors()) {
    if (!part.count(t.get())) continue;
    bool read_outside = program.is_output(t);
    for (const Tensor& reader : program.readers(t)) read_outside = read_outside || !part.count(reader.get());
    if (read_outside) outputs.push_back(t);
  }
  PartBuilder builder(part, rename);
  std::vector<Tensor> copies;
  for (const Tensor& t : outputs) copies.push_back(builder.copy_of(t));
  try {
    return Program(std::move(copies), name);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(where + e.what());
  }
}

}  // namespace ingot

#include "analysis/reuse.h"

#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace ingot {

std::vector<TensorReuse> analyze_reuse(const Program& program, const std::vector<std::vector<TensorAccess>>& accesses) {
  const std::vector<Tensor>& tensors = program.tensors();
  std::unordered_map<const TensorNode*, size_t> index;  // Program::find is linear: index every tensor once
  std::vector<TensorReuse> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) {
    index.emplace(t.get(), out.size());
    TensorReuse r;
    r.tensor = t;
    r.bytes = t->num_elements() * dtype_bytes(t->dtype);
    out.push_back(std::move(r));
  }
  std::unordered_set<const TensorNode*> outputs;
  for (const Tensor& t : program.outputs()) outputs.insert(t.get());

  int position = 0;
  for (const Tensor& t : tensors) {
    if (t->is_placeholder()) continue;
    if (size_t(position) >= accesses.size())
      throw std::invalid_argument("analyze_reuse: fewer access lists than computes in program '" + program.name() +
                                  "'");
    out[index.at(t.get())].producer = position;
    for (const TensorAccess& a : accesses[size_t(position)]) {
      TensorReuse& read = out[index.at(a.tensor.get())];
      read.readers.push_back(position);
      read.bytes_read += a.bytes;
    }
    ++position;
  }
  const int last_compute = position - 1;
  for (TensorReuse& r : out) {
    r.is_output = outputs.count(r.tensor.get()) > 0;
    r.live_first = r.producer >= 0 ? r.producer : (r.readers.empty() ? -1 : r.readers.front());
    r.live_last = r.is_output ? last_compute : (r.readers.empty() ? r.live_first : r.readers.back());
  }
  return out;
}

}  // namespace ingot

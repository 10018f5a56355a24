// Tensor-level reuse: which tensors several TEs read (the data-reuse candidates of Souffle's analysis, e.g. an
// LSTM layer's weights read by every time step, the input that Q, K and V share) and how long each tensor
// lives in the program's topological order. Positions are indices into Program::computes().
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/access.h"
#include "ir/program.h"

namespace ingot {

struct TensorReuse {
  Tensor tensor;
  bool is_output = false;
  int64_t bytes = 0;         // the whole tensor
  int producer = -1;         // position of the compute that writes it; -1 for a placeholder
  std::vector<int> readers;  // positions of the computes that read it, ascending
  int64_t bytes_read = 0;    // the readers' footprints of it, summed: what is loaded if nothing stays on chip
  int live_first = -1;       // first position it must exist at: its producer, or its first reader (placeholder)
  int live_last = -1;        // last position it is needed at: its last reader, or the last compute (output)

  bool read_by_several() const { return readers.size() > 1; }
  // Computes from live_first to live_last inclusive: how many stages a kernel must keep it across.
  int live_span() const { return live_first < 0 ? 0 : live_last - live_first + 1; }
};

// One entry per tensor of the program, in Program::tensors() order. accesses[i] must be
// analyze_accesses(program.computes()[i]). Linear in the program's size.
std::vector<TensorReuse> analyze_reuse(const Program& program, const std::vector<std::vector<TensorAccess>>& accesses);

}  // namespace ingot

// The kernels of a lowered function: its body cut at kernel barriers, each kernel as a LoopFunction of its own
// (what a GPU launches one at a time), and the bytes each kernel moves to and from main memory. Use on any
// LoopFunction that follows docs/loop_semantics.md.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "ir/stmt.h"

namespace ingot {

// The function's body cut at its top-level kernel barriers: one statement per kernel, in order.
std::vector<Stmt> kernel_bodies(const Stmt& body);

// One function per kernel, in order, named "<name>_k<N>" (the function's own name when it is one kernel).
// A kernel's inputs are the global buffers it loads and does not store, its outputs the ones it stores
// (workspace buffers included: between kernels they live in global memory), in the original function's order.
std::vector<LoopFunction> split_kernels(const LoopFunction& f);

// Bytes moved, counted from the loop program: each kernel reads, once, every global buffer it loads but does
// not store, and writes, once, every buffer it stores that is an output of the function or that another kernel
// loads. A buffer stored and loaded inside one kernel is not counted: it stays on chip (shared memory and
// registers on a GPU, the caches on a CPU), as in a persistent kernel with global barriers.
struct KernelTraffic {
  std::vector<int64_t> kernel_bytes;  // reads + writes, per kernel
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  int64_t kernel_count() const { return static_cast<int64_t>(kernel_bytes.size()); }
  int64_t bytes_moved() const { return bytes_read + bytes_written; }
};
KernelTraffic kernel_traffic(const LoopFunction& f);

// The buffers a statement reads or writes that it does not allocate itself, in order of first use, and the
// names of those it writes: the parameters of the statement printed as a function of its own.
struct StmtBuffers {
  std::vector<Buffer> used;
  std::set<std::string> written;
};
StmtBuffers stmt_buffers(const Stmt& s);

}  // namespace ingot

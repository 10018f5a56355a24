// The CUDA printer: turns one LoopFunction into the source of one cooperative-launch-ready CUDA kernel, and
// describes the launch that kernel wants. Pure text generation, usable without a CUDA toolkit or GPU; compile
// the source with compile/nvrtc_compiler.h and run it with runtime/cuda_driver.h.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "ir/stmt.h"

namespace ingot {

// The grid and block a printed kernel wants. Block and thread loops are grid- and block-stride loops, so the
// kernel is correct for any smaller grid too (see fit_grid); the block size is baked into __launch_bounds__,
// so launch with at most `block` threads.
struct CudaLaunchConfig {
  std::string kernel_name;
  std::array<int64_t, 3> grid{1, 1, 1};   // x, y, z
  std::array<int64_t, 3> block{1, 1, 1};  // x, y, z
  bool cooperative = false;               // has a grid barrier: needs cuLaunchCooperativeKernel

  int64_t num_blocks() const { return grid[0] * grid[1] * grid[2]; }
  int64_t threads_per_block() const { return block[0] * block[1] * block[2]; }
};

// The C identifier of f's kernel: f.name with characters outside [A-Za-z0-9_] replaced.
std::string cuda_kernel_name(const LoopFunction& f);

// CUDA C++ source of one `extern "C" __global__` kernel named cuda_kernel_name(f). Parameters are, in order,
// f.inputs (const T* __restrict__), f.outputs and f.workspace (T* __restrict__). Throws std::invalid_argument
// for what the GPU cannot express: f16/bf16 buffers, global Allocate, a block barrier inside a thread loop or
// a grid barrier inside a block or thread loop (not every thread would reach it), stores into inputs, or a
// buffer passed twice (it would break __restrict__). A loop run by a whole block whose thread loops share
// memory gets a trailing __syncthreads() unless its body already ends with a block barrier, so that a block
// running several iterations (a grid or block smaller than the loops) never overwrites shared memory that
// slower threads still read.
std::string print_cuda(const LoopFunction& f);

// The same kernel with buffers and variables named by order of first use and the kernel named kernel_name:
// kernels that differ only in names (every cell of a model run one kernel per operator) print the same text,
// so one compiled binary serves them all, each launched with its own buffers. A kernel's out-of-line stage
// functions are named after it (<kernel_name>_stage_N), so kernels of other names can share a source file.
std::string print_cuda_canonical(const LoopFunction& f, const std::string& kernel_name = "ingot_kernel");

// Block = the largest extent of each thread-loop dimension (clamped to CUDA's limits: x, y <= 1024, z <= 64,
// x*y*z <= 1024); grid = the largest extent of each block-loop dimension; cooperative = has a grid barrier.
CudaLaunchConfig cuda_launch_config(const LoopFunction& f);

// The same launch with a grid of at most max_blocks blocks (e.g. the cooperative-launch limit of the
// device); shrinks z, then y, then x. Correct because block loops are grid-stride loops.
CudaLaunchConfig fit_grid(CudaLaunchConfig config, int64_t max_blocks);

}  // namespace ingot

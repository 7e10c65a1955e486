#pragma once
// Host execution, part 1: the block executor (target/host_exec.h). Each CUDA
// thread of a block is an OS thread of a pool, blocks run one after another,
// and __syncthreads() is a barrier across the block's threads.
#include <functional>

#include "target/host_exec_runtime.h"  // cudaError_t

namespace mf::hostexec {

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

extern thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;

void __syncthreads();

// Runs body once per CUDA thread of every block of the grid. A configuration a
// GPU would refuse (an empty grid or block, grid.y or grid.z over 65535, more
// than 1024 threads or block.z over 64) is refused the same way and runs nothing.
cudaError_t run_grid(dim3 grid, dim3 block, const std::function<void()>& body);

}  // namespace mf::hostexec

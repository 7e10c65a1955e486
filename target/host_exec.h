#pragma once
// Host execution: runs the CUDA kernels on a machine without a GPU (docs/USAGE.md, "Kernels without
// a GPU"; docs/ARCHITECTURE.md, "The CUDA code: two libraries, one per execution target").
//
//   - blocks run one at a time; each CUDA thread of a block is a real OS thread,
//     so __syncthreads() is a barrier across them and a missing barrier is a
//     data race that ThreadSanitizer reports;
//   - __shared__ arrays are block-wide storage (function statics: launches are
//     serialized, blocks run one after another);
//   - threadIdx, blockIdx, blockDim, gridDim are per-thread values;
//   - device memory is host memory; streams, events and copies are their host
//     equivalents, in order and immediate, except that a stream being captured
//     records its kernel launches instead of running them (CUDA graphs,
//     host_exec_runtime.h).
//
// Stricter than hardware in one way that matters: there is no implicit warp
// synchrony. Laxer in others, so kernels keep to CUDA's rules by review:
// __shared__ storage starts zeroed and keeps its values between blocks (on a GPU
// it starts undefined); a __syncthreads() that not every thread of a block
// reaches is not reported (it pairs with the wrong barrier or hangs); streams
// impose no ordering to get wrong, everything runs in issue order. Atomics and
// warp shuffles are not provided: no kernel uses them, one that did would not
// compile here.

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)

#include "target/host_exec_blocks.h"
#include "target/host_exec_runtime.h"

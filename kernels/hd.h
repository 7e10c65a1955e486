#pragma once
// MF_HD marks functions that both backends call: the CPU backend compiles them
// as plain C++, nvcc as __host__ __device__. A formula has exactly one definition.
#if defined(__CUDACC__)
#define MF_HD __host__ __device__ __forceinline__
#else
#define MF_HD inline
#endif

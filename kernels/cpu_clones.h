#pragma once
// MF_CPU_CLONES marks a hot CPU loop's function to be compiled three times: for AVX-512
// (x86-64-v4), for AVX2 with FMA (x86-64-v3) and for the baseline; the loader picks the one this
// CPU runs (GCC's and Clang's target_clones, an ifunc), so one binary runs everywhere at each CPU's
// width. Multiply-adds are fused where the CPU has FMA: results may differ from one kind of CPU to
// another (OpenBLAS, which picks its kernels per CPU too, differs the same way), never from one run
// to the next on the same machine.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MF_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define MF_CPU_CLONES
#endif

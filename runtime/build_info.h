#pragma once
// What this binary is: its version, the commit it was built from, and whether it has CUDA and MPI.
#include <string>

namespace mf {

const char* multifit_version();  // "0.16.0"
// the commit's short hash, "+changes" after it when the tree had any; "unknown"
const char* multifit_commit();

// "multifit 0.16.0 (commit 1a2b3c4d5e6f), with CUDA 13.0, with MPI", or "..., without CUDA
// (MULTIFIT_CUDA=OFF)" and "..., without MPI (MULTIFIT_MPI=OFF)".
std::string describe_build();
bool built_with_cuda();  // MULTIFIT_CUDA=ON: the cuda backend is in this build
// Whether it has MPI: built_with_mpi() in runtime/mpi_world.h.

}  // namespace mf

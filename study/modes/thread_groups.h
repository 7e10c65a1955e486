#pragma once
// What streams and packed mode share: each group of a phase's models (one model in streams mode, a
// pack in packed mode) on its own host thread, with its own backend (its own CUDA stream and
// library handles) and pool, in one process. Each data set is uploaded once per device and shared.
// Every thread builds its group, then waits at the start barrier: pools are taken before it and
// released after the phase, so nothing that synchronizes the whole device (cudaMalloc, cudaFree)
// happens while another group trains.
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "study/modes/mode.h"

namespace mf {

// The groups of a phase (modes/mode.h).
using Grouping = std::function<GroupPlan(std::span<const Job> jobs)>;

// packs: the groups are packs, which the reports record and a note lists; else models alone.
std::unique_ptr<Mode> make_thread_groups_mode(ModeKind kind, const RunOptions& options,
                                              Grouping grouping, bool packs);

}  // namespace mf

#pragma once
// One sweep over the ranks of an MPI world (`mpirun -np R multifit run SWEEP`): each rank is a
// runner like any other (study/runner.h), given its shares of the sweep one after another.
//
// Rank 0 hands out the work: units (a model; in packed mode a pack), largest estimated cost first,
// each rank asking as soon as it is free for as many models as it trains at once (its concurrency;
// 1 in serial mode), given no more than its part of what is left. Largest first is Graham's LPT
// rule: the long units start early and the short ones fill in behind them, so the ranks finish
// close together. Rank 0 trains too, on a thread of its own that takes work the same way, while its
// main thread, the only one that calls MPI, answers the others. Each rank journals its models as
// they end (its own journal, run_command's), and sends their reports with its next ask; at the end
// its figures (the messages: study/ranks/messages.h). Rank 0 assembles the run's one report
// (study/report/combine_parts.h): every model with its rank, host and device, and per rank its
// figures.
//
// A rank that dies ends the job (Open MPI's mpirun stops every rank when one is lost); the models
// that ended are in the ranks' journals, and `--resume` trains the rest.
#include <atomic>
#include <vector>

#include "runtime/mpi_world.h"
#include "study/job.h"
#include "study/modes/mode.h"
#include "study/runner.h"

namespace mf {

// What rank 0 hands out: places in the jobs, and their estimated cost.
struct WorkUnit {
  std::vector<size_t> jobs;
  double cost = 0;
};

// A model's estimated cost: its epochs times its parameters (a step's work is about 6 flops per
// parameter and sample, and a sweep's models mostly train on the same rows); 0 for a bad entry,
// which fails at once.
double estimated_cost(const Job& job);

// The units of `jobs` in `mode` for `ranks` ranks that each train up to `capacity` models at once,
// largest estimated cost first (ties in sweep order): one model each, or in packed mode the packs
// (plan_packs), when --pack-size sets no bound at most ceil(jobs / ranks) members each (so that
// every rank gets a pack) and no more than `capacity` (so that a pack trains in one phase).
std::vector<WorkUnit> plan_work(ModeKind mode, const std::vector<Job>& jobs,
                                const RunOptions& options, int ranks, size_t capacity);

// Trains `jobs` over the world's ranks; every rank calls it, with the same jobs. On rank 0 it
// returns the run's report of every job (those of record.ended taken as they are, in sweep order)
// and *exit_code takes the worst of the models'; elsewhere a report with no models, and *exit_code
// as it was. record.on_ended is this rank's journal. A rank stopped (a signal) asks for no more
// work, and the others train the rest; a model handed out but never started names no rank.
RunReport run_over_ranks(ModeKind mode, const std::vector<Job>& jobs, const RunOptions& options,
                         const std::atomic<bool>& stop, int* exit_code, const RunRecord& record,
                         MpiWorld& world);

}  // namespace mf

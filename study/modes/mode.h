#pragma once
// How the models of a run share the machine. The runner (study/runner.h) splits a sweep
// into phases of at most --concurrency models and hands each phase to its mode; a mode builds the
// phase's models, holds them at a start barrier, trains them and returns their reports. Every model
// measures its own training (ModelWorker) and the runner measures the run; a mode measures only
// what only it sees: when its barrier let the models go (Phase::released_s), serial mode what each
// release gave back, processes mode each child's start-up from its spawn.
#include <atomic>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "study/job.h"
#include "study/progress.h"
#include "runtime/names.h"
#include "study/report/report.h"

namespace mf {

enum class ModeKind { serial, streams, processes, packed };
inline constexpr Named<ModeKind> kModeNames[] = {{"serial", ModeKind::serial},
                                                 {"streams", ModeKind::streams},
                                                 {"processes", ModeKind::processes},
                                                 {"packed", ModeKind::packed}};
inline const char* to_string(ModeKind k) { return name_of(kModeNames, k); }

struct Phase {
  std::vector<ModelReport> reports;  // one per job, in the jobs' order
  double released_s = 0;             // clock_seconds() when the start barrier let the models go
  int exit_code = 0;                 // the worst of the models' (ModelWorker::exit_code)
  // in-process modes: the host threads that trained the models; 0 in processes mode
  int threads = 0;
};

class Mode {
 public:
  virtual ~Mode() = default;
  virtual ModeKind kind() const = 0;
  const char* name() const { return to_string(kind()); }
  // Builds, starts together and trains `jobs`; every failure is in a report, never thrown. When
  // *stop turns true (Ctrl-C) the models stop after their current step and report what they did.
  // Epoch lines go to `progress`, by the job's index. `rungs`: the run's scheduler
  // (study/sweep/rungs.h), which every fit asks at its rungs; null: none.
  virtual Phase run(std::span<const Job> jobs, const std::atomic<bool>& stop, Progress& progress,
                    RungJudge* rungs) = 0;
};

std::unique_ptr<Mode> make_mode(ModeKind kind, const RunOptions& options);

// serial: one model after another on one backend (one stream), each pool released before the next.
std::unique_ptr<Mode> make_serial_mode(const RunOptions& options);
// streams: one host thread, backend (its own stream and library handles) and pool per model; the
// data sets uploaded once per device.
std::unique_ptr<Mode> make_streams_mode(const RunOptions& options);
// processes: one worker process per model (posix_spawn of this binary, CUDA_VISIBLE_DEVICES set for
// it), its report returned over a pipe.
std::unique_ptr<Mode> make_processes_mode(const RunOptions& options);
// packed: the models that share a pack_key (nn/model.h), data source and device train as packs of
// at most options.pack_size (0: on the cpu backend ceil(models / training threads), one pack per
// thread; elsewhere no bound), each pack as one model in shared launches; packs side by side as
// streams.
std::unique_ptr<Mode> make_packed_mode(const RunOptions& options);

// The most members a pack may have: the kernels' member grid dimension (grid.y, grid.z) is at most
// 65535.
inline constexpr size_t kMaxPackSize = 65535;
// A phase's groups of models (a pack each in packed mode, a model alone in streams mode): indices
// into its jobs, each job in exactly one group; and, for packs, why each is not part of an earlier
// one (boundaries[g], "" for the first), else no boundaries.
struct GroupPlan {
  std::vector<std::vector<size_t>> groups;
  std::vector<std::string> boundaries;
};

// Packed mode's plan of a phase: packs of job indices, in the order of their first job, members in
// job order; pack_size bounds a pack (0: kMaxPackSize). A job without a spec is a pack of its own.
// A pack's boundary names what set its first job apart from the last pack opened before it on the
// same data and device, as nn/pack_key.h's pack_difference ("fit.batch_size 77, not 64 (pack
// 3)"), or that the pack it would join is full (with `bounded_by`, what set the bound, in words),
// or its data or device where no pack shares them, or that its entry failed.
GroupPlan plan_packs(std::span<const Job> jobs, int pack_size, const std::string& bounded_by = "");

}  // namespace mf

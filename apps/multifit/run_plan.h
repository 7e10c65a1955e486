#pragma once
// What `multifit run` is to do, decided from its command line alone, before any file is opened:
// which modes run, where its journal goes, what --save-best keeps, and the rules its flags must
// keep together. Pure: tested without files (tests/cli/test_run_plan.cpp).
#include <optional>
#include <string>
#include <vector>

#include "apps/multifit/run_args.h"
#include "backends/factory.h"
#include "study/best/names.h"
#include "study/modes/mode.h"

namespace mf {

struct RunPlan {
  bool all = false;             // --mode all: the four modes in turn
  bool automatic = false;       // --mode auto: the fastest in a calibration
  std::vector<ModeKind> modes;  // the modes to run: --mode's one, or the four; empty for auto
  std::string journal;          // --journal, or OUT.journal beside --json OUT; "" for none
  std::optional<SaveBest> save_best;
};

// The modes --mode all runs in turn and --mode auto calibrates, in that order.
std::vector<ModeKind> every_mode();

// The plan of `args`, for one process alone or for the ranks of an MPI job (`under_mpi`). Throws
// UserError with the first rule the flags break (e.g. "--resume with --repeat 2: a journal holds
// one run of each mode, and --repeat makes several; drop one of them"), or naming a --mode that is
// none.
RunPlan plan_run(const RunArgs& args, bool under_mpi);

// Throws UserError when a flag that shares a GPU's SMs (--mps on|off, --sm-share, --sm-partitions)
// is given for a `backend` other than cuda, e.g. "--sm-partitions 4: the cpu backend has no GPU
// whose SMs it could share; give --backend cuda on a machine with a GPU, or drop the flag".
void check_backend_flags(const RunArgs& args, BackendKind backend);

// The flags given that do nothing in this run, each a note without its "multifit: note: ", in the
// order they are said (e.g. "--pack-size has no effect without --mode packed (or all, auto)").
// `backend` is the backend the run resolved to.
std::vector<std::string> no_effect_notes(const RunArgs& args, const RunPlan& plan,
                                         BackendKind backend);

}  // namespace mf

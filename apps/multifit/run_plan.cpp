#include "apps/multifit/run_plan.h"

#include "runtime/error.h"
#include "runtime/names.h"
#include "runtime/output_file.h"

namespace mf {
namespace {

// A rule some flags must keep together: `broken` by this command line, said by `why`.
struct OptionRule {
  bool (*broken)(const RunArgs&, const RunPlan&, bool under_mpi);
  std::string (*why)(const RunArgs&);
};

std::string repeats(const RunArgs& a) { return "--repeat " + std::to_string(a.repeat); }

// In the order they are checked: the first broken is the one said.
const OptionRule kOptionRules[] = {
    {[](const RunArgs& a, const RunPlan&, bool mpi) { return mpi && a.mode == "auto"; },
     [](const RunArgs&) -> std::string {
       return "--mode auto is not available under mpirun: its calibration times the modes in one process; run --mode auto in one process first, then give the mode it chose";
     }},
    {[](const RunArgs& a, const RunPlan&, bool mpi) { return mpi && !a.files.trace.empty(); },
     [](const RunArgs&) -> std::string {
       return "--trace is not available under mpirun: each rank's step timeline is on its own machine's clock; trace a run in one process";
     }},
    {[](const RunArgs& a, const RunPlan&, bool) {
       return a.repeat > 1 && (a.resume || !a.journal.empty());
     },
     [](const RunArgs& a) -> std::string {
       return std::string(a.resume ? "--resume" : "--journal") + " with " + repeats(a) +
              ": a journal holds one run of each mode, and --repeat makes several; drop one of them";
     }},
    {[](const RunArgs& a, const RunPlan&, bool) { return a.repeat > 1 && a.save_best_given; },
     [](const RunArgs& a) -> std::string {
       return "--save-best keeps the models of one run, and " + repeats(a) +
              " makes several: drop one of them";
     }},
    {[](const RunArgs& a, const RunPlan& p, bool) {
       return !a.options.inject_fault.empty() && (p.all || p.automatic || a.solo);
     },
     [](const RunArgs& a) -> std::string {
       const std::string run = a.solo            ? "the solo runs"
                               : a.mode == "all" ? "serial, the first of the four"
                                                 : "the calibration";
       return "--inject-fault with " + (a.solo ? std::string("--solo") : "--mode " + a.mode) +
              ": on the CPU the fault ends the process of an in-process run (" + run +
              "), and the runs after it would never be measured; give one --mode without --solo";
     }},
    {[](const RunArgs& a, const RunPlan& p, bool) { return a.resume && p.journal.empty(); },
     [](const RunArgs&) -> std::string {
       return "--resume needs the journal of the run to resume: give that run's --json OUT (its journal is OUT.journal) or --journal PATH";
     }},
    {[](const RunArgs&, const RunPlan& p, bool) { return is_standard_output(p.journal); },
     [](const RunArgs&) -> std::string {
       return "--journal -: the journal is read back by --resume, so it needs a file; give a file name";
     }},
    {[](const RunArgs& a, const RunPlan&, bool) {
       return a.options.sm_share && a.options.mps == MpsUse::off;
     },
     [](const RunArgs& a) -> std::string {
       return "--sm-share " + std::to_string(*a.options.sm_share) +
              " with --mps off: the share is MPS's (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE); give --mps on (or auto, with a daemon running), or drop --sm-share";
     }},
    {[](const RunArgs& a, const RunPlan& p, bool) { return a.save_best_given && p.all; },
     [](const RunArgs&) -> std::string {
       return "--save-best keeps the models of one run, and --mode all makes four: give one --mode (serial, streams, processes, packed or auto)";
     }},
};

// A flag given that does nothing in this run, said as a note.
struct NoEffect {
  bool (*given_in_vain)(const RunArgs&, const RunPlan&, BackendKind);
  const char* note;  // "%s": the backend
};

// Only for one named mode: all and auto run the mode each flag is for.
bool one_mode_but(const RunPlan& p, ModeKind mode) {
  return !p.modes.empty() && !p.all && p.modes[0] != mode;
}

const NoEffect kNoEffects[] = {
    {[](const RunArgs& a, const RunPlan&, BackendKind b) {
       return !a.options.devices.empty() && b != BackendKind::cuda;
     },
     "--devices is recorded but has no effect on the %s backend"},
    {[](const RunArgs& a, const RunPlan& p, BackendKind) {
       return a.calibration_steps_given && !p.automatic;
     },
     "--calibration-steps has no effect without --mode auto"},
    {[](const RunArgs& a, const RunPlan& p, BackendKind) {
       return a.pack_size_given && one_mode_but(p, ModeKind::packed);
     },
     "--pack-size has no effect without --mode packed (or all, auto)"},
    {[](const RunArgs& a, const RunPlan& p, BackendKind) {
       return a.options.keep_pools && one_mode_but(p, ModeKind::serial);
     },
     "--keep-pools has no effect without --mode serial (or all, auto): the other modes hold every model's pool while they train"},
    {[](const RunArgs& a, const RunPlan& p, BackendKind) {
       return a.options.stall_timeout_s && one_mode_but(p, ModeKind::processes);
     },
     "--stall-timeout has no effect without --mode processes (or all, auto): a model in this process cannot be ended alone"},
    {[](const RunArgs& a, const RunPlan& p, BackendKind) {
       return a.options.mps != MpsUse::as_found && one_mode_but(p, ModeKind::processes);
     },
     "--mps has no effect without --mode processes (or all, auto): MPS is shared between processes, and the other modes train in this one"},
    {[](const RunArgs& a, const RunPlan& p, BackendKind) {
       return a.options.sm_share && one_mode_but(p, ModeKind::processes);
     },
     "--sm-share has no effect without --mode processes (or all, auto): it is each worker process's share under MPS"},
    {[](const RunArgs& a, const RunPlan& p, BackendKind) {
       return a.options.sm_partitions > 0 && one_mode_but(p, ModeKind::streams) &&
              one_mode_but(p, ModeKind::packed);
     },
     "--sm-partitions has no effect without --mode streams or packed (or all, auto): it splits the SMs between the models of one process"},
};

// A flag that needs a GPU, on a backend without one: its name and value as given.
std::string gpu_flag_given(const RunOptions& o) {
  if (o.sm_partitions > 0) return "--sm-partitions " + std::to_string(o.sm_partitions);
  if (o.sm_share) return "--sm-share " + std::to_string(*o.sm_share);
  if (o.mps != MpsUse::as_found) return std::string("--mps ") + to_string(o.mps);
  return "";
}

// --journal, or OUT.journal beside --json OUT; none without either, nor for --repeat (a journal
// holds one run of each mode).
std::string journal_path(const RunArgs& args) {
  if (!args.journal.empty()) return args.journal;
  if (args.repeat > 1 || args.files.json.empty() || is_standard_output(args.files.json)) return "";
  return args.files.json + ".journal";
}

}  // namespace

std::vector<ModeKind> every_mode() {
  return {ModeKind::serial, ModeKind::streams, ModeKind::processes, ModeKind::packed};
}

RunPlan plan_run(const RunArgs& args, bool under_mpi) {
  RunPlan plan;
  plan.all = args.mode == "all";
  plan.automatic = args.mode == "auto";
  if (plan.all)
    plan.modes = every_mode();
  else if (!plan.automatic)
    plan.modes = {parse_named(kModeNames, args.mode, "--mode")};
  plan.journal = journal_path(args);
  if (args.save_best_given)
    plan.save_best = SaveBest{size_t(args.save_best.first), args.save_best.second};
  for (const OptionRule& rule : kOptionRules)
    if (rule.broken(args, plan, under_mpi)) throw UserError(rule.why(args));
  return plan;
}

void check_backend_flags(const RunArgs& args, BackendKind backend) {
  const std::string flag = gpu_flag_given(args.options);
  if (backend != BackendKind::cuda && !flag.empty())
    throw UserError(
        flag + ": the " + std::string(to_string(backend)) +
        " backend has no GPU whose SMs it could share; give --backend cuda on a machine with a GPU, or drop the flag");
}

std::vector<std::string> no_effect_notes(const RunArgs& args, const RunPlan& plan,
                                         BackendKind backend) {
  std::vector<std::string> notes;
  for (const NoEffect& flag : kNoEffects)
    if (flag.given_in_vain(args, plan, backend)) {
      std::string note = flag.note;
      if (const size_t at = note.find("%s"); at != std::string::npos)
        note.replace(at, 2, to_string(backend));
      notes.push_back(note);
    }
  return notes;
}

}  // namespace mf

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
       return "--mode auto is not available under mpirun: its calibration times the modes in one "
              "process; run "
              "--mode auto in one process first, then give the mode it chose";
     }},
    {[](const RunArgs& a, const RunPlan&, bool mpi) { return mpi && !a.files.trace.empty(); },
     [](const RunArgs&) -> std::string {
       return "--trace is not available under mpirun: each rank's step timeline is on its own "
              "machine's clock; "
              "trace a run in one process";
     }},
    {[](const RunArgs& a, const RunPlan&, bool) {
       return a.repeat > 1 && (a.resume || !a.journal.empty());
     },
     [](const RunArgs& a) -> std::string {
       return std::string(a.resume ? "--resume" : "--journal") + " with " + repeats(a) +
              ": a journal holds one run of each mode, and --repeat makes several; drop one of "
              "them";
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
       return "--resume needs the journal of the run to resume: give that run's --json OUT (its "
              "journal is "
              "OUT.journal) or --journal PATH";
     }},
    {[](const RunArgs&, const RunPlan& p, bool) { return is_standard_output(p.journal); },
     [](const RunArgs&) -> std::string {
       return "--journal -: the journal is read back by --resume, so it needs a file; give a file "
              "name";
     }},
    {[](const RunArgs& a, const RunPlan& p, bool) { return a.save_best_given && p.all; },
     [](const RunArgs&) -> std::string {
       return "--save-best keeps the models of one run, and --mode all makes four: give one --mode "
              "(serial, "
              "streams, processes, packed or auto)";
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
     "--keep-pools has no effect without --mode serial (or all, auto): the other modes hold every "
     "model's pool "
     "while they train"},
    {[](const RunArgs& a, const RunPlan& p, BackendKind) {
       return a.options.stall_timeout_s && one_mode_but(p, ModeKind::processes);
     },
     "--stall-timeout has no effect without --mode processes (or all, auto): a model in this "
     "process cannot be "
     "ended alone"},
};

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

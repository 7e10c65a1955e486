// `multifit run`'s plan from its command line alone (apps/multifit/run_plan.h): every rule that
// flags must keep together, and every note for a flag that does nothing, checked without a file.
#include "apps/multifit/run_plan.h"

#include <gtest/gtest.h>

#include "runtime/error.h"

namespace mf {
namespace {

RunArgs args_with(const std::string& mode) {
  RunArgs args;
  args.mode = mode;
  args.options.models_path = "sweep.json";
  return args;
}

// The error plan_run throws, or "" when it plans.
std::string mistake(const RunArgs& args, bool under_mpi = false) {
  try {
    plan_run(args, under_mpi);
    return "";
  } catch (const UserError& e) {
    return e.what();
  }
}

TEST(RunPlan, NamesTheModesOfEachModeFlag) {
  EXPECT_EQ(plan_run(args_with("streams"), false).modes, std::vector<ModeKind>{ModeKind::streams});
  const RunPlan all = plan_run(args_with("all"), false);
  EXPECT_TRUE(all.all);
  EXPECT_EQ(all.modes, (std::vector<ModeKind>{ModeKind::serial, ModeKind::streams,
                                              ModeKind::processes, ModeKind::packed}));
  const RunPlan automatic = plan_run(args_with("auto"), false);
  EXPECT_TRUE(automatic.automatic);
  EXPECT_TRUE(automatic.modes.empty());  // chosen by the calibration
  EXPECT_NE(mistake(args_with("fastest")).find("--mode: 'fastest' is not one of"),
            std::string::npos);
}

TEST(RunPlan, TheJournalIsBesideTheDocumentUnlessNamedOrRepeated) {
  RunArgs args = args_with("serial");
  EXPECT_EQ(plan_run(args, false).journal, "");
  args.files.json = "out/r.json";
  EXPECT_EQ(plan_run(args, false).journal, "out/r.json.journal");
  args.journal = "j.jl";
  EXPECT_EQ(plan_run(args, false).journal, "j.jl");
  args.journal.clear();
  args.repeat = 3;
  EXPECT_EQ(plan_run(args, false).journal, "");  // a journal holds one run of each mode
  args.repeat = 1;
  args.files.json = "-";
  EXPECT_EQ(plan_run(args, false).journal, "");
}

TEST(RunPlan, SaveBestIsKAndTheFolder) {
  RunArgs args = args_with("packed");
  EXPECT_FALSE(plan_run(args, false).save_best);
  args.save_best = {3, "best"};
  args.save_best_given = true;
  const RunPlan plan = plan_run(args, false);
  ASSERT_TRUE(plan.save_best);
  EXPECT_EQ(plan.save_best->k, 3u);
  EXPECT_EQ(plan.save_best->dir, "best");
}

TEST(RunPlan, EachRuleNamesTheFlagsThatBreakIt) {
  const auto expect = [](RunArgs args, bool mpi, const std::string& starts) {
    EXPECT_EQ(mistake(args, mpi).substr(0, starts.size()), starts) << mistake(args, mpi);
  };
  expect(args_with("auto"), true, "--mode auto is not available under mpirun");
  EXPECT_EQ(mistake(args_with("auto"), false), "");
  RunArgs trace = args_with("serial");
  trace.files.trace = "t.json";
  expect(trace, true, "--trace is not available under mpirun");
  EXPECT_EQ(mistake(trace, false), "");
  RunArgs repeat = args_with("serial");
  repeat.repeat = 2;
  repeat.resume = true;
  expect(repeat, false, "--resume with --repeat 2: a journal holds one run of each mode");
  repeat.resume = false;
  repeat.journal = "j.jl";
  expect(repeat, false, "--journal with --repeat 2");
  repeat.journal.clear();
  repeat.save_best_given = true;
  repeat.save_best = {1, "b"};
  expect(repeat, false, "--save-best keeps the models of one run, and --repeat 2 makes several");
  for (const auto& [mode, solo, run] : {std::tuple{"all", false, "serial, the first of the four"},
                                        std::tuple{"auto", false, "the calibration"},
                                        std::tuple{"streams", true, "the solo runs"}}) {
    RunArgs fault = args_with(mode);
    fault.solo = solo;
    fault.options.inject_fault = "m";
    expect(fault, false,
           std::string("--inject-fault with ") + (solo ? "--solo" : std::string("--mode ") + mode) +
               ": on the CPU the fault ends the process of an in-process run (" + run + ")");
  }
  RunArgs fault = args_with("streams");
  fault.options.inject_fault = "m";
  EXPECT_EQ(mistake(fault), "");
  RunArgs resume = args_with("serial");
  resume.resume = true;
  expect(resume, false, "--resume needs the journal of the run to resume");
  resume.files.json = "r.json";
  EXPECT_EQ(mistake(resume), "");
  RunArgs dash = args_with("serial");
  dash.journal = "-";
  expect(dash, false, "--journal -: the journal is read back by --resume");
  RunArgs best = args_with("all");
  best.save_best_given = true;
  best.save_best = {2, "b"};
  expect(best, false, "--save-best keeps the models of one run, and --mode all makes four");
}

TEST(RunPlan, TheFirstRuleBrokenIsTheOneSaid) {
  RunArgs args = args_with("auto");
  args.files.trace = "t.json";
  args.resume = true;  // and no journal
  EXPECT_EQ(mistake(args, true).substr(0, 13), "--mode auto i");
  EXPECT_EQ(mistake(args, false).substr(0, 22), "--resume needs the jou");
}

TEST(RunPlan, AFlagForAnotherModeIsNotedAndNotForAllOrAuto) {
  RunArgs args = args_with("serial");
  args.pack_size_given = args.calibration_steps_given = true;
  args.options.stall_timeout_s = 5;
  args.options.devices = {0};
  args.options.keep_pools = true;  // serial's own: no note
  const std::vector<std::string> notes =
      no_effect_notes(args, plan_run(args, false), BackendKind::cpu);
  ASSERT_EQ(notes.size(), 4u);
  EXPECT_EQ(notes[0], "--devices is recorded but has no effect on the cpu backend");
  EXPECT_EQ(notes[1], "--calibration-steps has no effect without --mode auto");
  EXPECT_EQ(notes[2], "--pack-size has no effect without --mode packed (or all, auto)");
  EXPECT_EQ(notes[3].substr(0, 57), "--stall-timeout has no effect without --mode processes (o");
  // --devices counts
  EXPECT_TRUE(no_effect_notes(args, plan_run(args, false), BackendKind::cuda).size() == 3);
  for (const char* mode : {"all", "auto"}) {
    RunArgs every = args;
    every.mode = mode;
    every.calibration_steps_given = false;
    EXPECT_TRUE(no_effect_notes(every, plan_run(every, false), BackendKind::cuda).empty()) << mode;
  }
  RunArgs streams = args_with("streams");
  streams.options.keep_pools = true;
  EXPECT_EQ(
      no_effect_notes(streams, plan_run(streams, false), BackendKind::cpu).at(0).substr(0, 55),
      "--keep-pools has no effect without --mode serial (or al");
}

// The error check_backend_flags throws, or "" when the flags suit the backend.
std::string backend_mistake(const RunArgs& args, BackendKind backend) {
  try {
    check_backend_flags(args, backend);
    return "";
  } catch (const UserError& e) {
    return e.what();
  }
}

TEST(RunPlan, AShareOfTheSmsNeedsMps) {
  RunArgs args = args_with("processes");
  args.options.sm_share = 25;
  EXPECT_EQ(mistake(args), "");  // auto: a daemon running, checked when the run starts
  args.options.mps = MpsUse::on;
  EXPECT_EQ(mistake(args), "");
  args.options.mps = MpsUse::off;
  EXPECT_EQ(mistake(args),
            "--sm-share 25 with --mps off: the share is MPS's (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE); "
            "give --mps on (or auto, with a daemon running), or drop --sm-share");
}

TEST(RunPlan, FlagsThatShareTheSmsAreRefusedWithoutAGpu) {
  RunArgs args = args_with("streams");
  args.options.sm_partitions = 4;
  EXPECT_EQ(backend_mistake(args, BackendKind::cuda), "");
  EXPECT_EQ(backend_mistake(args, BackendKind::cpu),
            "--sm-partitions 4: the cpu backend has no GPU whose SMs it could share; give "
            "--backend cuda on a machine with a GPU, or drop the flag");
  EXPECT_EQ(backend_mistake(args, BackendKind::host_exec).substr(0, 39),
            "--sm-partitions 4: the host-exec backen");
  RunArgs share = args_with("processes");
  share.options.sm_share = 50;
  EXPECT_EQ(backend_mistake(share, BackendKind::cpu).substr(0, 30),
            "--sm-share 50: the cpu backend");
  RunArgs mps = args_with("processes");
  EXPECT_EQ(backend_mistake(mps, BackendKind::cpu), "");  // auto: nothing asked
  mps.options.mps = MpsUse::off;
  EXPECT_EQ(backend_mistake(mps, BackendKind::cpu).substr(0, 24), "--mps off: the cpu backe");
  mps.options.mps = MpsUse::on;
  EXPECT_EQ(backend_mistake(mps, BackendKind::cuda), "");
}

TEST(RunPlan, SmFlagsForAnotherModeAreNoted) {
  RunArgs args = args_with("serial");
  args.options.mps = MpsUse::on;
  args.options.sm_share = 10;
  args.options.sm_partitions = 2;
  const std::vector<std::string> notes =
      no_effect_notes(args, plan_run(args, false), BackendKind::cuda);
  ASSERT_EQ(notes.size(), 3u);
  EXPECT_EQ(notes[0].substr(0, 50), "--mps has no effect without --mode processes (or a");
  EXPECT_EQ(notes[1].substr(0, 55), "--sm-share has no effect without --mode processes (or a");
  EXPECT_EQ(notes[2].substr(0, 65),
            "--sm-partitions has no effect without --mode streams or packed (o");
  for (const char* mode : {"all", "auto"}) {  // they run the modes the flags are for
    RunArgs every = args;
    every.mode = mode;
    EXPECT_TRUE(no_effect_notes(every, plan_run(every, false), BackendKind::cuda).empty()) << mode;
  }
  RunArgs processes = args;
  processes.mode = "processes";
  EXPECT_EQ(no_effect_notes(processes, plan_run(processes, false), BackendKind::cuda),
            std::vector<std::string>{notes[2]});
  for (const char* mode : {"streams", "packed"}) {
    RunArgs partitioned = args_with(mode);
    partitioned.options.sm_partitions = 2;
    EXPECT_TRUE(
        no_effect_notes(partitioned, plan_run(partitioned, false), BackendKind::cuda).empty())
        << mode;
  }
}

}  // namespace
}  // namespace mf

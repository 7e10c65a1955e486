#pragma once
// The exchange between a processes-mode run (parent.cpp) and each of its child processes
// (child.cpp, `multifit worker NAME`), one line at a time over the child's stdin and stdout:
//
//   parent -> child  {"options": RunOptions, "job": Job}    the job, its spec as the parent read it
//   child -> parent  ready {report}                         built (or failed to): at the start
//   barrier,
//                                                           with its report so far (start-up, plan,
//                                                           pool, data), which stands if it dies
//                                                           later
//   parent -> child  go | stop                              every child is at the barrier | Ctrl-C
//   child -> parent  step N                                 training goes on: N steps taken so far;
//                                                           about once a second while N moves
//   child -> parent  epoch LINE                             an epoch's progress line, as it ends
//   child -> parent  rung EPOCHS VALUE                      with a scheduler: its metric at a rung
//                                                           (VALUE "none" where it has none), and
//                                                           it waits for the verdict
//   parent -> child  rung go | rung stop                    the verdict, from the run's table
//                                                           (study/sweep/rungs.h), once it has one
//   child -> parent  {report}                               the model's report in its one JSON form
//                                                           (study/report/json.cpp), timeline
//                                                           included
//
// A child that dies leaves its model failed with how it ended, and with what its ready line said;
// the others go on. One that stalls
// (RunOptions::stall_timeout_s: no step for that long, or no CPU time used while it builds) is
// killed, its model failed as "stalled".
#include <string_view>

namespace mf {

inline constexpr std::string_view kReady = "ready ";  // followed by the report so far
inline constexpr std::string_view kGo = "go";
inline constexpr std::string_view kStop = "stop";
inline constexpr std::string_view kStep = "step ";    // followed by the steps taken so far
inline constexpr std::string_view kEpoch = "epoch ";  // followed by the line
inline constexpr std::string_view kRung = "rung ";    // followed by the epochs and the value
inline constexpr std::string_view kRungGo = "rung go";
inline constexpr std::string_view kRungStop = "rung stop";
inline constexpr double kHeartbeat_s = 1;  // the most often a child says "step N"

// The body of `multifit worker`: reads its job from stdin, builds, waits for go, trains, and
// returns the model's exit code (ModelWorker::exit_code).
int run_child_process();

}  // namespace mf

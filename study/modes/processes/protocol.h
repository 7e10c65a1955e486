#pragma once
// The exchange between a processes-mode run (parent.cpp) and each of its child processes
// (child.cpp, `multifit worker NAME`), one line at a time over the child's stdin and stdout:
//
//   parent -> child  {"options": RunOptions, "job": Job}    the job, its spec as the parent read it
//   child -> parent  ready                                  built (or failed to): at the start barrier
//   parent -> child  go | stop                              every child is at the barrier | Ctrl-C
//   child -> parent  epoch LINE                             an epoch's progress line, as it ends
//   child -> parent  {report}                               the model's report in its one JSON form
//                                                           (study/report/json.cpp), timeline included
//
// A child that dies leaves its model failed with how it ended; the others go on.
#include <string_view>

namespace mf {

inline constexpr std::string_view kReady = "ready";
inline constexpr std::string_view kGo = "go";
inline constexpr std::string_view kStop = "stop";
inline constexpr std::string_view kEpoch = "epoch ";  // followed by the line

// The body of `multifit worker`: reads its job from stdin, builds, waits for go, trains, and
// returns the model's exit code (ModelWorker::exit_code).
int run_child_process();

}  // namespace mf

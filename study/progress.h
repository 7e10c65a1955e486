#pragma once
// The progress of a run: each model's latest epoch line (Keras's, from fit). With several models on
// a terminal that has a row for each, one live line per model, redrawn in place; otherwise (one
// model, more models than rows, a file, a pipe, CI) plain lines as they come, prefixed with the
// model's name when there are several. Thread-safe:
// the streams mode's threads and the processes mode's reader report at once.
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace mf {

struct ModelReport;  // study/report/report.h

class Progress {
 public:
  // Nothing is shown when quiet; live lines only when stderr is a terminal with a row for each of
  // several models.
  Progress(std::vector<std::string> names, bool quiet);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Model `model` (its place in the run) finished an epoch: `line` is fit's line.
  void epoch(size_t model, const std::string& line);
  // Model `model`'s report is final, with its exit code (ModelWorker::exit_code): it trained, failed, diverged or was interrupted (a mode calls this as each model
  // ends, from any thread; a later call for the same model, a report corrected after the phase,
  // supersedes it). Passed to the sink of on_ended (the run's journal) under the lock, so that reports
  // reach it one at a time.
  void ended(size_t model, const ModelReport& report, int exit_code);
  using EndedSink = std::function<void(size_t model, const ModelReport& report, int exit_code)>;
  void on_ended(EndedSink sink) { ended_ = std::move(sink); }
  // A message between models (serial's release of a model's memory), shown above the live lines;
  // nothing when quiet or for one model.
  void note(const std::string& line);

 private:
  void redraw();  // the live lines, from the top of the block; mutex_ held

  std::vector<std::string> names_, lines_;
  EndedSink ended_;
  bool quiet_, live_;
  size_t drawn_ = 0;  // live lines on the screen
  std::mutex mutex_;
};

}  // namespace mf

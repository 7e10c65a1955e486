#pragma once
// The progress of a run: each model's latest epoch line (Keras's, from fit). With several models on
// a terminal that has a row for each, one live line per model, redrawn in place. Plain lines as
// they come, prefixed with the model's name when there are several, for one model, for up to
// kPlainLinesModels on a file or pipe (CI), and for any number with --verbose. A run of more models
// than that shows one status line instead: live on a terminal; on a file or pipe every
// kStatusEvery_s and when the last model ends (live lines are redrawn at most kRedrawsPerSecond,
// and once a second while nothing happens):
//
//   multifit: 96/243 models ended (90 ok, 6 stopped) in 4 s, about 6 s left; best val_accuracy
//   0.9492 (tiny-t017)
//
// (the time left is the time so far over the epochs done, for those left, a model that ended having
// done all of its; the best is by --rank-by
// or the run's default metric, study/report/ranking.h). Thread-safe: the streams mode's threads and
// the processes mode's reader report at once.
//
// When nearly all of a phase's models have ended and the rest run on long after, one line says
// which
// ("multifit: still running: m17 (Epoch 3/10 done, 42 s since its last step), ..."), so that a run
// waiting on one model says so. A thread of its own watches, since the modes block in their phase
// and would each need to call a tick; it wakes a few times a second and takes the lock only then.
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "study/report/ranking.h"

namespace mf {

// At most this many models' epoch lines go to a file or pipe without --verbose: a 32-model sweep's
// 2 epochs in 4 modes were 256 lines.
inline constexpr size_t kPlainLinesModels = 8;
inline constexpr double kStatusEvery_s = 10;
// a terminal's live lines at most, however fast the epochs
inline constexpr double kRedrawsPerSecond = 10;
// How the lines are shown besides quiet: every model's (--verbose), and the status line's metric.
// The run's status as a caller shows it in place of the status line (the Python package's progress
// bar): the models ended of those that train, their statuses counted ("12 ok, 1 failed") and the
// best so far ("best val_accuracy 0.8717 (trial-3)", or ""). Called as models end, from the thread
// that ended one, one call at a time: at most 10 times a second, and always for the last.
using StatusSink = std::function<void(size_t ended, size_t models, const std::string& statuses,
                                      const std::string& best)>;

struct ProgressStyle {
  bool verbose = false;
  // absent: the first metric the first model to end has (first_rank_by)
  std::optional<RankBy> rank_by;
  // each model's epochs by its place, for the time left; 0 or absent: unknown
  std::vector<int> epochs;
  // where set, the status goes here and the run prints no line of its own per model or epoch
  // (verbose's epoch lines and the notes aside)
  StatusSink status;
};

// When the "still running" line is said: once no more than `most` models of a phase are left (or a
// tenth of it, when that is more), the last of the others ended `after_s` seconds ago; again every
// `every_s` seconds while that holds.
struct StillRunning {
  size_t most = 1;
  double after_s = 10, every_s = 30;
  size_t names = 4;  // the models named; the rest are counted ("and 12 others")
};

class Progress {
 public:
  // Nothing is shown when quiet; live lines only when stderr is a terminal with a row for each of
  // several models. `names` are by the models' places in the sweep, "" for a place not of this run
  // (a shard's, another rank's). The models train in `order` (their places in `names`; empty: all,
  // in their order) in phases of `phase` (the runner's concurrency; 0: one phase), each phase
  // ending before the next begins; a model not in `order` does not train (a resumed run's journal
  // has it).
  Progress(std::vector<std::string> names, bool quiet, size_t phase = 0, StillRunning still = {},
           std::vector<size_t> order = {}, ProgressStyle style = {});
  ~Progress();  // stops the watch
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Model `model` (its place in the run) finished an epoch: `line` is fit's line.
  void epoch(size_t model, const std::string& line);
  // Model `model` is taking training steps (processes mode's heartbeat): shown nowhere but in the
  // "still running" line, as the time since its last step.
  void step(size_t model);
  // Model `model`'s report is final, with its exit code (ModelWorker::exit_code): it trained,
  // failed, diverged or was interrupted (a mode calls this as each model ends, from any thread; a
  // later call for the same model, a report corrected after the phase, supersedes it). Passed to
  // the sink of on_ended (the run's journal) under the lock, so that reports reach it one at a
  // time.
  void ended(size_t model, const ModelReport& report, int exit_code);
  using EndedSink = std::function<void(size_t model, const ModelReport& report, int exit_code)>;
  void on_ended(EndedSink sink) { ended_ = std::move(sink); }
  // A message between models (serial's release of a model's memory), shown above the live lines;
  // nothing when quiet or for one model.
  void note(const std::string& line);
  // A message about one model (serial's release of its memory): a note where each model's lines are
  // shown, nothing where one status line stands for them.
  void model_note(const std::string& line);

 private:
  struct Model {
    // clock_seconds() of its last step and epoch line
    std::optional<double> last_step_s, last_epoch_s;
    std::optional<double> ended_s;  // when its report was final
    std::string status;             // its report's status ("interrupted" for exit code 130)
    std::optional<RankKey> rank;    // its place by the status line's metric
    std::optional<double> value;    // and its value of it
    int epochs_done = 0;            // its epoch lines so far
  };
  void redraw();  // the live lines, from the top of the block; mutex_ held
  std::string status_line(double now) const;  // the one line of a run of many; mutex_ held
  std::string statuses() const;  // the ended models' statuses counted ("12 ok"); mutex_ held
  std::string best() const;      // "best METRIC VALUE (NAME)", or ""; mutex_ held
  void say_status(double now);   // the status line on a file or pipe; mutex_ held
  void print_above(const std::string& line);  // a line above the live block; mutex_ held
  void watch();                               // the watch thread's body
  std::string still_running(double now);      // the line due now, or ""; mutex_ held

  std::vector<std::string> names_, lines_;
  std::vector<Model> models_;
  std::vector<size_t> order_;  // the models that train, in order
  size_t named_;               // the models of this run: those with a name
  EndedSink ended_;
  bool quiet_;
  bool summary_;  // one status line rather than each model's
  bool live_;     // redrawn in place: each model's lines, or the status line
  size_t phase_;
  ProgressStyle style_;
  double start_s_;                 // when the run began, for the time left
  size_t models_ended_ = 0;        // of order_ (a report corrected later is not counted again)
  double status_said_s_;           // when a file's or pipe's status line was last said
  double drawn_s_ = -1e300;        // when the live status line was last drawn (at most 10 a second)
  double status_sent_s_ = -1e300;  // when the status sink was last called (as often)
  StillRunning still_;
  double said_s_ = -1e300;  // when the still-running line was last said
  size_t drawn_ = 0;        // live lines on the screen
  std::mutex mutex_;
  std::condition_variable wake_;  // the destructor wakes the watch to end it
  bool closing_ = false;
  std::thread watch_;  // last: started once the rest is made; none when quiet or for one model
};

}  // namespace mf

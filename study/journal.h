#pragma once
// A run's journal, so that a sweep survives the runner's death: JSON Lines, a header naming the sweep
// then one line per model as it ends, in the order they end:
//
//   {"journal": "multifit", "version": 1, "models": N, "backend": "cpu", "mode": "packed", "solo": false}
//   {"mode": "serial", "index": 3, "name": "m3", "spec": {...}, "exit_code": 0, "report": {...}}
//   {"auto": {...}}    --mode auto's calibration and choice, once it is made
//
// A model line is its report in the document's form (no step timeline: that belongs to the run that
// measured it), its exit code, and its spec as it trained (overrides applied; null for a bad entry).
// Each line goes to the file with one write(2) as its model ends, so a runner killed with SIGKILL
// loses only the models in flight; the file is synced (fdatasync) at most once a second and at the
// end, so a machine that goes down loses at most that second's lines as well. A model interrupted by
// Ctrl-C (exit code 130) is not recorded: it did not end, and a resumed run trains it.
//
// `multifit run --resume` reads the journal back (read_journal) and the runner skips every model it
// records (runner.h: run_mode's `ended`); a later line of a model supersedes an earlier one. A run
// that starts afresh over a journal keeps the old one as PATH.previous.
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "study/job.h"
#include "study/report/report.h"

namespace mf {

// A model the journal recorded as ended.
struct EndedModel {
  ModelReport report;
  int exit_code = 0;
};
// By mode name, then by the model's index in the sweep.
using EndedModels = std::map<std::string, std::map<size_t, EndedModel>>;

// What a journal is of, besides its sweep: the command line's choices that a resumed run must repeat.
struct JournalRun {
  std::string backend;  // as resolved: cpu, cuda, host-exec
  std::string mode;     // --mode as given: a mode, all or auto
  bool solo = false;    // --solo
};

struct JournalContents {
  EndedModels ended;
  nlohmann::json auto_choice;  // null when the journal has none
  size_t lines = 0;            // model lines read (a model journaled twice counts twice)
  size_t whole_bytes = 0;      // up to the end of its last whole line: what a resumed run appends after
};

// Reads the journal at `path` of a run `run` of `jobs`. Throws UserError, naming the file, the line
// and the field, for a file that is missing or not a journal, one of another sweep (its model count,
// a model's name) or of another backend, --mode or --solo, a model whose spec changed since (the
// first field that differs, both values), and a bad line; a last line cut short (the runner died
// writing it) is left out.
JournalContents read_journal(const std::string& path, const std::vector<Job>& jobs, const JournalRun& run);

class Journal {
 public:
  // Opens `path`: with `resumed` (what read_journal read), to append after its last whole line; else
  // a new journal, its header written, an earlier file there kept as PATH.previous. Throws
  // SystemError with the OS's reason, leaving no journal without its header behind.
  Journal(std::string path, const std::vector<Job>& jobs, const JournalRun& run, const JournalContents* resumed);
  ~Journal();  // syncs and closes
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Records model `job` of a run in `mode` as ended (not when exit_code is 130). Thread-safe.
  void ended(const std::string& mode, const Job& job, const ModelReport& report, int exit_code);
  // Records --mode auto's choice.
  void auto_choice(const nlohmann::json& choice);

  // The first write that failed, with the OS's reason ("" while none has): the journal stops there,
  // its lines before it whole, and the run goes on without it.
  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }
  const std::string& previous() const { return previous_; }  // where an earlier journal was kept, or ""

 private:
  void append(const nlohmann::json& line);  // mutex_ held

  std::string path_, previous_;
  int fd_ = -1;
  double synced_s_ = 0;  // clock_seconds() at the last fdatasync
  std::string error_;
  std::mutex mutex_;
};

}  // namespace mf

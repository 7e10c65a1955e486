#pragma once
// A run's journal, so that a sweep survives the runner's death: JSON Lines, a header naming the
// sweep then one line per model as it ends, in the order they end:
//
//   {"journal": "multifit", "version": 1, "models": N, "backend": "cpu", "mode": "packed", "solo":
//   false,
//    "sweep": "tiny-sweep", "fingerprint": "9c1e...", "shard": {"index": 1, "count": 3}}
//   {"mode": "serial", "index": 3, "name": "m3", "spec": {...}, "exit_code": 0, "report": {...}}
//   {"auto": {...}}    --mode auto's calibration and choice, once it is made
//
// A model line is its report in the document's form (no step timeline: that belongs to the run that
// measured it), its exit code, and its spec as it trained (overrides applied; null for a bad
// entry). Each line goes to the file with one write(2), made and written by the journal's writer
// thread just after its model ends (the training threads only queue it), so a runner killed with
// SIGKILL loses the models in flight and those ended in the last few milliseconds; the file is
// synced (fdatasync) at most once a second and at the end, so a machine that goes down loses at
// most that second's lines as well. A model interrupted by Ctrl-C (exit code 130) is not recorded:
// it did not end, and a resumed run trains it.
//
// `models` is the whole sweep's count and `shard` the run's --shard (null: the whole sweep), so
// that a shard's journal is resumed only as that shard; `sweep` and `fingerprint` name the sweep
// (SweepIdentity, study/report/report.h) for `multifit merge`, which takes a journal as a part
// (study/sweep/merge.h). A journal written before they were has neither: resumed as of the whole
// sweep.
//
// `multifit run --resume` reads the journal back (read_journal) and the runner skips every model it
// records (runner.h: run_mode's `ended`); a later line of a model supersedes an earlier one. A run
// that starts afresh over a journal keeps the old one as PATH.previous.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
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

// What a journal is of, besides its sweep: the command line's choices that a resumed run must
// repeat.
struct JournalRun {
  std::string backend;         // as resolved: cpu, cuda, host-exec
  std::string mode;            // --mode as given: a mode, all or auto
  bool solo = false;           // --solo
  SweepIdentity sweep;         // the sweep's name, whole model count and fingerprint
  std::optional<Shard> shard;  // --shard; absent: the whole sweep
  // The sweep's scheduler (its verdicts are in the journal's reports); absent: none
  std::optional<SchedulerSpec> scheduler;
};

// A journal's first line: what it is of, which a resumed run must repeat and a merge checks a part
// by. Its form is the header above: JournalRun's fields, its sweep's as "sweep" (the name),
// "models" and "fingerprint", under the form's own "journal": "multifit" and "version".
inline constexpr int kJournalVersion = 1;
struct JournalHeader {
  int version = kJournalVersion;  // this multifit reads only its own
  // A journal from before --shard names no sweep: its sweep's name and fingerprint read as "", and
  // its shard as none; from before the scheduler, its scheduler as none.
  JournalRun run;
};
void to_json(nlohmann::json& j, const JournalHeader& header);
// A header of another version is read no further than its version (its fields are that version's).
// Throws nlohmann::json's exceptions for a field missing or of another type, UserError for a name
// that no enum value has, std::invalid_argument for a shard that is none.
void from_json(const nlohmann::json& j, JournalHeader& header);
// Whether `line` is a multifit journal's header, of whatever version: {"journal": "multifit", ...}.
bool is_journal_header(const nlohmann::json& line);

struct JournalContents {
  EndedModels ended;
  nlohmann::json auto_choice;  // null when the journal has none
  size_t lines = 0;            // model lines read (a model journaled twice counts twice)
  size_t whole_bytes = 0;  // up to the end of its last whole line: what a resumed run appends after
};

// Reads the journal at `path` of a run `run` of `jobs` (the run's models: all of the sweep's, or
// its shard's). Throws UserError, naming the file, the line and the field, for a file that is
// missing or not a journal, one of another sweep (its model count, a model's name), of another
// backend,
// --mode, --solo or --shard, a model whose spec changed since (the first field that differs, both
// values), and a bad line; a last line cut short (the runner died writing it) is left out.
JournalContents read_journal(const std::string& path, const std::vector<Job>& jobs,
                             const JournalRun& run);

// A journal's lines as they are, before any run checks them (read_journal does; merge takes a
// journal as a part of a sweep it has no jobs of).
struct JournalModelLine {
  size_t line = 0;  // its line number, from 1 (the header's)
  std::string mode, name;
  size_t index = 0;
  nlohmann::json spec;  // as it trained; null for a bad entry
  EndedModel ended;     // its report (no step timeline) and exit code
};
struct JournalLines {
  JournalHeader header;                  // of this version
  std::vector<JournalModelLine> models;  // in the order written
  nlohmann::json auto_choice;            // null when the journal has none
  size_t cut_line = 0;     // the last line, cut short by the runner's death and left out; 0: none
  size_t whole_bytes = 0;  // up to the end of its last whole line
};
// Splits `text`, the journal file `path`, into its lines. Throws UserError "PATH:LINE: ..." for a
// file that is no multifit journal of this version, a header that cannot be read, a line that is
// not JSON (but a last line cut short), and a model line without what it needs or whose report
// cannot be read.
JournalLines parse_journal(const std::string& path, const std::string& text);

class Journal {
 public:
  // Opens `path`: with `resumed` (what read_journal read), to append after its last whole line;
  // else a new journal, its header written, an earlier file there kept as PATH.previous. Throws
  // SystemError with the OS's reason, leaving no journal without its header behind.
  Journal(std::string path, const JournalRun& run, const JournalContents* resumed);
  ~Journal();  // syncs and closes
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Records model `job` of a run in `mode` as ended (not when exit_code is 130): queues its line
  // for the writer thread and returns. Thread-safe.
  void ended(const std::string& mode, const Job& job, const ModelReport& report, int exit_code);
  // Records --mode auto's choice, after the lines queued before it.
  void auto_choice(const nlohmann::json& choice);

  // The first write that failed, with the OS's reason ("" while none has), once every line queued
  // so far is written: the journal stops there, its lines before it whole, and the run goes on
  // without it.
  std::string error();
  const std::string& path() const { return path_; }
  const std::string& previous() const {
    return previous_;
  }  // where an earlier journal was kept, or ""

 private:
  void queue(std::function<nlohmann::json()> line);
  void write_queued();  // the writer thread: makes and appends each queued line, in order
  // Writes one line: in the constructor, then on the writer thread alone.
  void append(const nlohmann::json& line);

  std::string path_, previous_;
  int fd_ = -1;
  // clock_seconds() at the last fdatasync, or at the opening: a run shorter than the interval syncs
  // once, at its end
  double synced_s_;
  std::string error_;  // set by append; read under mutex_ once the writer is idle
  std::mutex mutex_;   // guards the fields below
  std::deque<std::function<nlohmann::json()>> queued_;  // lines to make and write, in order
  bool writing_ = false;                                // the writer holds a line
  bool closing_ = false;                                // the destructor has begun
  std::condition_variable queued_or_closing_, written_;
  std::thread writer_;
};

}  // namespace mf

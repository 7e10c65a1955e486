#include "study/sweep/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "runtime/clock.h"
#include "runtime/error.h"
#include "runtime/json_forms.h"
#include "study/sweep/shard.h"

namespace mf {
namespace {

using nlohmann::json;

constexpr double kSyncInterval_s = 1;

json spec_of(const Job& job) { return job.spec ? to_json(*job.spec) : json(nullptr); }

// The first field where `was` and `now` differ, as "optimizer.learning_rate: 0.01 then, 0.02 now",
// or "".
std::string first_difference(const json& was, const json& now, const std::string& at) {
  if (was.is_object() && now.is_object()) {
    for (const auto& [key, value] : was.items()) {
      const std::string field = at.empty() ? key : at + "." + key;
      if (!now.contains(key)) return field + ": " + value.dump() + " then, absent now";
      if (std::string d = first_difference(value, now[key], field); !d.empty()) return d;
    }
    for (const auto& [key, value] : now.items())
      if (!was.contains(key))
        return (at.empty() ? key : at + "." + key) + ": absent then, " + value.dump() + " now";
    return "";
  }
  if (was.is_array() && now.is_array() && was.size() == now.size()) {
    for (size_t i = 0; i < was.size(); ++i)
      if (std::string d = first_difference(was[i], now[i], at + "[" + std::to_string(i) + "]");
          !d.empty())
        return d;
    return "";
  }
  return was == now
             ? ""
             : (at.empty() ? "the spec" : at) + ": " + was.dump() + " then, " + now.dump() + " now";
}

std::string os_reason() { return std::strerror(errno); }

}  // namespace

void to_json(json& j, const JournalHeader& h) {
  const JournalRun& run = h.run;
  j = {{"journal", "multifit"},      {"version", h.version},
       {"models", run.sweep.models}, {"backend", run.backend},
       {"mode", run.mode},           {"solo", run.solo},
       {"sweep", run.sweep.name},    {"fingerprint", run.sweep.fingerprint},
       {"shard", run.shard},         {"scheduler", run.scheduler}};
}

void from_json(const json& j, JournalHeader& h) {
  h = JournalHeader{};
  h.version = j.at("version");
  if (h.version != kJournalVersion) return;
  JournalRun& run = h.run;
  run.sweep.models = j.at("models");
  run.backend = j.at("backend");
  run.mode = j.at("mode");
  run.solo = j.at("solo");
  run.sweep.name = j.value("sweep", "");  // absent from journals before --shard, as the three below
  run.sweep.fingerprint = j.value("fingerprint", "");
  j.value("shard", json()).get_to(run.shard);
  j.value("scheduler", json()).get_to(run.scheduler);  // and before the scheduler
}

bool is_journal_header(const json& line) {
  if (!line.is_object()) return false;
  const auto marker = line.find("journal");
  return marker != line.end() && *marker == "multifit";
}

namespace {

[[noreturn]] void fail(const std::string& path, size_t line, const std::string& problem) {
  throw UserError(path + ":" + std::to_string(line) + ": " + problem);
}

// The header on the journal's first line, of this version.
JournalHeader header_of(const std::string& path, const std::string& first) {
  json head;
  try {
    head = json::parse(first);
  } catch (const json::exception&) {
    fail(path, 1, "not a multifit journal (its first line is not JSON)");
  }
  if (!is_journal_header(head)) fail(path, 1, "not a multifit journal");
  JournalHeader header;
  try {
    header = head.get<JournalHeader>();
  } catch (const std::exception& e) {  // a field, a shard that is none, a scheduler's name
    fail(path, 1, "its header cannot be read: " + without_tag(e.what()));
  }
  if (header.version != kJournalVersion)
    fail(path, 1,
         "a journal of version " + std::to_string(header.version) +
             "; this multifit reads version " + std::to_string(kJournalVersion));
  return header;
}

// Line `at`, a model's, read.
JournalModelLine model_line(const std::string& path, size_t at, const json& line) {
  JournalModelLine model;
  const json* report = nullptr;
  try {
    model.line = at;
    model.index = line.at("index");
    model.name = line.at("name");
    model.mode = line.at("mode");
    model.spec = line.at("spec");
    model.ended.exit_code = line.at("exit_code");
    report = &line.at("report");
  } catch (const json::exception& e) {
    fail(path, at, "a model line without what it needs: " + without_tag(e.what()));
  }
  try {
    report->get_to(model.ended.report);
  } catch (const std::exception& e) {  // a field of the report, a status that is no status's name
    fail(path, at,
         "model '" + model.name + "': its report cannot be read: " + without_tag(e.what()));
  }
  return model;
}

// Throws UserError "PATH:1: ..." unless the journal's run `was` is `run` as a resumed run must
// repeat it: the same sweep size, backend, --mode, --solo, --shard and scheduler.
void check_same_run(const std::string& path, const JournalRun& was, const JournalRun& run) {
  if (was.sweep.models != run.sweep.models)
    fail(path, 1,
         "a journal of a sweep of " + std::to_string(was.sweep.models) +
             " models; this sweep has " + std::to_string(run.sweep.models) + ": another sweep");
  if (was.backend != run.backend)
    fail(path, 1,
         "a journal of a run on the " + was.backend + " backend; this run is on " + run.backend +
             "; resume with --backend " + was.backend);
  if (was.mode != run.mode)
    fail(path, 1,
         "a journal of a run with --mode " + was.mode + "; this run's is " + run.mode +
             "; resume with --mode " + was.mode);
  if (was.solo != run.solo)
    fail(path, 1,
         std::string("a journal of a run ") + (run.solo ? "without" : "with") + " --solo; resume " +
             (run.solo ? "without" : "with") + " it");
  const auto same_shard = [](const std::optional<Shard>& a, const std::optional<Shard>& b) {
    return a.has_value() == b.has_value() && (!a || (a->index == b->index && a->count == b->count));
  };
  if (!same_shard(was.shard, run.shard))
    fail(
        path, 1,
        "a journal of " + shard_words(was.shard) + "; this run is of " + shard_words(run.shard) +
            ": resume " +
            (was.shard ? "with --shard " + to_string(*was.shard) : std::string("without --shard")));
  // Its models were stopped by its scheduler's verdicts: another scheduler would have stopped
  // others.
  if (const json scheduler = was.scheduler; scheduler != json(run.scheduler))
    fail(path, 1,
         "a journal of a run with the scheduler " + scheduler.dump() + "; this run's is " +
             json(run.scheduler).dump() +
             ": resume with the sweep file's scheduler as it was, or start afresh");
}

// Throws UserError "PATH:LINE: ..." unless `line`'s model is the run's at its place: of `jobs`,
// with the same name and spec.
void check_same_model(const std::string& path, const JournalModelLine& line,
                      const std::vector<Job>& jobs, const JournalRun& run) {
  if (line.index >= run.sweep.models)
    fail(path, line.line,
         "model #" + std::to_string(line.index) + " '" + line.name + "': this sweep has " +
             std::to_string(run.sweep.models) + " models: another sweep");
  const Job* job = job_at(jobs, line.index);
  if (!job)
    fail(path, line.line,
         "model #" + std::to_string(line.index) + " '" + line.name + "' is not of " +
             shard_words(run.shard) + ": a journal of another run");
  if (line.name != job->name)
    fail(path, line.line,
         "model #" + std::to_string(line.index) + " is '" + line.name + "' but this sweep's is '" +
             job->name + "': another sweep");
  if (const std::string d = first_difference(line.spec, spec_of(*job), ""); !d.empty())
    fail(path, line.line,
         "model '" + line.name + "' changed since it was journaled: " + d +
             "; resume with the sweep and overrides it ran with, or start afresh without --resume");
}

}  // namespace

JournalLines parse_journal(const std::string& path, const std::string& all) {
  JournalLines journal;
  std::vector<std::string> lines;
  for (size_t begin = 0; begin < all.size();) {
    const size_t end = std::min(all.find('\n', begin), all.size());
    lines.push_back(all.substr(begin, end - begin));
    begin = end + 1;
  }
  const bool cut_short = !all.empty() && all.back() != '\n';  // the last line has no end
  journal.whole_bytes = all.rfind('\n') == std::string::npos ? 0 : all.rfind('\n') + 1;
  if (lines.empty()) fail(path, 1, "empty: not a multifit journal");
  journal.header = header_of(path, lines[0]);
  for (size_t n = 1; n < lines.size(); ++n) {
    const size_t at = n + 1;
    json line;
    try {
      line = json::parse(lines[n]);
    } catch (const json::exception& e) {
      if (n + 1 == lines.size() && cut_short) {  // the runner died writing it
        journal.cut_line = at;
        break;
      }
      fail(path, at, "not a JSON line: " + without_tag(e.what()));
    }
    if (line.is_object() && line.contains("auto"))
      journal.auto_choice = line.at("auto");
    else
      journal.models.push_back(model_line(path, at, line));
  }
  return journal;
}

JournalContents read_journal(const std::string& path, const std::vector<Job>& jobs,
                             const JournalRun& run) {
  if (std::filesystem::is_directory(path))
    throw UserError(
        "--resume: " + path +
        " is a folder, not a journal; give the --json or --journal of the run to resume");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw UserError(
        "--resume: no journal at " + path + " (" + os_reason() +
        "); give the --json or --journal of the run to resume, or run without --resume");
  const JournalLines journal =
      parse_journal(path, std::string(std::istreambuf_iterator<char>(in), {}));
  check_same_run(path, journal.header.run, run);
  JournalContents contents;
  contents.auto_choice = journal.auto_choice;
  contents.whole_bytes = journal.whole_bytes;
  for (const JournalModelLine& line : journal.models) {
    check_same_model(path, line, jobs, run);
    contents.ended[line.mode][line.index] = line.ended;
    ++contents.lines;
  }
  return contents;
}

Journal::Journal(std::string path, const JournalRun& run, const JournalContents* resumed)
    : path_(std::move(path)) {
  std::error_code exists;
  if (!resumed && std::filesystem::file_size(path_, exists) > 0 && !exists) {
    previous_ = path_ + ".previous";
    if (std::rename(path_.c_str(), previous_.c_str()) != 0)
      throw SystemError(path_ + ": cannot keep the earlier journal as " + previous_ + ": " +
                        os_reason());
  }
  fd_ = open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (resumed ? 0 : O_TRUNC),
             0644);
  synced_s_ = clock_seconds();
  if (fd_ < 0) throw SystemError(path_ + ": cannot open the journal: " + os_reason());
  // A resumed journal goes on after its last whole line: a line cut short by the runner's death is
  // cut off.
  if (resumed && ftruncate(fd_, off_t(resumed->whole_bytes)) != 0) {
    const std::string why = os_reason();
    close(fd_);
    throw SystemError(path_ + ": cannot cut off the journal's last line, cut short: " + why);
  }
  if (!resumed) append(JournalHeader{kJournalVersion, run});
  if (error_.empty()) {
    try {
      writer_ = std::thread([this] { write_queued(); });
      return;
    } catch (const std::system_error& e) {  // no thread for it (a limit on threads or memory)
      error_ = path_ + ": cannot start the journal's writer thread: " + e.what();
    }
  }
  close(fd_);
  fd_ = -1;
  unlink(path_.c_str());  // a journal without its header could never be resumed from
  // the earlier one back in its place
  if (!previous_.empty()) std::rename(previous_.c_str(), path_.c_str());
  throw SystemError(error_);
}

Journal::~Journal() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  queued_or_closing_.notify_one();
  writer_.join();  // after it has written every line queued
  if (error_.empty()) fdatasync(fd_);
  close(fd_);
}

void Journal::ended(const std::string& mode, const Job& job, const ModelReport& report,
                    int exit_code) {
  if (exit_code == kExitInterrupted) return;  // interrupted: not ended
  // The line is made on the writer thread: making it took 58 µs a model of a tiny sweep, which a
  // pack's thread paid for each of its 512 members in turn while the run's other cores idled.
  queue([mode, job, report, exit_code] {
    json model = report;
    model.erase("timeline");  // the run's that measured it (--trace), not the journal's
    return json{{"mode", mode},         {"index", job.index},     {"name", job.name},
                {"spec", spec_of(job)}, {"exit_code", exit_code}, {"report", std::move(model)}};
  });
}

void Journal::auto_choice(const json& choice) {
  queue([line = json{{"auto", choice}}] { return line; });
}

void Journal::queue(std::function<json()> line) {
  {
    std::lock_guard lock(mutex_);
    queued_.push_back(std::move(line));
  }
  queued_or_closing_.notify_one();
}

std::string Journal::error() {
  std::unique_lock lock(mutex_);
  written_.wait(lock, [&] { return queued_.empty() && !writing_; });
  return error_;
}

void Journal::write_queued() {
  std::unique_lock lock(mutex_);
  for (;;) {
    queued_or_closing_.wait(lock, [&] { return !queued_.empty() || closing_; });
    if (queued_.empty()) return;  // closing, and every line written
    const std::function<json()> line = std::move(queued_.front());
    queued_.pop_front();
    writing_ = true;
    lock.unlock();
    try {
      append(line());
    } catch (const std::exception& e) {
      // no memory for it: the journal stops there, as at a failed write
      if (error_.empty()) error_ = path_ + ": cannot make a line of the journal: " + e.what();
    }
    lock.lock();
    writing_ = false;
    written_.notify_all();
  }
}

void Journal::append(const json& line) {
  if (!error_.empty()) return;
  // a report's text from the OS (a path, an error message) may hold bytes that are not UTF-8
  const std::string text = line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = path_ + ": cannot write the journal: " + os_reason();
      return;
    }
    done += size_t(n);
  }
  if (const double now = clock_seconds(); now - synced_s_ >= kSyncInterval_s) {
    fdatasync(fd_);
    synced_s_ = now;
  }
}

}  // namespace mf

#include "study/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "runtime/clock.h"
#include "runtime/error.h"
#include "runtime/names.h"
#include "runtime/formats.h"

namespace mf {
namespace {

// The terminal's size: a live line never wraps (a wrapped line would break the redraw), and the
// block of live lines must fit on the screen (the cursor cannot go up past its top).
winsize terminal_size() {
  winsize size{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) != 0) size = {};
  if (size.ws_col == 0) size.ws_col = 80;
  if (size.ws_row == 0) size.ws_row = 24;
  return size;
}

}  // namespace

Progress::Progress(std::vector<std::string> names, bool quiet, size_t phase, StillRunning still,
                   std::vector<size_t> order, ProgressStyle style)
    : names_(std::move(names)),
      lines_(names_.size(), "ended before (in the journal)"),
      models_(names_.size()),
      order_(std::move(order)),
      named_(size_t(std::count_if(names_.begin(), names_.end(),
                                  [](const std::string& n) { return !n.empty(); }))),
      quiet_(quiet),
      phase_(phase == 0 ? names_.size() : phase),
      style_(style),
      start_s_(clock_seconds()),
      status_said_s_(start_s_),
      still_(still) {
  const bool terminal = isatty(STDERR_FILENO) != 0;
  const bool rows_for_each = terminal && named_ < terminal_size().ws_row;
  const bool sink = bool(style_.status);
  summary_ = !quiet_ && !style_.verbose && !sink && named_ > kPlainLinesModels && !rows_for_each;
  live_ = !quiet_ && !sink && named_ > 1 && terminal && (rows_for_each || summary_);
  if (order_.empty())
    for (size_t i = 0; i < names_.size(); ++i)
      if (!names_[i].empty()) order_.push_back(i);
  for (size_t i : order_) lines_[i] = "waiting";
  if (!quiet_ && (phase_ > 1 || live_ || summary_)) watch_ = std::thread([this] { watch(); });
}

Progress::~Progress() {
  if (!watch_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  wake_.notify_one();
  watch_.join();
}

void Progress::step(size_t model) {
  std::lock_guard lock(mutex_);
  models_[model].last_step_s = clock_seconds();
}

void Progress::epoch(size_t model, const std::string& line) {
  std::lock_guard lock(mutex_);
  Model& m = models_[model];
  m.last_epoch_s = clock_seconds();
  ++m.epochs_done;
  lines_[model] = line;
  if (quiet_) return;
  if (live_) {  // at most kRedrawsPerSecond: a redraw holds the lock every training thread reports
                // under
    if (*m.last_epoch_s - drawn_s_ >= 1.0 / kRedrawsPerSecond) redraw();
  } else if (!summary_ && (!style_.status || style_.verbose)) {
    const std::string prefix = named_ > 1 ? names_[model] + ": " : "";
    std::fprintf(stderr, "%s%s\n", prefix.c_str(), line.c_str());
  }
}

void Progress::ended(size_t model, const ModelReport& report, int exit_code) {
  std::lock_guard lock(mutex_);
  Model& m = models_[model];
  if (!m.ended_s) m.ended_s = clock_seconds(), ++models_ended_;
  // not ended: ranked by no metric, as the journal does not record it
  const bool interrupted = exit_code == kExitInterrupted;
  m.status = interrupted ? "interrupted" : to_string(report.status);
  if (!style_.rank_by && !interrupted) style_.rank_by = first_rank_by(report);
  if (style_.rank_by && !interrupted)
    m.rank = rank_key(report, *style_.rank_by), m.value = rank_value(report, *style_.rank_by);
  if (ended_) ended_(model, report, exit_code);
  const bool all = models_ended_ >= order_.size();  // the last state is always shown
  // At most kRedrawsPerSecond, as a live line: statuses() and best() walk every model, and the
  // training threads report under this lock (thousands of models end in a second).
  if (style_.status && (all || *m.ended_s - status_sent_s_ >= 1.0 / kRedrawsPerSecond)) {
    status_sent_s_ = *m.ended_s;
    style_.status(models_ended_, order_.size(), statuses(), best());
  }
  if (quiet_) return;
  if (live_) {
    if (all || *m.ended_s - drawn_s_ >= 1.0 / kRedrawsPerSecond) redraw();
  } else if (summary_ && all) {
    say_status(*m.ended_s);
  }
}

void Progress::say_status(double now) {
  status_said_s_ = now;
  std::fprintf(stderr, "%s\n", status_line(now).c_str());
  std::fflush(stderr);
}

std::string Progress::statuses() const {
  // in the names' order: failed, interrupted, ok, stopped...
  std::map<std::string, size_t> by_status;
  for (size_t i : order_)
    if (models_[i].ended_s) ++by_status[models_[i].status];
  return joined(by_status, [](const auto& status_count) {
    return std::to_string(status_count.second) + " " + status_count.first;
  });
}

std::string Progress::best() const {
  const Model* best = nullptr;
  size_t best_index = 0;
  for (size_t i : order_) {
    const Model& m = models_[i];
    if (m.ended_s && m.rank && (!best || *m.rank < *best->rank)) best = &m, best_index = i;
  }
  if (!best || !best->value) return "";
  return "best " + std::string(to_string(*style_.rank_by)) + " " + format_metric(*best->value) +
         " (" + names_[best_index] + ")";
}

std::string Progress::status_line(double now) const {
  std::string line = "multifit: " + std::to_string(models_ended_) + "/" +
                     std::to_string(order_.size()) + " models ended";
  if (const std::string counts = statuses(); !counts.empty()) line += " (" + counts + ")";
  const double elapsed = now - start_s_;
  line += " in " + format_duration(elapsed);
  // The time left at the pace so far, in epochs where they are known (an ended model's are all
  // done: a stopped trial's too), else in models.
  double done = 0, all = 0;
  for (size_t i : order_) {
    const Model& m = models_[i];
    const double planned = i < style_.epochs.size() && style_.epochs[i] > 0 ? style_.epochs[i] : 0;
    all += planned > 0 ? planned : 1;
    done += m.ended_s ? (planned > 0 ? planned : 1) : std::min<double>(m.epochs_done, planned);
  }
  if (done > 0 && done < all)
    line += ", about " + format_duration(elapsed / done * (all - done)) + " left";
  if (const std::string text = best(); !text.empty()) line += "; " + text;
  return line;
}

void Progress::note(const std::string& line) {
  if (quiet_ || named_ < 2) return;
  std::lock_guard lock(mutex_);
  print_above(line);
}

void Progress::model_note(const std::string& line) {
  if (!summary_) note(line);
}

void Progress::print_above(const std::string& line) {
  // up to the block, clear below
  if (live_ && drawn_ > 0) std::fprintf(stderr, "\x1b[%zuA\x1b[J", drawn_);
  std::fprintf(stderr, "%s\n", line.c_str());
  if (live_ && drawn_ > 0) {
    drawn_ = 0;
    redraw();
  }
}

void Progress::watch() {
  const auto tick = std::chrono::duration<double>(std::min(1.0, still_.after_s / 4));
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, tick, [&] { return closing_; })) {
    const double now = clock_seconds();
    if (const std::string line = still_running(now); !line.empty()) {
      print_above(line);
      std::fflush(stderr);
    }
    // The clock goes on between events: a live block is redrawn, a file's status line said again.
    if (live_ && now - drawn_s_ >= tick.count())
      redraw();
    else if (summary_ && !live_ && models_ended_ < order_.size() &&
             now - status_said_s_ >= kStatusEvery_s)
      say_status(now);
  }
}

std::string Progress::still_running(double now) {
  if (now - said_s_ < still_.every_s) return "";
  // The phase running now: the one of the first model not ended (phases end one after another).
  size_t first = 0;  // a place in order_
  while (first < order_.size() && models_[order_[first]].ended_s) ++first;
  if (first == order_.size()) return "";
  first -= first % phase_;
  const size_t end = std::min(first + phase_, order_.size());
  std::vector<size_t> running;
  double last_end = -1;
  for (size_t place = first; place < end; ++place) {
    const size_t i = order_[place];
    if (!models_[i].ended_s)
      running.push_back(i);
    else
      last_end = std::max(last_end, *models_[i].ended_s);
  }
  const size_t most = std::max(still_.most, (end - first) / 10);
  if (last_end < 0 || running.size() > most || now - last_end < still_.after_s) return "";
  said_s_ = now;
  std::string line = "multifit: still running:";
  for (size_t k = 0; k < running.size() && k < still_.names; ++k) {
    const Model& m = models_[running[k]];
    const std::string& epoch = lines_[running[k]];
    std::string state =
        m.last_epoch_s ? epoch.substr(0, epoch.find(" - ")) + " done" : "no epoch done";
    char since[64] = "";
    if (m.last_step_s)
      std::snprintf(since, sizeof since, ", %.0f s since its last step", now - *m.last_step_s);
    else if (m.last_epoch_s)
      std::snprintf(since, sizeof since, ", %.0f s since its last epoch", now - *m.last_epoch_s);
    line += std::string(k ? ", " : " ") + names_[running[k]] + " (" + state + since + ")";
  }
  if (running.size() > still_.names)
    line += " and " + std::to_string(running.size() - still_.names) + " others";
  return line;
}

void Progress::redraw() {
  if (drawn_ > 0) std::fprintf(stderr, "\x1b[%zuA", drawn_);
  const size_t columns = terminal_size().ws_col;
  drawn_s_ = clock_seconds();
  if (summary_) {
    std::string text = status_line(drawn_s_);
    if (text.size() >= columns) text.resize(columns - 1);
    std::fprintf(stderr, "\x1b[2K%s\n", text.c_str());
    drawn_ = 1;
    std::fflush(stderr);
    return;
  }
  size_t width = 0;
  for (const std::string& name : names_) width = std::max(width, name.size());
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i].empty()) continue;  // not of this run
    std::string text = names_[i] + std::string(width - names_[i].size() + 2, ' ') + lines_[i];
    if (text.size() >= columns) text.resize(columns - 1);
    std::fprintf(stderr, "\x1b[2K%s\n", text.c_str());
  }
  drawn_ = named_;
  std::fflush(stderr);
}

}  // namespace mf

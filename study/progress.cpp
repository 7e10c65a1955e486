#include "study/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

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

Progress::Progress(std::vector<std::string> names, bool quiet)
    : names_(std::move(names)), lines_(names_.size(), "waiting"), quiet_(quiet),
      live_(!quiet && names_.size() > 1 && isatty(STDERR_FILENO) && names_.size() < terminal_size().ws_row) {}

void Progress::epoch(size_t model, const std::string& line) {
  if (quiet_) return;
  std::lock_guard lock(mutex_);
  if (!live_) {
    const std::string prefix = names_.size() > 1 ? names_[model] + ": " : "";
    std::fprintf(stderr, "%s%s\n", prefix.c_str(), line.c_str());
    return;
  }
  lines_[model] = line;
  redraw();
}

void Progress::ended(size_t model, const ModelReport& report, int exit_code) {
  std::lock_guard lock(mutex_);
  if (ended_) ended_(model, report, exit_code);
}

void Progress::note(const std::string& line) {
  if (quiet_ || names_.size() < 2) return;
  std::lock_guard lock(mutex_);
  if (live_ && drawn_ > 0) std::fprintf(stderr, "\x1b[%zuA\x1b[J", drawn_);  // up to the block, clear below
  std::fprintf(stderr, "%s\n", line.c_str());
  if (live_ && drawn_ > 0) {
    drawn_ = 0;
    redraw();
  }
}

void Progress::redraw() {
  if (drawn_ > 0) std::fprintf(stderr, "\x1b[%zuA", drawn_);
  size_t width = 0;
  for (const std::string& name : names_) width = std::max(width, name.size());
  const size_t columns = terminal_size().ws_col;
  for (size_t i = 0; i < names_.size(); ++i) {
    std::string text = names_[i] + std::string(width - names_[i].size() + 2, ' ') + lines_[i];
    if (text.size() >= columns) text.resize(columns - 1);
    std::fprintf(stderr, "\x1b[2K%s\n", text.c_str());
  }
  drawn_ = names_.size();
  std::fflush(stderr);
}

}  // namespace mf

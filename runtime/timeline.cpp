#include "runtime/timeline.h"

#include <algorithm>

namespace mf {

double Overlap::fraction() const { return busy_s > 0 ? concurrent_s / busy_s : 0; }

Overlap measure_overlap(const std::vector<Track>& tracks) {
  // Each interval is two boundaries: its track starts (+1) or ends (-1) one of its intervals there.
  struct Boundary {
    double t_s;
    int change;
    size_t track;
  };
  std::vector<Boundary> boundaries;
  for (size_t track = 0; track < tracks.size(); ++track)
    for (const Interval& interval : tracks[track])
      if (interval.end_s > interval.begin_s) {
        boundaries.push_back({interval.begin_s, +1, track});
        boundaries.push_back({interval.end_s, -1, track});
      }
  std::sort(boundaries.begin(), boundaries.end(),
            [](const Boundary& a, const Boundary& b) { return a.t_s < b.t_s; });

  // Between two boundaries the number of executing tracks is constant: the span counts as busy when
  // it is one or more, as concurrent when two or more. Boundaries at the same time bound spans of
  // no length, so their order does not matter.
  Overlap overlap;
  std::vector<int> open(tracks.size(), 0);  // per track, its intervals open at the sweep's time
  int executing = 0;                        // tracks with at least one open interval
  double previous_s = boundaries.empty() ? 0 : boundaries.front().t_s;
  for (const Boundary& boundary : boundaries) {
    const double span_s = boundary.t_s - previous_s;
    if (executing >= 1) overlap.busy_s += span_s;
    if (executing >= 2) overlap.concurrent_s += span_s;
    previous_s = boundary.t_s;
    int& count = open[boundary.track];
    if (boundary.change > 0 && count++ == 0) ++executing;
    if (boundary.change < 0 && --count == 0) --executing;
  }
  return overlap;
}

}  // namespace mf

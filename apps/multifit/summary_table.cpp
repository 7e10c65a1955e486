#include "apps/multifit/summary_table.h"

#include <cmath>
#include <cstdio>

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "runtime/bytes.h"
#include "study/report/answer.h"
#include "study/report/ranking.h"
#include "study/report/repeats.h"
#include "runtime/names.h"
#include "runtime/formats.h"

namespace mf {
namespace {

std::string seconds(const std::optional<double>& s) { return s ? format_duration(*s) : "-"; }
std::string times(const std::optional<double>& x) { return x ? format_ratio(*x) : "-"; }
std::string rate(const std::optional<double>& per_s) {
  if (!per_s) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", *per_s);
  return text;
}
std::string count(size_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}
std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f%%", 100 * fraction);
  return text;
}

// "min 0.5120, median 0.6250, max 0.7340" of `values` (not empty).
std::string spread(std::vector<double> values) {
  // the median as the report page's and the rungs'
  const std::optional<Spread> s = spread_of(std::move(values));
  if (!s) return "-";
  return "min " + format_metric(s->min) + ", median " + format_metric(s->median) + ", max " +
         format_metric(s->max);
}

// Whether any of the models waited for an input pipeline: the tables then have an "input wait"
// column.
bool any_input_pipeline(const std::vector<ModelReport>& models) {
  return std::any_of(models.begin(), models.end(),
                     [](const ModelReport& m) { return input_wait_fraction(m).has_value(); });
}
std::string fraction(const std::optional<double>& x) { return x ? percent(*x) : "-"; }

// What a table shows beside every model's own figures.
struct Columns {
  bool input = false;   // an input wait column: some model had an input pipeline
  bool device = false;  // a GPU footprint column: NVML saw some model's process
  // Per model index: its share of the data set it read (a data set in one process is read once by
  // all its models there).
  std::vector<size_t> data_share;
  std::optional<size_t> process_peak;  // in-process runs: the one process's peak, every model's
};

Columns columns_of(const RunReport& run) {
  Columns c;
  c.input = any_input_pipeline(run.models);
  std::map<std::pair<std::string, std::string>, size_t> readers;  // (host:pid, data) -> its models
  for (const ModelReport& m : run.models) {
    ++readers[{m.host + ":" + std::to_string(m.pid), m.data}];
    c.device = c.device || m.process_device_bytes.has_value();
  }
  for (const ModelReport& m : run.models)
    c.data_share.push_back(
        m.data_bytes /
        std::max<size_t>(1, readers[{m.host + ":" + std::to_string(m.pid), m.data}]));
  if (!run.workers_peak_rss_bytes && run.host_peak_rss_bytes > 0)
    c.process_peak = run.host_peak_rss_bytes;
  return c;
}

// The table's columns, the header's and every row's: model, status, start-up, train, solo,
// slowdown, test acc, pool peak, data and process peak; then those only some runs have.
constexpr const char* kColumns = "  %-28s %-8s %9s %9s %9s %9s %9s %10s %10s %12s";
void print_optional_columns(const Columns& c, const std::string& device, const std::string& input) {
  if (c.device) std::printf(" %12s", device.c_str());
  if (c.input) std::printf(" %10s", input.c_str());
}

// The table's header; `ranked`, the metric of a last column.
void print_header(const Columns& c, const std::string& ranked = "") {
  std::printf(kColumns, "model", "status", "start-up", "train", "solo", "slowdown", "test acc",
              "pool peak", "data", "process peak");
  print_optional_columns(c, "GPU process", "input wait");
  std::printf("  %s\n", ranked.c_str());
}

// What the columns mean, under a table.
void print_legend(const Columns& c) {
  std::printf(
      "  pool peak: the most of its memory pool in use; data: its share of the data set it read (one copy\n  per process, shared by the models there); process peak: the host memory its process held at most\n  (VmHWM), * the one process that every model of the run shared\n");
  if (c.device)
    std::printf(
        "  GPU process: the device memory NVML saw its process hold, the CUDA context included\n");
  if (c.input)
    std::printf(
        "  input wait: the share of its epochs the model waited for its input pipeline's batches\n");
}

// One model's row; with its error below when `errors`, with its ranked value after it when given.
void print_row(const ModelReport& m, size_t data_share, const Columns& c, bool errors,
               std::optional<double> ranked = std::nullopt) {
  const std::string accuracy = m.tested && m.has_accuracy ? format_metric(m.test.accuracy)
                               : m.tested                 ? "loss " + format_metric(m.test.loss)
                                                          : "-";
  const std::string process = m.process_peak_rss_bytes ? format_bytes(*m.process_peak_rss_bytes)
                              : c.process_peak         ? format_bytes(*c.process_peak) + "*"
                                                       : "-";
  std::printf(kColumns, m.name.c_str(), to_string(m.status), seconds(m.startup_s).c_str(),
              m.fitted ? format_duration(m.fit.train_s).c_str() : "-", seconds(m.solo_s).c_str(),
              times(m.slowdown).c_str(), accuracy.c_str(),
              format_bytes(m.memory.peak_bytes).c_str(), format_bytes(data_share).c_str(),
              process.c_str());
  print_optional_columns(c, m.process_device_bytes ? format_bytes(*m.process_device_bytes) : "-",
                         fraction(input_wait_fraction(m)));
  std::printf(ranked ? "  %s\n" : "%s\n", ranked ? format_metric(*ranked).c_str() : "");
  if (errors && !m.error.empty()) std::printf("    %s\n", m.error.c_str());
}

}  // namespace

void print_model_line(const ModelReport& m) {
  if (m.status != ModelStatus::ok) {
    std::printf("%s: %s\n", m.name.c_str(), to_string(m.status));
    return;
  }
  std::string test = "no test set";
  if (m.tested) {
    test = "test_loss " + format_metric(m.test.loss);
    if (m.has_accuracy) test += " - test_accuracy " + format_metric(m.test.accuracy);
    // the metrics but the accuracy: the regression metrics, precision, recall
    for (size_t k = 0; k < m.metrics.size() && k < m.test.metrics.size(); ++k)
      if (!is_accuracy(m.metrics[k].kind))
        test += " - test_" + m.metrics[k].name + " " + format_metric(m.test.metrics[k]);
  }
  const size_t epochs = m.fit.epochs.size();
  std::printf("%s: %s - %zu epoch%s in %s - pool peak %s\n", m.name.c_str(), test.c_str(), epochs,
              epochs == 1 ? "" : "s", format_duration(m.fit.train_s).c_str(),
              format_bytes(m.memory.peak_bytes).c_str());
}

void print_run_table(const RunReport& run, bool legend) {
  print_run_line(run);
  print_models_table(run, legend);
}

void print_run_line(const RunReport& run) {
  const std::string throughput =
      run.samples_per_s ? rate(run.samples_per_s) + " samples/s while training" : "nothing trained";
  const std::string repeat = run.repeat > 1 ? " (run " + std::to_string(run.repeat) + ")" : "";
  std::printf("\n%s%s: %s, at most %d at once - wall %s (start-up %s) - %s", run.mode.c_str(),
              repeat.c_str(), count(run.models.size(), "model").c_str(), run.concurrency,
              format_duration(run.wall_s).c_str(), seconds(run.startup_s).c_str(),
              throughput.c_str());
  if (run.speedup_vs_serial)
    std::printf(" - speedup vs serial %s", times(run.speedup_vs_serial).c_str());
  if (run.overlap && run.overlap_kind == "interleaved")
    std::printf(
        " - interleaved %s (processes without MPS: the GPU time-slices them, no kernels overlap)",
        percent(run.overlap->fraction()).c_str());
  else if (run.overlap)
    std::printf(" - overlap %s", percent(run.overlap->fraction()).c_str());
  std::printf("\n");
  if (const std::string why = why_unjudged(run); !why.empty())
    std::printf(
        "  not to be judged: %s; these timings are not comparable with a quiet machine's longer run\n",
        why.c_str());
  if (run.scheduler) print_scheduler(*run.scheduler);
}

void print_scheduler(const SchedulerReport& s) {
  std::printf("  scheduler %s on %s (%s), reduction factor %d:\n", to_string(s.spec.type),
              s.spec.metric.c_str(), s.spec.maximize ? "max" : "min", s.spec.reduction_factor);
  for (const RungSummary& r : s.rungs)
    std::printf("    %srung after epoch %d: %d judged, %d kept; best %s, median %s, worst %s\n",
                s.spec.brackets() > 1 ? ("bracket " + std::to_string(r.bracket) + " ").c_str() : "",
                r.epochs, r.trials, r.kept, format_metric(r.best).c_str(),
                format_metric(r.median).c_str(), format_metric(r.worst).c_str());
  if (s.full_samples > 0)
    std::printf("    compute: %s of the full sweep's (%lld of %lld samples trained)\n",
                percent(double(s.samples) / double(s.full_samples)).c_str(), (long long)s.samples,
                (long long)s.full_samples);
}

// A grid's or a search's best few, with the metric and the values they were made with: what a table
// of names like tiny-t07 cannot say.
void print_best_values(const RunReport& run) {
  const std::optional<RankBy> by = find_named(kRankByNames, run.rank_by);
  if (!by || run.ranking.empty()) return;
  std::map<std::string, const ModelReport*> named;
  for (const ModelReport& m : run.models) named.emplace(m.name, &m);
  if (named.at(run.ranking.front())->values.empty()) return;
  std::printf("  best by %s, with their values:\n", run.rank_by.c_str());
  for (size_t i = 0; i < std::min(run.ranking.size(), kRankedShown); ++i) {
    const ModelReport& m = *named.at(run.ranking[i]);
    const std::string values = joined(m.values.items(), [](const auto& axis) {
      return axis.key() + " " +
             (axis.value().is_string() ? axis.value().template get<std::string>()
                                       : axis.value().dump());
    });
    std::printf("    %zu. %s %s (%s)\n", i + 1, m.name.c_str(),
                format_metric(rank_value(m, *by).value_or(NAN)).c_str(), values.c_str());
  }
}

void print_models_table(const RunReport& run, bool legend) {
  const Columns columns = columns_of(run);
  if (run.models.size() <= kFullTableModels) {
    print_header(columns);
    for (size_t i = 0; i < run.models.size(); ++i)
      print_row(run.models[i], columns.data_share[i], columns, true);
    print_best_values(run);
    if (legend) print_legend(columns);
    return;
  }
  // A large run: counts, then the best and worst few, then the spreads.
  std::map<std::string, size_t> statuses;
  for (const ModelReport& m : run.models) ++statuses[to_string(m.status)];
  const std::string counts = joined(statuses, [](const auto& status_n) {
    return std::to_string(status_n.second) + " " + status_n.first;
  });
  std::printf(
      "  by status: %s (every model in the CSV and the document; each error once on stderr)\n",
      counts.c_str());
  const std::optional<RankBy> by = find_named(kRankByNames, run.rank_by);
  if (!by || run.ranking.empty()) return;
  std::map<std::string, size_t> named;  // name -> index
  for (size_t i = 0; i < run.models.size(); ++i) named.emplace(run.models[i].name, i);
  const auto shown = [&](size_t first, size_t end, const char* what) {
    std::printf("  %s by %s:\n", what, run.rank_by.c_str());
    print_header(columns, run.rank_by);
    for (size_t i = first; i < end; ++i) {
      const size_t at = named.at(run.ranking[i]);
      print_row(run.models[at], columns.data_share[at], columns, false,
                rank_value(run.models[at], *by));
    }
  };
  const size_t n = run.ranking.size(), best = std::min(n, kRankedShown);
  shown(0, best, ("best " + std::to_string(best)).c_str());
  if (n > best)
    shown(std::max(best, n - kRankedShown), n,
          ("worst " + std::to_string(n - std::max(best, n - kRankedShown))).c_str());
  std::vector<double> values, train;
  for (const ModelReport& m : run.models) {
    if (const auto v = rank_value(m, *by)) values.push_back(*v);
    if (const auto t = rank_value(m, RankBy::train_s)) train.push_back(*t);
  }
  std::printf("  spread: %s %s; train_s %s\n", run.rank_by.c_str(), spread(values).c_str(),
              spread(train).c_str());
  print_best_values(run);
  if (legend) print_legend(columns);
}

// "1.23x [1.10x-1.31x]": a spread's median and range, by `shown`.
template <class F>
std::string median_range(const std::optional<Spread>& s, F shown) {
  return s ? shown(s->median) + " [" + shown(s->min) + "-" + shown(s->max) + "]" : "-";
}

void print_modes_table(const std::vector<RunReport>& runs) {
  const bool input = std::any_of(runs.begin(), runs.end(),
                                 [](const RunReport& r) { return any_input_pipeline(r.models); });
  std::printf("\nmodes side by side (%s):\n", count(runs.front().models.size(), "model").c_str());
  if (const std::string answer = modes_answer(runs); !answer.empty())
    std::printf("  %s\n", answer.c_str());
  std::printf("  %-10s %9s %9s %12s %9s %8s %14s", "mode", "wall", "start-up", "samples/s",
              "speedup", "overlap", "mean slowdown");
  std::printf(input ? " %16s\n" : "\n", "mean input wait");
  for (const RunReport& run : runs) {
    const std::optional<double> slowdown = mean_slowdown(run);
    const std::string wall = format_duration(run.wall_s) + (why_unjudged(run).empty() ? "" : "!");
    std::printf("  %-10s %9s %9s %12s %9s %8s %14s", run.mode.c_str(), wall.c_str(),
                seconds(run.startup_s).c_str(), rate(run.samples_per_s).c_str(),
                times(run.speedup_vs_serial).c_str(),
                run.overlap ? (percent(run.overlap->fraction()) +
                               (run.overlap_kind == "interleaved" ? "*" : ""))
                                  .c_str()
                            : "-",
                times(slowdown).c_str());
    if (input) std::printf(" %16s", fraction(mean_over(run.models, input_wait_fraction)).c_str());
    std::printf("\n");
  }
  std::printf(
      "  speedup: serial's wall over the mode's; mean slowdown: the mean of each model's train time over its\n  solo run's (a pack's: the pack's time over its members' solo times, below 1x when packing pays)\n");
  if (std::any_of(runs.begin(), runs.end(),
                  [](const RunReport& r) { return r.overlap_kind == "interleaved"; }))
    std::printf(
        "  * interleaved, not overlapping: processes without MPS, which the GPU time-slices\n");
  for (const RunReport& run : runs)
    if (const std::string why = why_unjudged(run); !why.empty())
      std::printf("  ! %s not to be judged: %s\n", run.mode.c_str(), why.c_str());
}

void print_repeats_table(const std::vector<RunReport>& runs) {
  const std::vector<ModeSpread> spreads = spread_by_mode(runs);
  std::printf("\nmodes side by side over their runs (%s; median [min-max]):\n",
              count(runs.front().models.size(), "model").c_str());
  if (const std::string answer = modes_answer(runs); !answer.empty())
    std::printf("  %s\n", answer.c_str());
  std::printf("  %-10s %5s %24s %24s %24s %24s\n", "mode", "runs", "wall", "samples/s", "speedup",
              "mean slowdown");
  const auto duration = [](double s) { return format_duration(s); };
  const auto per_s = [](double x) {  // 5.24M: three of them fit the column
    char text[32];
    if (x >= 1e6)
      std::snprintf(text, sizeof text, "%.2fM", x / 1e6);
    else if (x >= 1e3)
      std::snprintf(text, sizeof text, "%.1fk", x / 1e3);
    else
      std::snprintf(text, sizeof text, "%.0f", x);
    return std::string(text);
  };
  const auto ratio = [](double x) { return times(x); };
  for (const ModeSpread& spread : spreads) {
    const bool unjudged = std::any_of(runs.begin(), runs.end(), [&](const RunReport& r) {
      return r.mode == spread.mode && !why_unjudged(r).empty();
    });
    std::printf("  %-10s %5d %24s %24s %24s %24s\n", spread.mode.c_str(), spread.runs,
                (median_range(spread.of("wall_s"), duration) + (unjudged ? "!" : "")).c_str(),
                median_range(spread.of("samples_per_s"), per_s).c_str(),
                median_range(spread.of("speedup_vs_serial"), ratio).c_str(),
                median_range(spread.of("mean_slowdown"), ratio).c_str());
  }
  if (std::any_of(spreads.begin(), spreads.end(),
                  [](const ModeSpread& s) { return s.of("speedup_vs_serial").has_value(); }))
    std::printf("  each run of a mode is against the serial run of its own round\n");
  std::printf("  the document has every run and these spreads (repeats)\n");
  for (const RunReport& run : runs)
    if (const std::string why = why_unjudged(run); !why.empty())
      std::printf("  ! %s run %d not to be judged: %s\n", run.mode.c_str(), run.repeat,
                  why.c_str());
}

}  // namespace mf

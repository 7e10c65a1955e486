#include "study/report/ranking.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace mf {

std::optional<double> rank_value(const ModelReport& m, RankBy by) {
  if (m.status != ModelStatus::ok || !m.fitted) return std::nullopt;
  const auto finite = [](double v) { return std::isfinite(v) ? std::optional(v) : std::nullopt; };
  switch (by) {
    case RankBy::val_accuracy:
      return m.validated && m.has_accuracy && !m.fit.epochs.empty() ? finite(m.fit.epochs.back().val_accuracy)
                                                                     : std::nullopt;
    case RankBy::val_loss:
      return m.validated && !m.fit.epochs.empty() ? finite(m.fit.epochs.back().val_loss) : std::nullopt;
    case RankBy::test_accuracy:
      return m.tested && m.has_accuracy ? finite(m.test.accuracy) : std::nullopt;
    case RankBy::test_loss:
      return m.tested ? finite(m.test.loss) : std::nullopt;
    case RankBy::train_s:
      return m.fit.train_s;
  }
  return std::nullopt;
}

namespace {

bool higher_is_better(RankBy by) { return by == RankBy::val_accuracy || by == RankBy::test_accuracy; }

RankBy default_rank_by(const RunReport& run) {
  for (const Named<RankBy>& by : kRankByNames)
    if (std::any_of(run.models.begin(), run.models.end(), [&](const ModelReport& m) { return rank_value(m, by.value); }))
      return by.value;
  return RankBy::train_s;
}

std::vector<size_t> rank_models(const RunReport& run, RankBy by) {
  std::vector<std::pair<double, size_t>> ranked;
  for (size_t i = 0; i < run.models.size(); ++i)
    if (const std::optional<double> v = rank_value(run.models[i], by)) ranked.push_back({higher_is_better(by) ? -*v : *v, i});
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<size_t> order;
  for (const auto& [value, i] : ranked) order.push_back(i);
  return order;
}

}  // namespace

void rank_run(RunReport& run, std::optional<RankBy> by) {
  const RankBy chosen = by.value_or(default_rank_by(run));
  run.rank_by = to_string(chosen);
  run.ranking.clear();
  for (size_t i : rank_models(run, chosen)) run.ranking.push_back(run.models[i].name);
}

}  // namespace mf

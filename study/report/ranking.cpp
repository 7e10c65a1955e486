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
      return m.validated && m.has_accuracy && !m.fit.epochs.empty()
                 ? finite(m.fit.epochs.back().val_accuracy)
                 : std::nullopt;
    case RankBy::val_loss:
      return m.validated && !m.fit.epochs.empty() ? finite(m.fit.epochs.back().val_loss)
                                                  : std::nullopt;
    case RankBy::test_accuracy:
      return m.tested && m.has_accuracy ? finite(m.test.accuracy) : std::nullopt;
    case RankBy::test_loss:
      return m.tested ? finite(m.test.loss) : std::nullopt;
    case RankBy::loss:
      return m.fit.epochs.empty() ? std::nullopt : finite(m.fit.epochs.back().loss);
    case RankBy::train_s:
      return m.fit.train_s;
  }
  return std::nullopt;
}

std::optional<RankKey> rank_key(const ModelReport& m, RankBy by) {
  const std::optional<double> v = rank_value(m, by);
  if (!v) return std::nullopt;
  const bool higher_is_better = by == RankBy::val_accuracy || by == RankBy::test_accuracy;
  return RankKey{higher_is_better ? -*v : *v, m.index};
}

std::optional<RankBy> first_rank_by(const ModelReport& m) {
  for (const Named<RankBy>& by : kRankByNames)
    if (by.value != RankBy::train_s && rank_value(m, by.value)) return by.value;
  return std::nullopt;
}

void rank_run(RunReport& run, std::optional<RankBy> by) {
  if (!by) {  // the first metric some model has: the earliest of the models' firsts
    for (const ModelReport& m : run.models)
      if (const std::optional<RankBy> first = first_rank_by(m); first && (!by || *first < *by))
        by = first;
  }
  const RankBy chosen = by.value_or(RankBy::train_s);
  std::vector<std::pair<RankKey, size_t>> ranked;  // and the model's place in run.models
  for (size_t i = 0; i < run.models.size(); ++i)
    if (const std::optional<RankKey> key = rank_key(run.models[i], chosen))
      ranked.push_back({*key, i});
  std::sort(ranked.begin(), ranked.end());
  run.rank_by = to_string(chosen);
  run.ranking.clear();
  for (const auto& [key, i] : ranked) run.ranking.push_back(run.models[i].name);
}

}  // namespace mf

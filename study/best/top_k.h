#pragma once
// --save-best's choice, without files: of the models that ended so far, those that may be among the
// first K of the ranking rank_run will make, by the same rank_key. Without --rank-by its metric is
// the first some model has (first_rank_by), so the best are by the earliest first metric of the
// models so far; a model that has an earlier one moves the ranking to it, and the best so far go.
// (No model has a value of a metric before the earliest, and the ranking cannot move to a later
// one, so the best by any other metric need not be kept.)
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "study/report/ranking.h"
#include "study/report/report.h"

namespace mf {

class TopK {
 public:
  // A model that is no longer kept: its place in the sweep and its name (what its files are named
  // by).
  struct Dropped {
    size_t index = 0;
    std::string name;
    bool operator==(const Dropped&) const = default;
  };
  struct Offer {
    bool keep = false;          // the model offered is among the best now
    std::vector<Dropped> drop;  // models kept before that no longer are
  };

  // The best `k` (1 or more) by `by`, or by rank_run's default when absent.
  TopK(size_t k, std::optional<RankBy> by);

  // Whether offer(report) would keep the model as things stand: fewer than K are better by the
  // ranking's metric, or the model moves the ranking to an earlier metric. A model not ok has no
  // value of any metric, so never.
  bool admits(const ModelReport& report) const;
  // The model's report: final, or superseding the one offered of it before (a corrected report),
  // which leaves the best first.
  Offer offer(const ModelReport& report);
  // The models kept now, by their place in the sweep.
  std::vector<size_t> kept() const;

 private:
  bool moves_ranking(const ModelReport& report) const;
  std::optional<RankKey> key_of(const ModelReport& report) const;

  size_t k_;
  bool by_given_;             // --rank-by given: the metric never moves
  std::optional<RankBy> by_;  // the ranking's metric as things stand; absent until a model has one
  std::map<RankKey, std::string> best_;  // the best K so far by by_, best first, and their names
};

}  // namespace mf

#include "study/best/top_k.h"

#include <algorithm>
#include <iterator>

namespace mf {

TopK::TopK(size_t k, std::optional<RankBy> by) : k_(k), by_given_(by.has_value()), by_(by) {}

// Without --rank-by: the model's first metric comes before every other model's, so the ranking
// will be by it (or by one still earlier), and the model is the best of it so far.
bool TopK::moves_ranking(const ModelReport& report) const {
  const std::optional<RankBy> first = first_rank_by(report);
  return !by_given_ && first && (!by_ || *first < *by_);
}

std::optional<RankKey> TopK::key_of(const ModelReport& report) const {
  return by_ ? rank_key(report, *by_) : std::nullopt;
}

bool TopK::admits(const ModelReport& report) const {
  if (moves_ranking(report)) return true;
  const std::optional<RankKey> key = key_of(report);
  return key && (best_.size() < k_ || *key < best_.rbegin()->first);
}

TopK::Offer TopK::offer(const ModelReport& report) {
  Offer offer;
  std::erase_if(best_, [&](const auto& kept) { return kept.first.second == report.index; });
  if (moves_ranking(report)) {
    by_ = first_rank_by(report);
    for (const auto& [key, name] : best_) offer.drop.push_back({key.second, name});
    best_.clear();
  }
  if (const std::optional<RankKey> key = key_of(report)) {
    best_.emplace(*key, report.name);
    if (best_.size() > k_) {  // the last is no longer among the best K
      const auto last = std::prev(best_.end());
      if (last->first != *key) offer.drop.push_back({last->first.second, last->second});
      best_.erase(last);
    }
    offer.keep = best_.contains(*key);
  }
  return offer;
}

std::vector<size_t> TopK::kept() const {
  std::vector<size_t> indices;
  for (const auto& [key, name] : best_) indices.push_back(key.second);
  std::sort(indices.begin(), indices.end());
  return indices;
}

}  // namespace mf

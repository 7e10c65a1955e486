#pragma once
// The messages of an MPI run's ranks (study/ranks/run_over_ranks.h), each one JSON object over MPI:
//
//   every rank to rank 0, before  Ready     {"host": H, "error": E, "run": {...}}
//       whether it can start ("" for yes) and what it is to run, which must be rank 0's
//       (apps/multifit/run_rank.h gathers them and broadcasts the first error)
//   rank 0 to every rank, first   ToTrain   {"jobs": [i, ...]}
//       the sweep's models still to train, by job index (rank 0 alone reads the journal)
//   a rank to rank 0              FromRank  {"ended": [{"report": R, "exit_code": c}, ...],
//                                            "capacity": C or null, "figures": F or null}
//       its last share's models as they ended, and either an ask for more (C: as many models as it
//       trains at once) or, once it has had its last share, its figures (F: PartFigures,
//       study/report/combine_parts.h)
//   rank 0 to a rank              Share     {"places": [p, ...]}
//       its next share, places in ToTrain's jobs; [] when none are left
//
// A report travels without its step timeline: each rank's clock is its own machine's, so the
// timelines of several would not line up (and a large sweep's would be a large message).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "study/sweep/journal.h"
#include "study/report/combine_parts.h"

namespace mf {

struct Ready {
  std::string host;
  std::string error;   // why this rank cannot start; "" when it can
  nlohmann::json run;  // the sweep's fingerprint, backend, mode, shard, --save-best
};
struct ToTrain {
  std::vector<size_t> jobs;
};
struct FromRank {
  std::vector<EndedModel> ended;
  std::optional<size_t> capacity;      // an ask for more
  std::optional<PartFigures> figures;  // done: its last message
};
struct Share {
  std::vector<size_t> places;
};

void to_json(nlohmann::json& j, const Ready& message);
void from_json(const nlohmann::json& j, Ready& message);
void to_json(nlohmann::json& j, const ToTrain& message);
void from_json(const nlohmann::json& j, ToTrain& message);
void to_json(nlohmann::json& j, const FromRank& message);
void from_json(const nlohmann::json& j, FromRank& message);
void to_json(nlohmann::json& j, const Share& message);
void from_json(const nlohmann::json& j, Share& message);
// What the messages carry: a model as it ended (its report without the timeline), a rank's figures.
void to_json(nlohmann::json& j, const EndedModel& ended);
void from_json(const nlohmann::json& j, EndedModel& ended);
void to_json(nlohmann::json& j, const PartFigures& figures);
void from_json(const nlohmann::json& j, PartFigures& figures);

// A message as the text MPI carries, and back. Reading throws nlohmann::json's exceptions for a
// text that is not the message (ranks of other builds).
template <class Message>
std::string message_text(const Message& message) {
  return nlohmann::json(message).dump();
}
template <class Message>
Message message_from(const std::string& text) {
  return nlohmann::json::parse(text).get<Message>();
}

}  // namespace mf

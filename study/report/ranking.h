#pragma once
// The models of a run ranked by one metric, Keras Tuner's "best trials": a validation metric by
// default where the models were validated (a test metric picked by its test score would be
// selected on the test set), else a test metric, else the training time. The same functions rank
// the document's models and pick, while the run goes, the weights --save-best keeps
// (study/best_keeper.h), so the two cannot disagree.
#include <cstddef>
#include <optional>
#include <utility>

#include "runtime/names.h"
#include "study/report/report.h"

namespace mf {

enum class RankBy { val_accuracy, val_loss, test_accuracy, test_loss, loss, train_s };
// In the order of the default's preference: the default is the first of these that some model has
// (a model trained on every row, with no test set, by its training loss; train_s only by asking).
inline constexpr Named<RankBy> kRankByNames[] = {{"val_accuracy", RankBy::val_accuracy},
                                                 {"val_loss", RankBy::val_loss},
                                                 {"test_accuracy", RankBy::test_accuracy},
                                                 {"test_loss", RankBy::test_loss},
                                                 {"loss", RankBy::loss},
                                                 {"train_s", RankBy::train_s}};
inline const char* to_string(RankBy r) { return name_of(kRankByNames, r); }

// The model's value of `by`: its last epoch's validation metric or training loss, its test metric
// or its training time; absent when it has none (not ok, no validation rows, no test set, no
// accuracy for mse, not finite).
std::optional<double> rank_value(const ModelReport& m, RankBy by);
// Where the model sorts by `by`: the smaller key ranks higher (accuracies highest first, losses and
// times lowest; ties by the place in the sweep, ModelReport::index). Absent when it has no value.
using RankKey = std::pair<double, size_t>;
std::optional<RankKey> rank_key(const ModelReport& m, RankBy by);
// The first metric of kRankByNames that the model has a value of; absent for a model with none (one
// that did not end ok). The default of a run is the first of its models' firsts.
std::optional<RankBy> first_rank_by(const ModelReport& m);
// Sets run.rank_by and run.ranking (the models that have a value of it, in rank_key order): by
// `by`, or when absent by the first of val_accuracy, val_loss, test_accuracy, test_loss and loss
// that some model has (train_s where none has any).
void rank_run(RunReport& run, std::optional<RankBy> by);

}  // namespace mf

#pragma once
// The models of a run ranked by one metric, Keras Tuner's "best trials": a validation metric by
// default where the models were validated (a test metric picked by its test score would be
// selected on the test set), else a test metric, else the training time.
#include <optional>

#include "runtime/names.h"
#include "study/report/report.h"

namespace mf {

enum class RankBy { val_accuracy, val_loss, test_accuracy, test_loss, train_s };
inline constexpr Named<RankBy> kRankByNames[] = {{"val_accuracy", RankBy::val_accuracy},
                                                 {"val_loss", RankBy::val_loss},
                                                 {"test_accuracy", RankBy::test_accuracy},
                                                 {"test_loss", RankBy::test_loss},
                                                 {"train_s", RankBy::train_s}};
inline const char* to_string(RankBy r) { return name_of(kRankByNames, r); }

// The model's value of `by`: its last epoch's validation metric, its test metric or its training
// time; absent when it has none (not ok, no validation rows, no test set, no accuracy for mse).
std::optional<double> rank_value(const ModelReport& m, RankBy by);
// Sets run.rank_by and run.ranking (the models that have a value of it, best first: accuracies
// highest first, losses and times lowest; ties in sweep order): by `by`, or when absent by the first
// of val_accuracy, val_loss, test_accuracy, test_loss and train_s that some model has.
void rank_run(RunReport& run, std::optional<RankBy> by);

}  // namespace mf

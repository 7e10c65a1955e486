// fit/evaluate with Keras's semantics, check_data, and weights files.
//
// References: Keras's Model.fit (validation rows = the last floor-split of the
// data, taken before shuffling; the last partial batch is a step of its own; the
// epoch loss is the sample-weighted mean of the batch losses seen while training),
// a manual replay of an epoch with train_batch, and learnable synthetic data.
#include "nn/fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/cpu_backend.h"
#include "data/dataset.h"
#include "nn/weights.h"
#include "runtime/error.h"
#include "test_support.h"
#include "runtime/formats.h"

namespace mf {
namespace {

namespace fs = std::filesystem;

using test::contains;
using test::mlp;
using test::user_error;

ModelSpec classifier(int input, int hidden, int classes, int batch = 32) {
  ModelSpec spec = mlp(input, {{hidden, Activation::relu}, {classes, Activation::softmax}},
                       Loss::sparse_categorical_crossentropy, "clf");
  spec.fit.batch_size = batch;
  spec.seed = 5;
  return spec;
}

// ---- training_rows ------------------------------------------------------------------

TEST(TrainingRows, KerasSplit) {
  // Keras: split_at = floor(rows * (1 - validation_split)), with the split as written in the spec.
  ModelSpec spec = classifier(4, 4, 2);
  spec.fit.validation_split = 0;
  EXPECT_EQ(training_rows(spec, 1000), 1000);
  spec.fit.validation_split = 0.2;
  EXPECT_EQ(training_rows(spec, 1000), 800);
  spec.fit.validation_split = 0.1;
  EXPECT_EQ(training_rows(spec, 60000), 54000);
  EXPECT_EQ(training_rows(spec, 1000), 900);
  spec.fit.validation_split = 0.25;
  EXPECT_EQ(training_rows(spec, 70), 52);  // 52.5 -> 52
  spec.fit.validation_split = 0.5;
  EXPECT_EQ(training_rows(spec, 3), 1);
}

// ---- One epoch replayed by hand -----------------------------------------------------

// 70 rows at batch 32: Keras takes 3 steps (32, 32, 6) and reports the loss over all 70.
void replay_epoch(bool shuffle) {
  SCOPED_TRACE(shuffle ? "shuffled" : "in order");
  const DataSplit split = make_synthetic("teacher:rows=70,features=6,classes=3,seed=9");
  ModelSpec spec = classifier(6, 8, 3, 32);
  spec.fit.epochs = 1;
  spec.fit.shuffle = shuffle;
  CpuBackend cpu;
  DeviceData data(cpu, split.train);

  Model fitted(spec, cpu);
  const FitResult result = fit(fitted, data, {});
  ASSERT_EQ(result.epochs.size(), 1u);

  Model manual(spec, cpu);
  std::vector<int> order(70);
  for (int i = 0; i < 70; ++i)
    order[i] = shuffle ? int(permute_index(uint32_t(i), 70, spec.seed, 0)) : i;
  manual.reset_totals();
  int steps = 0;
  for (int first = 0; first < 70; first += 32) {
    const int m = std::min(32, 70 - first);
    std::vector<float> x, y;
    for (int r = first; r < first + m; ++r) {
      x.insert(x.end(), split.train.x.begin() + order[r] * 6,
               split.train.x.begin() + (order[r] + 1) * 6);
      y.push_back(split.train.y[order[r]]);
    }
    manual.train_batch(x.data(), y.data(), m);
    ++steps;
  }
  EXPECT_EQ(steps, 3);
  const std::vector<double> totals = manual.read_totals().front();
  EXPECT_DOUBLE_EQ(result.epochs[0].loss, totals[0] / 70);
  EXPECT_DOUBLE_EQ(result.epochs[0].accuracy, totals[1] / 70);
  EXPECT_EQ(fitted.get_params(), manual.get_params());  // bitwise: same steps, same order
}

TEST(Fit, PartialLastBatchIsAStepInOrder) { replay_epoch(false); }
TEST(Fit, PartialLastBatchIsAStepShuffled) { replay_epoch(true); }

// ---- Validation rows, computed by hand ------------------------------------------------

// A data set written out here: `x` one feature per row, `y` one target or label per row.
Dataset dataset_of(const std::vector<float>& x, const std::vector<float>& y, int classes) {
  Dataset d;
  d.rows = int64_t(x.size());
  d.features = 1;
  d.target_cols = 1;
  d.classes = classes;
  d.x = x;
  d.y = y;
  return d;
}

// 12 rows, x = r/4, target 1, validation_split 0.25: Keras trains on the first floor(12 * 0.75) = 9
// rows and validates on the last 3 (rows 9, 10, 11), after each epoch's training. A 1-1 linear
// model (w = 1, b = 0.5) with plain SGD at batch 16 takes one step an epoch on all 9 rows; here
// that step, the training loss before it and the validation loss after it are worked out in double
// from the rows themselves, without fit, evaluate or training_rows.
TEST(Fit, ValidationRowsAreTheLastRows) {
  std::vector<float> x, y;
  for (int r = 0; r < 12; ++r) x.push_back(0.25f * float(r)), y.push_back(1.f);
  const Dataset rows = dataset_of(x, y, 0);
  ModelSpec spec = mlp(1, {{1, Activation::linear}}, Loss::mse, "split");
  spec.optimizer.kind = OptimizerKind::sgd;
  spec.optimizer.learning_rate = 0.01f;
  spec.fit.batch_size = 16;
  spec.fit.epochs = 2;
  spec.fit.validation_split = 0.25;
  CpuBackend cpu;
  DeviceData data(cpu, rows);
  Model model(spec, cpu);
  model.set_params({1.f, 0.5f});  // kernel, bias
  const FitResult result = fit(model, data, {});
  ASSERT_EQ(result.status, FitStatus::ok) << result.why;
  ASSERT_EQ(result.epochs.size(), 2u);

  const auto mean_loss = [&](double w, double b, int first, int last) {  // over rows [first, last)
    double sum = 0;
    for (int r = first; r < last; ++r) sum += (w * x[r] + b - y[r]) * (w * x[r] + b - y[r]);
    return sum / (last - first);
  };
  double w = 1, b = 0.5;
  for (int epoch = 0; epoch < 2; ++epoch) {
    SCOPED_TRACE("epoch " + std::to_string(epoch + 1));
    const double loss = mean_loss(w, b, 0, 9);  // the step's loss, before its update
    double dw = 0, db = 0;                      // d(mean squared error)/d(w, b) over rows 0..8
    for (int r = 0; r < 9; ++r)
      dw += 2 * (w * x[r] + b - y[r]) * x[r] / 9, db += 2 * (w * x[r] + b - y[r]) / 9;
    w -= 0.01 * dw, b -= 0.01 * db;
    EXPECT_NEAR(result.epochs[epoch].loss, loss, 1e-6 * loss);
    EXPECT_NEAR(result.epochs[epoch].val_loss, mean_loss(w, b, 9, 12),
                1e-5 * mean_loss(w, b, 9, 12));
    EXPECT_TRUE(std::isnan(result.epochs[epoch].accuracy));  // mse has none
    EXPECT_TRUE(std::isnan(result.epochs[epoch].val_accuracy));
  }
  // The first rows would give another number (they hold the smallest x): the check can tell.
  EXPECT_GT(std::fabs(mean_loss(w, b, 0, 3) - mean_loss(w, b, 9, 12)), 0.1);
}

// 8 rows, validation_split 0.25: training rows 0..5, validation rows 6 and 7. A 1-2 softmax model
// with kernel {-1, 1} predicts class 1 for x > 0 and class 0 for x < 0 (logits -x, x), and a
// learning rate of 0 keeps it so. By hand: of the training rows, 4 of 6 are right; of the
// validation rows (x = 3, labels 1 and 0) one is, and their losses are log(1 + e^-6) and 6 + log(1
// + e^-6).
TEST(Fit, ValidationAccuracyIsOverTheLastRows) {
  const std::vector<float> x = {1, -1, 2, -2, 1, -1, 3, 3}, labels = {1, 0, 1, 1, 0, 0, 1, 0};
  const Dataset rows = dataset_of(x, labels, 2);
  ModelSpec spec =
      mlp(1, {{2, Activation::softmax}}, Loss::sparse_categorical_crossentropy, "split");
  spec.optimizer.kind = OptimizerKind::sgd;
  spec.optimizer.learning_rate = 0;
  spec.fit.batch_size = 4;  // two steps an epoch, 4 and 2 rows
  spec.fit.epochs = 2;
  spec.fit.validation_split = 0.25;
  CpuBackend cpu;
  DeviceData data(cpu, rows);
  Model model(spec, cpu);
  model.set_params({-1.f, 1.f, 0.f, 0.f});
  const FitResult result = fit(model, data, {});
  ASSERT_EQ(result.status, FitStatus::ok) << result.why;
  ASSERT_EQ(result.epochs.size(), 2u);
  // -log softmax: log(1 + e^(-2|x|)) when right, 2|x| + log(1 + e^(-2|x|)) when wrong.
  const double l1 = std::log1p(std::exp(-2.0)), l2 = std::log1p(std::exp(-4.0)),
               l3 = std::log1p(std::exp(-6.0));
  // rows 0..5: wrong are 3 and 4
  const double train_loss = (l1 + l1 + l2 + (4 + l2) + (2 + l1) + l1) / 6;
  for (const EpochMetrics& e : result.epochs) {
    EXPECT_NEAR(e.loss, train_loss, 1e-6);
    EXPECT_EQ(e.accuracy, 4.0 / 6.0);
    EXPECT_NEAR(e.val_loss, (l3 + 6 + l3) / 2, 1e-6);
    EXPECT_EQ(e.val_accuracy, 0.5);
  }
}

TEST(Fit, NoValidationMeansNaN) {
  const DataSplit split = make_synthetic("teacher:rows=64,features=6,classes=3,seed=3");
  CpuBackend cpu;
  DeviceData data(cpu, split.train);
  Model model(classifier(6, 8, 3), cpu);
  const FitResult result = fit(model, data, {});
  EXPECT_TRUE(std::isnan(result.epochs[0].val_loss));
  EXPECT_TRUE(std::isnan(result.epochs[0].val_accuracy));
}

// FitOptions::step_done, with no interval between calls: after every step but an epoch's last (the
// epoch's line says that one), with the steps so far and the epoch's.
TEST(Fit, StepDoneIsCalledAsTheStepsGo) {
  const DataSplit split = make_synthetic("teacher:rows=100,features=6,classes=3,seed=3");
  CpuBackend cpu;
  DeviceData data(cpu, split.train);
  ModelSpec spec = classifier(6, 8, 3);
  spec.fit.epochs = 2, spec.fit.batch_size = 32;  // 4 steps an epoch: 32, 32, 32, 4
  Model model(spec, cpu);
  std::vector<std::pair<int64_t, int64_t>> calls;
  FitOptions options;
  options.step_interval_s = 0;
  options.step_done = [&](int64_t step, int64_t steps) { calls.emplace_back(step, steps); };
  fit(model, data, options);
  const std::vector<std::pair<int64_t, int64_t>> want = {{1, 4}, {2, 4}, {3, 4},
                                                         {1, 4}, {2, 4}, {3, 4}};
  EXPECT_EQ(calls, want);
}

TEST(Fit, MseHasNoAccuracy) {
  const DataSplit split = make_synthetic("regression:rows=64,features=4");
  const ModelSpec spec = mlp(4, {{1, Activation::linear}}, Loss::mse);
  CpuBackend cpu;
  DeviceData data(cpu, split.train);
  Model model(spec, cpu);
  const FitResult result = fit(model, data, {});
  EXPECT_TRUE(std::isnan(result.epochs[0].accuracy));
  EXPECT_TRUE(std::isfinite(result.epochs[0].loss));
}

TEST(Evaluate, MatchesTheSumOfItsParts) {
  // evaluate over rows [0, 100) = the row-weighted mean of evaluations over [0, 37) and [37, 100).
  const DataSplit split = make_synthetic("teacher:rows=100,features=6,classes=3,seed=4");
  CpuBackend cpu;
  DeviceData data(cpu, split.train);
  Model model(classifier(6, 8, 3, 16), cpu);
  const Evaluation all = evaluate(model, data, 0, 100), a = evaluate(model, data, 0, 37),
                   b = evaluate(model, data, 37, 63);
  EXPECT_NEAR(all.loss, (a.loss * 37 + b.loss * 63) / 100, 1e-6);
  EXPECT_NEAR(all.accuracy, (a.accuracy * 37 + b.accuracy * 63) / 100, 1e-12);
}

TEST(Fit, SameSeedSameResult) {
  const DataSplit split = make_synthetic("teacher:rows=300,features=6,classes=3,seed=2");
  ModelSpec spec = classifier(6, 8, 3, 32);
  spec.fit.epochs = 3;
  spec.fit.validation_split = 0.1;
  CpuBackend cpu;
  DeviceData data(cpu, split.train);
  Model a(spec, cpu), b(spec, cpu);
  const FitResult ra = fit(a, data, {}), rb = fit(b, data, {});
  ASSERT_EQ(ra.epochs.size(), 3u);
  ASSERT_EQ(rb.epochs.size(), 3u);
  for (size_t e = 0; e < 3; ++e) {
    EXPECT_EQ(ra.epochs[e].loss, rb.epochs[e].loss);
    EXPECT_EQ(ra.epochs[e].accuracy, rb.epochs[e].accuracy);
    EXPECT_EQ(ra.epochs[e].val_loss, rb.epochs[e].val_loss);
    EXPECT_EQ(ra.epochs[e].val_accuracy, rb.epochs[e].val_accuracy);
  }
  EXPECT_EQ(a.get_params(), b.get_params());

  // Another seed: another initialisation and order, other numbers.
  spec.seed = 6;
  Model c(spec, cpu);
  const FitResult rc = fit(c, data, {});
  EXPECT_NE(ra.epochs[2].loss, rc.epochs[2].loss);
}

TEST(Fit, AStepLimitStopsMidEpochAndCountsTheRowsTrained) {
  const DataSplit split = make_synthetic("teacher:rows=70,features=6,classes=3,seed=9");
  ModelSpec spec = classifier(6, 8, 3, 32);  // 3 steps an epoch: 32, 32 and the last 6 rows
  spec.fit.epochs = 2;
  CpuBackend cpu;
  DeviceData data(cpu, split.train);
  Model model(spec, cpu);
  FitOptions options;
  options.max_steps = 4;
  const FitResult result = fit(model, data, options);
  EXPECT_EQ(result.status, FitStatus::stopped);
  EXPECT_EQ(result.epochs.size(), 1u);  // the first epoch completed, the second stopped
  EXPECT_EQ(result.samples, 70 + 32);   // a whole epoch and one step of the next
  EXPECT_TRUE(contains(result.why, "epoch 2 at step 2 of 3")) << result.why;
}

TEST(Fit, ProgressLinesLikeKeras) {
  const DataSplit split = make_synthetic("teacher:rows=70,features=6,classes=3,seed=9");
  ModelSpec spec = classifier(6, 8, 3, 32);
  spec.fit.epochs = 2;
  CpuBackend cpu;
  DeviceData data(cpu, split.train);
  Model model(spec, cpu);
  std::string text;
  FitOptions options;
  options.progress = [&](int, const std::string& line) { text += line + '\n'; };
  fit(model, data, options);
  EXPECT_TRUE(text.starts_with("Epoch 1/2 - 3 steps")) << text;
  EXPECT_TRUE(contains(text, "\nEpoch 2/2 - 3 steps")) << text;
  EXPECT_TRUE(contains(text, " - loss: ")) << text;
  EXPECT_TRUE(contains(text, " - accuracy: ")) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
}

// An 8-16-1 linear regressor trained by plain SGD at `learning_rate`: large rates blow it up.
ModelSpec sgd_regressor(float learning_rate, int epochs) {
  ModelSpec spec = mlp(8, {{16, Activation::linear}, {1, Activation::linear}}, Loss::mse);
  spec.optimizer.kind = OptimizerKind::sgd;
  spec.optimizer.learning_rate = learning_rate;
  spec.fit.epochs = epochs;
  return spec;
}

TEST(Fit, DivergenceStopsTraining) {
  const DataSplit split = make_synthetic("regression:rows=256,features=8");
  ModelSpec spec = sgd_regressor(1e4f, 5);
  CpuBackend cpu;
  DeviceData data(cpu, split.train);
  Model model(spec, cpu);
  const FitResult result = fit(model, data, {});
  EXPECT_EQ(result.status, FitStatus::diverged);
  EXPECT_LT(result.epochs.size(), 5u);
  EXPECT_FALSE(std::isfinite(result.epochs.back().loss));
  const std::string epoch =
      "epoch " + std::to_string(result.epochs.size()) + ": the training loss is ";
  EXPECT_TRUE(contains(result.why, epoch)) << result.why;  // names the epoch and the loss
}

// Weights of 1e8 give a loss near 1e35, finite, and gradients near 1e26; a learning rate of 1e13
// then takes the parameters past the float range in the one update of the one epoch. The epoch's
// loss (taken before the update) is finite: only the parameters show the blow-up.
TEST(Fit, ParametersNotFiniteAfterTheLastUpdateDiverge) {
  const DataSplit split = make_synthetic("regression:rows=64,features=8");
  ModelSpec spec = sgd_regressor(1e13f, 1);
  spec.fit.batch_size = 64;
  CpuBackend cpu;
  DeviceData data(cpu, split.train);
  Model model(spec, cpu);
  model.set_params(std::vector<float>(size_t(model.param_count()), 1e8f));
  const FitResult result = fit(model, data, {});
  ASSERT_EQ(result.epochs.size(), 1u);
  EXPECT_TRUE(std::isfinite(result.epochs[0].loss)) << result.epochs[0].loss;
  EXPECT_EQ(result.status, FitStatus::diverged);
  EXPECT_TRUE(contains(result.why, "epoch 1: after the update, layer ")) << result.why;
  EXPECT_TRUE(contains(result.why, "inf")) << result.why;
}

TEST(Evaluate, NonFiniteIsNamed) {
  EXPECT_EQ(non_finite(Evaluation{0.5, 0.9, {}}, "test"), "");
  EXPECT_EQ(non_finite(Evaluation{INFINITY, 0.9, {}}, "test"), "test_loss is inf");
  EXPECT_EQ(non_finite(Evaluation{-NAN, 0.9, {}}, "val"), "val_loss is nan");
}

// Keras prints nan without a sign; printf prints "-nan" for a NaN whose sign bit is set.
TEST(FormatMetric, AsKerasPrintsIt) {
  EXPECT_EQ(format_metric(0.12345), "0.1235");
  EXPECT_EQ(format_metric(NAN), "nan");
  EXPECT_EQ(format_metric(-NAN), "nan");
  EXPECT_EQ(format_metric(std::copysign(NAN, -1.0)), "nan");
  EXPECT_EQ(format_metric(INFINITY), "inf");
  EXPECT_EQ(format_metric(-INFINITY), "-inf");
}

// ---- Convergence on learnable data --------------------------------------------------

// The synthetic teacher labels x by a fixed random tanh network; a 20-32 student learns it.
TEST(Convergence, SoftmaxStudentLearnsTheTeacher) {
  const DataSplit split = make_synthetic("teacher");  // 4096 rows, 20 features, 2 classes
  ModelSpec spec = classifier(20, 32, 2, 32);
  spec.layers[0].activation = Activation::tanh;
  spec.optimizer.learning_rate = 0.01f;
  spec.fit.epochs = 5;
  spec.seed = 1;
  CpuBackend cpu;
  DeviceData train(cpu, split.train), test(cpu, *split.test);
  Model model(spec, cpu);
  const FitResult result = fit(model, train, {});
  ASSERT_EQ(result.status, FitStatus::ok);
  ASSERT_EQ(result.epochs.size(), 5u);
  EXPECT_LT(result.epochs.back().loss, result.epochs.front().loss);
  EXPECT_LT(result.epochs.back().loss, 0.3);
  EXPECT_GE(result.epochs.back().accuracy, 0.90);
  const double test_accuracy = evaluate(model, test, 0, test.rows()).accuracy;
  RecordProperty("train_accuracy", std::to_string(result.epochs.back().accuracy));
  RecordProperty("train_loss", std::to_string(result.epochs.back().loss));
  RecordProperty("test_accuracy", std::to_string(test_accuracy));
  EXPECT_GE(test_accuracy, 0.88);  // generalises to the held-out rows
}

TEST(Convergence, SigmoidStudentLearnsTheBinaryTeacher) {
  const DataSplit split = make_synthetic("teacher");  // labels 0/1, one target column
  ModelSpec spec = mlp(20, {{32, Activation::tanh}, {1, Activation::sigmoid}},
                       Loss::binary_crossentropy, "binary");
  spec.optimizer.learning_rate = 0.01f;
  spec.fit.epochs = 5;
  spec.seed = 1;
  CpuBackend cpu;
  DeviceData train(cpu, split.train), test(cpu, *split.test);
  check_data(spec, train, split.train, "train");
  Model model(spec, cpu);
  const FitResult result = fit(model, train, {});
  ASSERT_EQ(result.status, FitStatus::ok);
  EXPECT_LT(result.epochs.back().loss, result.epochs.front().loss);
  EXPECT_GE(result.epochs.back().accuracy, 0.90);
  const double test_accuracy = evaluate(model, test, 0, test.rows()).accuracy;
  RecordProperty("train_accuracy", std::to_string(result.epochs.back().accuracy));
  RecordProperty("first_loss", std::to_string(result.epochs.front().loss));
  RecordProperty("train_loss", std::to_string(result.epochs.back().loss));
  RecordProperty("test_accuracy", std::to_string(test_accuracy));
  EXPECT_GE(test_accuracy, 0.88);
}

// ---- check_data -----------------------------------------------------------------------

// The message of the UserError with which check_data refuses `d` for `spec`.
std::string check_data_error(const ModelSpec& spec, const Dataset& d) {
  CpuBackend cpu;
  DeviceData data(cpu, d);
  return user_error([&] { check_data(spec, data, d, "training data 'X'"); });
}

TEST(CheckData, AcceptsMatchingData) {
  const DataSplit split = make_synthetic("teacher:rows=40,features=6,classes=3");
  CpuBackend cpu;
  DeviceData data(cpu, split.train);
  EXPECT_NO_THROW(check_data(classifier(6, 8, 3), data, split.train, "d"));
  // more units than classes is fine
  EXPECT_NO_THROW(check_data(classifier(6, 8, 5), data, split.train, "d"));
}

// Every refusal of check_data, its message in full: each branch says what it found and what the
// spec needs, with the file and line of the label where the data came from a file.
TEST(CheckData, FeatureMismatch) {
  EXPECT_EQ(check_data_error(classifier(7, 8, 3),
                             make_synthetic("teacher:rows=40,features=6,classes=3").train),
            "model 'clf': training data 'X' has 6 features but the spec's input is 7");
}

TEST(CheckData, ClassificationNeedsOneLabelColumn) {
  Dataset two_columns = make_synthetic("teacher:rows=40,features=6,classes=3").train;
  two_columns.target_cols = 2;
  two_columns.y.resize(size_t(two_columns.rows) * 2, 0.f);
  EXPECT_EQ(check_data_error(classifier(6, 8, 3), two_columns),
            "model 'clf': training data 'X' has 2 label columns; sparse_categorical_crossentropy "
            "needs one");
}

TEST(CheckData, ClassificationNeedsClassIndices) {
  Dataset targets = make_synthetic("regression:rows=40,features=4").train;
  EXPECT_EQ(
      check_data_error(classifier(4, 8, 3), targets),
      "model 'clf': training data 'X' has a label that is not a class index; "
      "sparse_categorical_crossentropy needs labels 0 to 2 (one per unit of the output layer)");
  targets.label_at = "train.csv:7: label -1";
  EXPECT_EQ(
      check_data_error(classifier(4, 8, 3), targets),
      "model 'clf': training data 'X' has a label that is not a class index (train.csv:7: label "
      "-1); "
      "sparse_categorical_crossentropy needs labels 0 to 2 (one per unit of the output layer)");
}

TEST(CheckData, TooManyClasses) {
  Dataset five = make_synthetic("teacher:rows=40,features=6,classes=5").train;
  EXPECT_EQ(check_data_error(classifier(6, 8, 3), five),
            "model 'clf': training data 'X' has labels up to 4 but the output layer has 3 units; "
            "labels must be 0 to 2");
  five.label_at = "train.csv:9: label 4";
  EXPECT_EQ(check_data_error(classifier(6, 8, 3), five),
            "model 'clf': training data 'X' has labels up to 4 (train.csv:9: label 4) but the "
            "output layer has 3 "
            "units; labels must be 0 to 2");
}

TEST(CheckData, MseNeedsOneTargetColumnPerOutput) {
  const ModelSpec spec = mlp(4, {{2, Activation::linear}}, Loss::mse, "reg");
  EXPECT_EQ(
      check_data_error(spec, make_synthetic("regression:rows=40,features=4").train),
      "model 'reg': training data 'X' has 1 target column(s) but the output layer has 2 units; "
      "mse needs one per unit");
}

TEST(CheckData, BinaryCrossentropyNeedsOneLabelPerOutput) {
  const ModelSpec spec = mlp(6, {{2, Activation::sigmoid}}, Loss::binary_crossentropy, "bin");
  EXPECT_EQ(
      check_data_error(spec, make_synthetic("teacher:rows=40,features=6,classes=2").train),
      "model 'bin': training data 'X' has 1 label column(s) but the output layer has 2 units; "
      "binary_crossentropy needs one 0/1 label per unit");
}

TEST(CheckData, BinaryCrossentropyNeedsBinaryLabels) {
  const ModelSpec spec = mlp(6, {{1, Activation::sigmoid}}, Loss::binary_crossentropy, "bin");
  Dataset three = make_synthetic("teacher:rows=40,features=6,classes=3").train;
  EXPECT_EQ(check_data_error(spec, three),
            "model 'bin': training data 'X' has a label that is not 0 or 1; binary_crossentropy "
            "needs labels 0 and 1");
  three.label_at = "labels.idx record 12: label 2";
  EXPECT_EQ(check_data_error(spec, three),
            "model 'bin': training data 'X' has a label that is not 0 or 1 (labels.idx record 12: "
            "label 2); "
            "binary_crossentropy needs labels 0 and 1");
  EXPECT_EQ(check_data_error(spec, make_synthetic("regression:rows=40,features=6").train),
            "model 'bin': training data 'X' has a label that is not 0 or 1; binary_crossentropy "
            "needs labels 0 and 1");
}

TEST(FitErrors, ValidationSplitLeavingNoRows) {
  ModelSpec spec = classifier(6, 8, 3);
  spec.fit.validation_split = 0.9;
  CpuBackend cpu;
  const Dataset one_row = make_synthetic("teacher:rows=1,features=6,classes=3").train;
  DeviceData data(cpu, one_row);
  EXPECT_NO_THROW(check_data(spec, data, one_row, "test data"));  // a test set is not split
  Model model(spec, cpu);
  const std::string e = user_error([&] { fit(model, data, {}); });
  EXPECT_TRUE(contains(e, "validation_split")) << e;
}

TEST(FitErrors, ValidationSplitTakingNoRowsIsRefused) {
  ModelSpec spec = classifier(6, 8, 3);
  spec.fit.validation_split = 1e-17;
  CpuBackend cpu;
  DeviceData data(cpu, make_synthetic("teacher:rows=1024,features=6,classes=3").train);
  Model model(spec, cpu);
  const std::string e = user_error([&] { fit(model, data, {}); });
  EXPECT_TRUE(contains(e, "fit.validation_split 1e-17 of 1024 rows takes no validation rows")) << e;
  EXPECT_TRUE(contains(e, "1024 training rows")) << e;
}

// ---- Weights files ----------------------------------------------------------------------

// Weights files in a fresh directory per test.
class Weights : public test::TempDirTest {
 protected:
  static ModelSpec spec(int hidden = 8, Activation act = Activation::relu) {
    ModelSpec s = classifier(6, hidden, 3);
    s.layers[0].activation = act;
    return s;
  }
  // Trains a little so the weights are not just the initialisation.
  static void train_a_bit(Model& model) {
    const DataSplit split = make_synthetic("teacher:rows=64,features=6,classes=3");
    DeviceData data(model.backend(), split.train);
    fit(model, data, {});
  }
  // The message of the UserError with which load_weights refuses `file`.
  static std::string load_error(Model& model, const std::string& file) {
    SCOPED_TRACE("loading " + file);
    return user_error([&] { load_weights(model, file); });
  }
  // Saves a model of `saved` as w.mfw and loads that into `into`: the message of the refusal,
  // which must name the file.
  std::string refusal(const ModelSpec& saved, Model& into) {
    Model a(saved, cpu_);
    save_weights(a, path("w.mfw"));
    const std::string e = load_error(into, path("w.mfw"));
    EXPECT_TRUE(contains(e, path("w.mfw"))) << e;
    return e;
  }

  CpuBackend cpu_;
};

TEST_F(Weights, RoundTripIsBitwiseExact) {
  Model a(spec(), cpu_);
  train_a_bit(a);
  save_weights(a, path("w.mfw"));
  ModelSpec other_seed = spec();
  other_seed.seed = 99;
  Model b(other_seed, cpu_);
  ASSERT_NE(a.get_params(), b.get_params());
  load_weights(b, path("w.mfw"));
  const std::vector<float> pa = a.get_params(), pb = b.get_params();
  ASSERT_EQ(pa.size(), pb.size());
  EXPECT_EQ(std::memcmp(pa.data(), pb.data(), pa.size() * sizeof(float)), 0);
  // Header (4 magic + 4 layers + 2*20 shapes + 8 count) plus the floats.
  EXPECT_EQ(fs::file_size(path("w.mfw")), 4 + 4 + 2 * 20 + 8 + pa.size() * sizeof(float));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir()), {}), 1);  // no temporary file beside it
}

TEST_F(Weights, OtherShapeIsRefusedNamingFileAndLayer) {
  Model b(spec(9), cpu_);
  const std::vector<float> before = b.get_params();
  const std::string e = refusal(spec(8), b);
  // layers count from 1
  EXPECT_TRUE(contains(e, "layer 1 is Dense 6x8 in the file, Dense 6x9 in the spec")) << e;
  EXPECT_EQ(b.get_params(), before);  // nothing loaded
}

TEST_F(Weights, OtherActivationIsRefused) {
  Model b(spec(8, Activation::tanh), cpu_);
  const std::string e = refusal(spec(8, Activation::relu), b);
  EXPECT_TRUE(contains(e, "layer 1 has another activation than in the spec")) << e;
}

TEST_F(Weights, OtherLayerCountIsRefused) {
  ModelSpec deeper = spec();
  deeper.layers.insert(deeper.layers.begin(), {8, Activation::relu});
  Model b(deeper, cpu_);
  const std::string e = refusal(spec(), b);
  EXPECT_TRUE(contains(e, "2 layers")) << e;
  EXPECT_TRUE(contains(e, "3")) << e;
}

TEST_F(Weights, TruncatedFileIsRefused) {
  Model a(spec(), cpu_);
  save_weights(a, path("w.mfw"));
  const auto size = fs::file_size(path("w.mfw"));
  for (uintmax_t keep : {uintmax_t(6), uintmax_t(20), uintmax_t(40), size - 4, size - 1}) {
    fs::copy_file(path("w.mfw"), path("cut.mfw"), fs::copy_options::overwrite_existing);
    fs::resize_file(path("cut.mfw"), keep);
    const std::string e = load_error(a, path("cut.mfw"));
    EXPECT_TRUE(contains(e, path("cut.mfw"))) << "kept " << keep << ": " << e;
    EXPECT_TRUE(contains(e, "truncated")) << "kept " << keep << ": " << e;
  }
}

TEST_F(Weights, TrailingBytesAreRefused) {
  Model a(spec(), cpu_);
  save_weights(a, path("w.mfw"));
  std::ofstream(path("w.mfw"), std::ios::binary | std::ios::app) << "xx";
  EXPECT_TRUE(contains(load_error(a, path("w.mfw")), "after the weights"));
}

TEST_F(Weights, NotAWeightsFileIsRefused) {
  std::ofstream(path("spec.json")) << "{\"input\": 6}\n";
  Model a(spec(), cpu_);
  const std::string e = load_error(a, path("spec.json"));
  EXPECT_TRUE(contains(e, path("spec.json"))) << e;
  EXPECT_TRUE(contains(e, "not a multifit weights file")) << e;
  std::ofstream(path("empty.mfw"));
  EXPECT_TRUE(contains(load_error(a, path("empty.mfw")), "not a multifit weights file"));
}

TEST_F(Weights, MissingFileIsAUserError) {
  Model a(spec(), cpu_);
  EXPECT_TRUE(contains(load_error(a, path("nope.mfw")), path("nope.mfw")));
}

}  // namespace
}  // namespace mf

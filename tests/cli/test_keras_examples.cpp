// The Keras users' examples train as written: the Keras MLP on Fashion-MNIST (Dropout, RMSprop,
// EarlyStopping) and the tabular regressor (BatchNormalization, l2, Huber, AdamW,
// ReduceLROnPlateau, EarlyStopping on a metric), with their epochs' lines, documents and CSV rows
// as Keras reports them.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"

namespace {

using namespace cli_test;

// One epoch of the MLP (2.5 s on two cores): the Keras layers on the real data set.
TEST_F(Cli, TheKerasMlpExampleTrainsOnFashionMnist) {
  const Result r = multifit("train " + quoted(example("fashion-mnist-keras-mlp.json")) +
                            " --backend cpu --epochs 1 --json " + quoted(path("r.json")));
  ASSERT_EQ(r.rc, 0) << r.err;
  // 54000 training rows at batch 128
  EXPECT_TRUE(contains(r.err, "Epoch 1/1 - 422 steps")) << r.err;
  EXPECT_TRUE(contains(r.err, " - val_accuracy: ")) << r.err;
  const json m = result("r.json")["models"][0];
  EXPECT_EQ(m["status"], "ok");
  EXPECT_EQ(m["settings"]["optimizer"], "rmsprop");
  EXPECT_EQ(m["settings"]["layers"],
            "Dense(512 relu) Dropout(0.2) Dense(512 relu) Dropout(0.2) Dense(10 softmax)");
  EXPECT_GT(m["test_accuracy"].get<double>(), 0.75);  // one epoch of Keras's MLP: 0.8 and more
  // EarlyStopping with patience 3: not after one epoch
  EXPECT_TRUE(m["fit"]["stopped_epoch"].is_null());
  // restore_best_weights: Keras restores the best epoch's weights at the fit's end, stopped or not.
  EXPECT_EQ(m["fit"]["restored_epoch"], 1);
  EXPECT_TRUE(contains(r.err, "Restoring model weights from the end of the best epoch: 1.\n"))
      << r.err;
}

TEST_F(Cli, TheTabularRegressorExampleStopsEarlyAndLowersItsRate) {
  const Result r =
      multifit("train " + quoted(example("tabular-regressor.json")) + " --backend cpu --json " +
               quoted(path("r.json")) + " --csv " + quoted(path("r.csv")));
  ASSERT_EQ(r.rc, 0) << r.err;
  const json m = result("r.json")["models"][0];
  EXPECT_EQ(m["status"], "ok");
  const json& epochs = m["epochs"];
  ASSERT_LT(epochs.size(), 30u) << "EarlyStopping stops it before its 30 epochs";
  EXPECT_EQ(m["fit"]["stopped_epoch"], epochs.size());
  EXPECT_TRUE(contains(r.err, "Epoch " + std::to_string(epochs.size()) + ": early stopping"))
      << r.err;
  EXPECT_TRUE(
      contains(m["fit"]["stop_reason"].get<std::string>(), "val_mae did not improve for 6 epochs"))
      << m["fit"]["stop_reason"];
  EXPECT_LT(epochs.back()["learning_rate"].get<double>(), 0.003);  // ReduceLROnPlateau halved it
  for (const char* metric : {"mae", "mse"}) {
    EXPECT_TRUE(epochs[0]["metrics"][metric].is_number()) << metric;
    EXPECT_TRUE(epochs[0]["val_metrics"][metric].is_number()) << metric;
    EXPECT_GT(m["test_metrics"][metric].get<double>(), 0) << metric;
  }
  EXPECT_GT(m["test_loss"].get<double>(), 0);  // evaluated after the stop
  EXPECT_TRUE(contains(r.out, "tabular-regressor: test_loss ")) << r.out;
  // the regression metrics on the summary line too
  EXPECT_TRUE(contains(r.out, " - test_mae ")) << r.out;
  EXPECT_TRUE(contains(r.out, " - test_mse ")) << r.out;
  const std::string csv = read_file(path("r.csv"));
  EXPECT_TRUE(contains(csv, ",EarlyStopping: val_mae did not improve")) << csv;
}

}  // namespace

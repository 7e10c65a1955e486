// A sweep's search (nn/sweep_search.h) and scheduler (nn/scheduler_spec.h) as the sweep file gives
// them: the trials drawn the same from the same file and seed, within their ranges and kinds,
// Sobol's points spread as its net property says, and every wrong input one line with what is
// allowed.
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "nn/sweep.h"
#include "test_support.h"

namespace mf {
namespace {

using nlohmann::json;
using testing::ElementsAre;
using testing::HasSubstr;
using testing::StartsWith;

json base() {
  return json::parse(R"({
    "name": "m", "input": 4,
    "layers": [{"units": 8, "activation": "relu"}, {"type": "Dropout", "rate": 0.1}, {"units": 3, "activation": "softmax"}],
    "loss": "sparse_categorical_crossentropy", "metrics": ["accuracy"],
    "fit": {"epochs": 9, "validation_split": 0.25}
  })");
}

json space() {
  return json::parse(
      R"({"learning_rate": {"log_uniform": [1e-4, 0.1]}, "units": {"choice": [16, 32, 64]},
                         "dropout": {"uniform": [0, 0.5]}, "batch_size": {"int_log_uniform": [16, 256]},
                         "seed": {"int_uniform": [1, 3]}})");
}

class Search : public test::TempDirTest {
 protected:
  Sweep load(const json& document) const { return load_sweep(write("s.json", document.dump())); }
  std::string error(const json& document) const {
    const std::string file = write("s.json", document.dump());
    const std::string message = test::user_error([&] { load_sweep(file); });
    EXPECT_THAT(message, StartsWith(file + ": "));
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  }
  json search(const std::string& sampler, int trials, uint64_t seed = 7) const {
    return {
        {"base", base()},
        {"search", {{"trials", trials}, {"sampler", sampler}, {"seed", seed}, {"space", space()}}}};
  }
};

TEST_F(Search, TheSameFileAndSeedDrawTheSameTrialsAndAnotherSeedOthers) {
  for (const char* sampler : {"random", "sobol"}) {
    SCOPED_TRACE(sampler);
    const Sweep a = load(search(sampler, 20)), b = load(search(sampler, 20)),
                c = load(search(sampler, 20, 8));
    ASSERT_EQ(a.models.size(), 20u);
    int differ = 0;
    for (size_t t = 0; t < 20; ++t) {
      EXPECT_EQ(a.models[t].values, b.models[t].values);
      differ += a.models[t].values != c.models[t].values;
    }
    EXPECT_GT(differ, 15);
    EXPECT_EQ(a.models[0].name, "m-t00");
    EXPECT_EQ(a.models[19].name, "m-t19");
  }
}

TEST_F(Search, EachDrawIsInItsRangeOfItsKindAndSetInTheModel) {
  for (const char* sampler : {"random", "sobol"}) {
    SCOPED_TRACE(sampler);
    std::set<int> units, seeds;
    for (const SweepEntry& m : load(search(sampler, 200)).models) {
      ASSERT_TRUE(m.spec) << m.error;
      const double lr = m.values.at("learning_rate"), rate = m.values.at("dropout");
      const int64_t batch = m.values.at("batch_size");
      EXPECT_TRUE(lr >= 1e-4 * (1 - 1e-6) && lr < 0.1) << lr;
      EXPECT_TRUE(rate >= 0 && rate < 0.5) << rate;
      EXPECT_TRUE(batch >= 16 && batch <= 256) << batch;
      EXPECT_TRUE(m.values.at("batch_size").is_number_integer());
      units.insert(m.values.at("units").get<int>());
      seeds.insert(m.values.at("seed").get<int>());
      // The spec has them: the float32 kept as drawn, every hidden Dense's units, every Dropout's
      // rate.
      EXPECT_EQ(m.spec->optimizer.learning_rate, float(lr));
      EXPECT_EQ(m.spec->fit.batch_size, batch);
      EXPECT_EQ(m.spec->layers[0].units, m.values.at("units").get<int>());
      EXPECT_EQ(m.spec->layers[1].rate, rate);
      EXPECT_EQ(m.spec->layers[2].units, 3);  // the output layer is the base's
    }
    EXPECT_EQ(units, (std::set<int>{16, 32, 64}));
    EXPECT_EQ(seeds, (std::set<int>{1, 2, 3}));
  }
}

// Sobol's points are a (t, s)-sequence: the first 2^k points of one dimension fall one in each of
// the 2^k equal parts of [0, 1), and a digital shift keeps that. So 64 trials of uniform [0, 64)
// land one in each unit interval; random draws almost surely do not.
TEST_F(Search, SobolSpreadsItsPointsOneToEachEqualPart) {
  json doc = search("sobol", 64);
  doc["search"]["space"] = {{"dropout", {{"uniform", {0, 0.5}}}}};
  const auto parts = [&] {
    std::set<int> out;
    for (const SweepEntry& m : load(doc).models)
      out.insert(int(std::floor(m.values.at("dropout").get<double>() * 128)));
    return out.size();
  };
  EXPECT_EQ(parts(), 64u);
  doc["search"]["sampler"] = "random";
  EXPECT_LT(parts(), 64u);
}

TEST_F(Search, AWrongSearchIsOneLineWithWhatIsAllowed) {
  const auto with_space = [&](const json& s) {
    json doc = search("random", 4);
    doc["search"]["space"] = s;
    return error(doc);
  };
  EXPECT_THAT(with_space({{"learning_rat", {{"uniform", {0, 1}}}}}),
              HasSubstr("search.space.learning_rat: unknown key (did you mean \"learning_rate\"?); "
                        "allowed keys: hidden, "
                        "units, activation, dropout, learning_rate, batch_size, seed, epochs"));
  EXPECT_THAT(with_space({{"learning_rate", {{"log_unifrom", {1e-4, 1e-1}}}}}),
              HasSubstr("search.space.learning_rate.log_unifrom: unknown distribution (did you "
                        "mean \"log_uniform\"?); "
                        "allowed for learning_rate: uniform, log_uniform or choice"));
  EXPECT_THAT(with_space({{"learning_rate", {{"uniform", {0.1, 0.01}}}}}),
              HasSubstr("search.space.learning_rate.uniform: got [0.1,0.01]; expected [low, high] "
                        "with low < high"));
  EXPECT_THAT(with_space({{"learning_rate", {{"log_uniform", {0, 0.1}}}}}), HasSubstr("low > 0"));
  EXPECT_THAT(with_space({{"learning_rate", {{"int_uniform", {1, 3}}}}}),
              HasSubstr("the learning_rate axis cannot draw from int_uniform; allowed: uniform, "
                        "log_uniform or choice"));
  EXPECT_THAT(with_space({{"batch_size", {{"int_uniform", {16.5, 64}}}}}),
              HasSubstr("both integers"));
  EXPECT_THAT(with_space({{"activation", {{"uniform", {0, 1}}}}}), HasSubstr("allowed: choice"));
  json no_dropout = search("random", 4);
  no_dropout["base"]["layers"].erase(1);
  EXPECT_THAT(error(no_dropout), HasSubstr("search.space.dropout: the base has no Dropout layer"));
  json sampler = search("sobal", 4);
  EXPECT_THAT(error(sampler), HasSubstr("search.sampler: got \"sobal\" (did you mean \"sobol\"?); "
                                        "expected one of random, sobol"));
  json trials = search("random", 0);
  EXPECT_THAT(error(trials), HasSubstr("search.trials: got 0; expected a positive integer"));
  json many = search("random", 4);
  many["search"]["trials"] = 1048577;
  EXPECT_THAT(
      error(many),
      HasSubstr("search.trials: got 1048577; expected a positive integer no larger than 1048576"));
  // Every value the space can give is checked once for the file, not found bad trial by trial.
  EXPECT_THAT(
      with_space({{"dropout", {{"uniform", {0.5, 1.5}}}}}),
      HasSubstr(
          "search.space.dropout gives 1.5: layers[1].rate: got 1.5; expected a number in [0, 1)"));
  EXPECT_THAT(with_space({{"units", {{"choice", {16, "big"}}}}}),
              HasSubstr("search.space.units gives big: layers[0].units"));
  EXPECT_THAT(with_space({{"activation", {{"choice", {"relu", "relux"}}}}}),
              HasSubstr("search.space.activation gives relux: layers[0].activation: got \"relux\" "
                        "(did you mean \"relu\"?)"));
  EXPECT_THAT(with_space({{"batch_size", {{"int_uniform", {0, 4}}}}}),
              HasSubstr("search.space.batch_size gives 0: fit.batch_size"));
  json both = search("random", 4);
  both["grid"] = {{"seed", {1, 2}}};
  EXPECT_THAT(error(both), HasSubstr("more than one of \"models\", \"grid\" and \"search\""));
}

TEST_F(Search, TheGridTakesTheNewAxesToo) {
  const Sweep grid =
      load({{"base", base()}, {"grid", {{"units", {4, 8}}, {"dropout", {0.0, 0.25}}}}});
  ASSERT_EQ(grid.models.size(), 4u);
  EXPECT_EQ(grid.models[1].name, "m-u4-d0.25");
  EXPECT_EQ(grid.models[1].spec->layers[1].rate, 0.25);
  EXPECT_EQ(grid.models[3].values, json({{"units", 8}, {"dropout", 0.25}}));
}

// ---- The scheduler ----------------------------------------------------------------

TEST_F(Search, ASchedulersRungsAreGraceTimesTheFactorsPowersUnderMaxEpochs) {
  json doc = search("random", 8);
  doc["scheduler"] = {{"type", "asha"}, {"metric", "val_accuracy"}, {"max_epochs", 27}};
  const Sweep sweep = load(doc);
  const SchedulerSpec& s = *sweep.scheduler;
  EXPECT_TRUE(s.maximize);  // Keras's auto: an accuracy goes up
  EXPECT_EQ(s.max_epochs, 27);
  EXPECT_EQ(sweep.models[0].spec->fit.epochs, 27);  // max_epochs sets every trial's
  EXPECT_EQ(s.brackets(), 1);
  EXPECT_THAT(s.rungs(0), ElementsAre(1, 3, 9));
  doc["scheduler"]["type"] = "hyperband";
  const SchedulerSpec h = *load(doc).scheduler;
  EXPECT_EQ(h.brackets(), 4);  // floor(log3(27 / 1)) + 1
  EXPECT_THAT(h.rungs(1), ElementsAre(3, 9));
  EXPECT_THAT(h.rungs(3), ElementsAre());  // the last bracket trains every trial in full
  EXPECT_EQ(h.bracket_of(5), 1);
  EXPECT_TRUE(h.is_rung(5, 3));
  EXPECT_FALSE(h.is_rung(5, 1));
  doc["scheduler"] = {{"type", "successive_halving"}};
  const SchedulerSpec d = *load(doc).scheduler;
  EXPECT_EQ(d.metric, "val_loss");
  EXPECT_FALSE(d.maximize);
  EXPECT_EQ(d.max_epochs, 9);  // the trials' own
}

TEST_F(Search, AWrongSchedulerIsOneLineWithWhatIsAllowed) {
  const auto with = [&](const json& scheduler, json doc = json()) {
    if (doc.is_null()) doc = search("random", 4);
    doc["scheduler"] = scheduler;
    return error(doc);
  };
  EXPECT_THAT(
      with({{"type", "ahsa"}}),
      HasSubstr("scheduler.type: got \"ahsa\" (did you mean \"asha\"?); expected one of asha, "
                "successive_halving, hyperband"));
  EXPECT_THAT(with({{"type", "asha"}, {"metric", "val_acuracy"}}),
              HasSubstr("reports no \"val_acuracy\" (did you mean \"val_accuracy\"?)"));
  EXPECT_THAT(with({{"type", "asha"}, {"reduction_factor", 1}}),
              HasSubstr("scheduler.reduction_factor: got 1; expected an integer of at least 2"));
  EXPECT_THAT(with({{"type", "asha"}, {"grace_epoch", 1}}),
              HasSubstr("scheduler.grace_epoch: unknown key (did you mean \"grace_epochs\"?)"));
  json no_validation = search("random", 4);
  no_validation["base"]["fit"].erase("validation_split");
  EXPECT_THAT(with({{"type", "asha"}, {"metric", "val_accuracy"}}, no_validation),
              HasSubstr("val_accuracy needs validation rows"));
  EXPECT_THAT(with({{"type", "asha"}, {"grace_epochs", 20}}),
              HasSubstr("scheduler: no rung falls under the models' epochs (9; the first is at "
                        "grace_epochs, 20)"));
  EXPECT_THAT(with({{"type", "asha"}, {"max_epochs", 1}}),
              HasSubstr("scheduler: no rung falls under the models' epochs (1;"));
  json epochs_axis = search("random", 4);
  epochs_axis["search"]["space"]["epochs"] = {{"choice", {3, 9}}};
  EXPECT_THAT(with({{"type", "asha"}, {"max_epochs", 9}}, epochs_axis),
              HasSubstr("the epochs axis sets the models' epochs too"));
}

}  // namespace
}  // namespace mf

#include "session.h"

#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "arrays.h"
#include "nn/weights.h"
#include "runtime/error.h"
#include "runtime/machine_resources.h"

namespace mfpy {

nlohmann::json json_of(const std::string& text, const std::string& source) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw mf::UserError(source + ": not JSON: " + e.what());
  }
}

namespace {

mf::ModelSpec parse(const std::string& spec_json, const std::string& source) {
  return mf::parse_model_spec(json_of(spec_json, source), source);
}

// The spec without its fit settings but for the batch size, which the model's plan holds.
mf::ModelSpec without_fit(mf::ModelSpec spec) {
  spec.fit = mf::FitSpec(1, spec.fit.batch_size);
  return spec;
}

}  // namespace

mf::BackendOptions backend_options(const BackendChoice& choice) {
  mf::BackendOptions options;
  options.kind = mf::parse_named(mf::kBackendNames, choice.backend, "backend");
  options.graphs = mf::parse_named(mf::kGraphsNames, choice.graphs, "graphs");
  options.gemm = mf::parse_named(mf::kGemmImplNames, choice.gemm, "gemm");
  options.activations =
      mf::parse_named(mf::kActivationImplNames, choice.activations, "activations");
  if (choice.threads < 0 || choice.threads > 4096)
    throw mf::UserError("threads " + std::to_string(choice.threads) +
                        ": expected 1 to 4096 (0: the cores this process may use)");
  options.threads = choice.threads ? choice.threads : mf::usable_cores();
  return options;
}

Session::Session(const std::string& spec_json, const BackendChoice& choice,
                 const std::string& source)
    : options_(backend_options(choice)) {
  const mf::ModelSpec spec = parse(spec_json, source);
  std::ostringstream line;
  backend_ = mf::make_backend(options_, line);
  backend_line_ = line.str();
  model_ = std::make_unique<mf::Model>(spec, *backend_);
}

void Session::respec(const std::string& spec_json, const std::string& source) {
  const mf::ModelSpec spec = parse(spec_json, source);
  if (spec == model_->spec()) return;
  // a weight column changes the plan (the batch's targets): the model is built again
  if (without_fit(spec) == without_fit(model_->spec()) &&
      spec.y_cols() == model_->spec().y_cols()) {
    model_->set_fit(spec.fit);
    return;
  }
  auto model = std::make_unique<mf::Model>(spec, *backend_);
  mf::Model& old = *model_;
  if (mf::Model::weight_count(spec) == mf::Model::weight_count(old.spec())) {
    const mf::ModelSpec a = old.spec(), b = spec;
    bool same_shapes = a.input == b.input && a.layers.size() == b.layers.size();
    for (size_t i = 0; same_shapes && i < a.layers.size(); ++i)
      same_shapes = a.layers[i].kind == b.layers[i].kind && a.width(i) == b.width(i) &&
                    a.layers[i].use_bias == b.layers[i].use_bias &&
                    a.layers[i].center == b.layers[i].center &&
                    a.layers[i].scale == b.layers[i].scale;
    if (same_shapes) {
      model->set_weights(old.get_weights());
      // New data (its targets, the metrics read against them, a weight column) is no new
      // optimizer: its state and rate go on. compile() makes a new session, as Keras a new one.
      if (a.optimizer == b.optimizer) {
        model->set_optimizer_state(old.optimizer_state());
        model->set_learning_rate(old.learning_rate());
      }
    }
  }
  model_ = std::move(model);
}

void Session::check(const mf::HostRows& rows, const mf::DeviceData& data, const std::string& what) {
  mf::check_data(model_->spec(), data, label_summary(rows), what);
}

mf::HostRows Session::weighed(mf::HostRows rows, const std::vector<float>* sample_weight,
                              bool training, std::vector<float>& y) const {
  const mf::ClassWeights& class_weight = model_->spec().fit.class_weight;
  const std::span<const float> targets{rows.y, size_t(rows.rows) * size_t(rows.target_cols)};
  if (sample_weight) {
    y = mf::with_weight_column(targets, rows.target_cols, *sample_weight);
    rows.weights = mf::RowWeights::sample;
  } else if (training && !class_weight.empty()) {
    y = mf::with_weight_column(targets, rows.target_cols,
                               mf::class_weights_of(targets, rows.target_cols, class_weight));
    rows.weights = mf::RowWeights::by_class;
  } else {
    return rows;
  }
  rows.y = y.data();
  return rows;
}

mf::FitResult Session::fit(
    const mf::HostRows& given, const std::vector<float>* sample_weight,
    const std::atomic<bool>* stop, std::function<void(const std::string&)> progress,
    std::function<bool(int epoch, const mf::EpochMetrics&, bool ended)> epoch_end,
    std::function<void(int64_t step, int64_t steps)> step_done) {
  std::vector<float> y;
  const mf::HostRows rows = weighed(given, sample_weight, true, y);
  const mf::DeviceData data = resident(rows);
  check(rows, data, "training data (x, y)");
  mf::FitOptions options;
  options.stop = stop;
  options.graphs = mf::use_graphs(options_, *backend_);
  if (progress) options.progress = [progress](int, const std::string& line) { progress(line); };
  options.step_done = std::move(step_done);
  if (epoch_end)
    options.epoch_end = [epoch_end](int, int epoch, const mf::EpochMetrics& e, bool ended) {
      return epoch_end(epoch, e, ended);
    };
  return mf::fit(*model_, data, options);
}

mf::Evaluation Session::evaluate(const mf::HostRows& given,
                                 const std::vector<float>* sample_weight) {
  std::vector<float> y;
  const mf::HostRows rows = weighed(given, sample_weight, false, y);
  const mf::DeviceData data = resident(rows);
  check(rows, data, "evaluation data (x, y)");
  return mf::evaluate(*model_, data, 0, rows.rows);
}

std::vector<float> Session::predict(const mf::HostRows& rows) {
  if (rows.features != model_->spec().input)
    throw mf::UserError("model '" + model_->spec().name + "': x has " +
                        std::to_string(rows.features) + " features but the model's input is " +
                        std::to_string(model_->spec().input));
  const mf::DeviceData data = resident(rows);
  return mf::predict(*model_, data, 0, rows.rows);
}

std::vector<std::vector<int64_t>> Session::weight_shapes() const {
  const mf::ModelSpec& spec = model_->spec();
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const mf::LayerSpec& l = spec.layers[i];
    const int64_t in = i == 0 ? spec.input : spec.width(i - 1), out = spec.width(i);
    if (l.kind == mf::LayerKind::dense) {
      shapes.push_back({in, out});  // the kernel, then the bias
      if (l.use_bias) shapes.push_back({out});
    } else if (l.kind == mf::LayerKind::batch_normalization) {
      if (l.scale) shapes.push_back({out});   // gamma
      if (l.center) shapes.push_back({out});  // beta
      shapes.push_back({out});                // moving mean
      shapes.push_back({out});                // moving variance
    }
  }
  return shapes;
}

void Session::set_optimizer_state(const mf::OptimizerState& state) {
  try {
    model_->set_optimizer_state(state);
  } catch (const std::invalid_argument& e) {
    throw mf::UserError(e.what());
  }
}

void Session::set_learning_rate(double rate) {
  if (const auto& schedule = model_->spec().optimizer.schedule)
    throw mf::UserError(std::string("learning_rate: the optimizer's rate is a schedule (") +
                        mf::class_of(mf::kScheduleNames, schedule->kind) +
                        "), which sets it every step; compile with a number to set it");
  if (!std::isfinite(rate) || rate < 0)
    throw mf::UserError("learning_rate: got " + std::to_string(rate) +
                        "; expected a finite number >= 0");
  model_->set_learning_rate(float(rate));
}

void Session::save_weights(const std::string& path) { mf::save_weights(*model_, path); }
void Session::load_weights(const std::string& path) { mf::load_weights(*model_, path); }

}  // namespace mfpy

#pragma once
// One model of the Python package's Sequential: its spec, its backend and the model on it, kept
// between calls as a Keras model keeps its weights and optimizer state. Thread-compatible: the
// binding calls it from one thread at a time (the work thread of a fit, without the GIL).
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/factory.h"
#include "nn/fit.h"
#include "nn/model.h"

namespace mfpy {

// The JSON value of `text`: a UserError naming `source` where it is not JSON.
nlohmann::json json_of(const std::string& text, const std::string& source);

// The backend's settings, by the command line's names (--backend, --graphs, --gemm, --activations,
// --threads); threads 0: the cores this process may use, as the command line's default.
struct BackendChoice {
  std::string backend = "auto", graphs = "auto", gemm = "tiled", activations = "ours";
  int threads = 0;
};

// The backend options `choice` names, without making the backend: a UserError for a name or a
// thread count it does not take.
mf::BackendOptions backend_options(const BackendChoice& choice);

class Session {
 public:
  // A model of `spec_json` (a spec as a spec file holds it, validated as one: a UserError of one
  // line naming `source`) on the backend `choice` makes (a UserError for a name it does not know,
  // or cuda without a device).
  Session(const std::string& spec_json, const BackendChoice& choice, const std::string& source);

  // The spec for what comes next (a later fit()'s arguments, or compile() again). Where only the
  // fit's settings changed (epochs, validation split, shuffle, callbacks, the kind of row weights
  // kept), the model keeps its weights and optimizer state, as Keras's does; otherwise (the data's
  // targets first seen, a fit with row weights after one without, or the reverse: the batch's plan
  // differs) it is built again with the weights it had where their shapes are the same, and the
  // optimizer's state and rate where the optimizer is the same too.
  void respec(const std::string& spec_json, const std::string& source);

  const mf::ModelSpec& spec() const { return model_->spec(); }
  mf::Backend& backend() { return *backend_; }
  const std::string& backend_line() const { return backend_line_; }  // "--backend auto: cpu (...)"

  // fit (nn/fit.h) on the rows, the spec's fit settings; `stop` ends it after its current step,
  // `progress` receives each epoch's line, `epoch_end` each epoch's metrics (FitOptions::epoch_end:
  // true stops the fit there), `step_done` the steps taken in the epoch now and then
  // (FitOptions::step_done). Each row's loss is weighted by `sample_weight` (rows; the spec's
  // fit.sample_weight is then set) or by the spec's fit.class_weight. A UserError when the data
  // does not fit the spec.
  mf::FitResult fit(const mf::HostRows& rows, const std::vector<float>* sample_weight,
                    const std::atomic<bool>* stop, std::function<void(const std::string&)> progress,
                    std::function<bool(int epoch, const mf::EpochMetrics&, bool ended)> epoch_end,
                    std::function<void(int64_t step, int64_t steps)> step_done = {});
  // The loss weighted by `sample_weight` where given (class weights apply to training only).
  mf::Evaluation evaluate(const mf::HostRows& rows, const std::vector<float>* sample_weight);
  std::vector<float> predict(const mf::HostRows& rows);  // (rows, outputs)

  // Keras's get_weights(): every weight, flat, and each one's shape, in the same order.
  std::vector<float> weights() { return model_->get_weights(); }
  std::vector<std::vector<int64_t>> weight_shapes() const;
  void set_weights(const std::vector<float>& weights) { model_->set_weights(weights); }
  void save_weights(const std::string& path);
  void load_weights(const std::string& path);

  // The optimizer's state (nn/model.h OptimizerState: what a .keras file keeps), and back: a
  // UserError where it is not this model's (its slots, their sizes, a negative step count).
  mf::OptimizerState optimizer_state() { return model_->optimizer_state(); }
  void set_optimizer_state(const mf::OptimizerState& state);

  // The optimizer's learning rate now (what ReduceLROnPlateau or set_learning_rate left), and the
  // rate from the next step on (Keras's `model.optimizer.learning_rate = r`, LearningRateScheduler:
  // called between fits, or between epochs from a fit's epoch_end). A UserError where the rate is a
  // schedule or `rate` is not a finite number >= 0.
  float learning_rate() const { return model_->learning_rate(); }
  void set_learning_rate(double rate);

 private:
  mf::DeviceData resident(const mf::HostRows& rows) { return mf::DeviceData(*backend_, rows); }
  // `rows` with each row's weight after its targets, their y now `y`'s: `sample_weight`, or in
  // training the spec's class weights; without either, `rows` as they are.
  mf::HostRows weighed(mf::HostRows rows, const std::vector<float>* sample_weight, bool training,
                       std::vector<float>& y) const;
  void check(const mf::HostRows& rows, const mf::DeviceData& data, const std::string& what);

  mf::BackendOptions options_;
  std::unique_ptr<mf::Backend> backend_;
  std::string backend_line_;
  std::unique_ptr<mf::Model> model_;
};

}  // namespace mfpy

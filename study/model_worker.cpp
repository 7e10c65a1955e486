#include "study/model_worker.h"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "runtime/output_path.h"
#include "nn/weights.h"
#include "runtime/clock.h"
#include "runtime/error.h"
#include "runtime/machine_resources.h"

namespace mf {
namespace {

// A float as its shortest decimal form that reads back the same float (0.01f, not 0.009999999776).
double as_written(float x) {
  char text[32];
  *std::to_chars(text, text + sizeof text - 1, x, std::chars_format::general).ptr = '\0';
  return std::strtod(text, nullptr);
}

// A layer as Keras's summary names it, with what sets it apart: "Dense(64 relu)", "Dropout(0.2)";
// no comma, so the CSV column splits on commas as every other one does.
std::string layer_words(const LayerSpec& l) {
  char text[96];
  switch (l.kind) {
    case LayerKind::dense:
      std::snprintf(text, sizeof text, "Dense(%d %s)", l.units, to_string(l.activation));
      break;
    case LayerKind::dropout:
      std::snprintf(text, sizeof text, "Dropout(%g)", l.rate);
      break;
    case LayerKind::activation:
      std::snprintf(text, sizeof text, "Activation(%s)", to_string(l.activation));
      break;
    default:
      return to_string(l.kind);
  }
  return text;
}

TrainingSettings settings_of(const ModelSpec& spec) {
  TrainingSettings settings;
  settings.optimizer = spec.optimizer.kind;
  settings.learning_rate = as_written(spec.optimizer.learning_rate);
  if (spec.optimizer.schedule)
    settings.schedule = class_of(kScheduleNames, spec.optimizer.schedule->kind);
  settings.epochs = spec.fit.epochs, settings.batch_size = spec.fit.batch_size;
  settings.validation_split = spec.fit.validation_split, settings.shuffle = spec.fit.shuffle;
  settings.seed = spec.seed, settings.memory_mode = spec.memory.mode;
  // The Dense layers before the output (the grid's hidden and activation axes), and every layer.
  size_t output = spec.layers.size() - 1;  // the last Dense: the output layer (a spec has one)
  while (spec.layers[output].kind != LayerKind::dense) --output;
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    if (spec.layers[i].kind == LayerKind::dense && i != output) {
      settings.hidden.push_back(spec.layers[i].units);
      settings.activations.push_back(spec.layers[i].activation);
    }
    if (!settings.layers.empty()) settings.layers += ' ';
    settings.layers += layer_words(spec.layers[i]);
  }
  if (!spec.preprocessing.empty())
    settings.pipeline_workers = spec.pipeline.workers, settings.prefetch = spec.pipeline.prefetch;
  return settings;
}

}  // namespace

ModelWorker::ModelWorker(const Job& job, const RunOptions& options)
    : job_(job), options_(options), startup_(Clock::now()) {
  report_.index = job.index;
  report_.name = job.name;
  report_.values = job.values;
  report_.device = job.device;
  report_.host = host_name();
  report_.pid = int(getpid());
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) report_.visible_devices = visible;
  if (!job.spec) {
    report_.status = ModelStatus::failed;
    report_.error = job.error;
    code_ = kExitMistake;
    return;
  }
  const ModelSpec& spec = *job.spec;
  report_.settings = settings_of(spec);
  report_.params = Model::param_count(spec);
  report_.memory.cap_bytes = spec.memory.limit_bytes;
  report_.has_accuracy = spec.has_accuracy();
  report_.metrics = spec.metric_list();
}

void ModelWorker::attempt(const std::function<void()>& stage) {
  if (failed()) return;
  try {
    stage();
  } catch (const OutOfMemory& e) {
    report_.status = ModelStatus::oom;
    report_.error = e.what();
    code_ = kExitMistake;
  } catch (const std::bad_alloc&) {  // data sets and other host buffers outside the pools
    report_.status = ModelStatus::oom;
    report_.error =
        "out of host memory outside the model's pool (data sets, buffers); use less data, or raise the process's memory limit (ulimit -v) if one is set";
    code_ = kExitMistake;
  } catch (const UserError& e) {
    report_.status = ModelStatus::failed;
    report_.error = e.what();
    code_ = kExitMistake;
  } catch (const std::exception& e) {
    report_.status = ModelStatus::failed;
    report_.error = e.what();
    code_ = kExitFailure;
  }
}

void ModelWorker::fail(const std::string& why, int code) {
  report_.status = ModelStatus::failed;
  report_.error = report_.error.empty() ? why : report_.error + "; " + why;
  code_ = worse_exit_code(code_, code);
}

int worse_exit_code(int a, int b) {
  auto rank = [](int code) {
    return code == kExitInterrupted ? 3 : code == kExitMistake ? 2 : code != kExitOk ? 1 : 0;
  };
  return rank(a) >= rank(b) ? a : b;
}

void ModelWorker::share_failure(const ModelWorker& lead) {
  if (!lead.failed() || failed()) return;
  report_.status = lead.report_.status;
  report_.error = lead.report_.error;
  code_ = worse_exit_code(code_, lead.code_);
}

void ModelWorker::prepare(Backend& backend, DataSets& data) {
  attempt([&] {
    const ModelSpec& spec = *job_.spec;
    report_.backend = backend.name();
    report_.device_name = backend.device();
    report_.device_schedule = backend.device_schedule();
    data_ = &data.get(job_.data, spec);
    report_.data = data_->description;
    report_.data_bytes = data_->bytes();
    check_data(spec, *data_->train, data_->train_labels, "training data '" + job_.data + "'");
    if (data_->test)
      check_data(spec, *data_->test, *data_->test_labels, "test data '" + job_.data + "'");
    const int64_t train_rows = training_rows(spec, data_->train->rows());
    const MemoryPlan plan = training_plan(spec, train_rows);
    report_.plan = plan.parts;    // also when over the cap
    check_plan_fits(spec, plan);  // before the pool takes anything
    if (!job_.save.empty()) check_output_path("--save", job_.save);
    report_.validated = train_rows < data_->train->rows();
    report_.train_rows = train_rows;
  });
  end_startup();
}

void ModelWorker::end_startup() { report_.startup_s = seconds_since(startup_); }

void ModelWorker::finish(const FitResult& fit, bool interrupted,
                         const std::optional<Evaluation>& test, Model& model, int member) {
  attempt([&] {
    report_.fit = fit;
    report_.fitted = true;
    if (fit.status == FitStatus::diverged) {
      report_.status = ModelStatus::diverged;
      report_.error = fit.why + "; lower optimizer.learning_rate";
      code_ = kExitFailure;
    } else if (fit.status == FitStatus::stopped && interrupted) {  // not a calibration's step limit
      report_.status = ModelStatus::failed;
      report_.error = kInterrupted + fit.why;
      code_ = kExitInterrupted;
    } else if (fit.stopped_at_rung()) {  // a trial that lost: no failure (fit.stop_reason says
                                         // why), and no test set
      report_.status = ModelStatus::stopped;
    }
    if (test && report_.status == ModelStatus::ok) {
      report_.test = *test;
      report_.tested = true;
      const std::string bad = non_finite(report_.test, "test");
      if (!bad.empty()) {
        report_.status = ModelStatus::diverged;
        report_.error = "evaluation: " + bad + "; lower optimizer.learning_rate";
        code_ = kExitFailure;
      }
    }
    report_.memory = model.member_share(member);
    report_.samples = fit.samples;
    if (fit.train_s > 0) report_.samples_per_s = double(report_.samples) / fit.train_s;
    if (!job_.save.empty()) {
      try {
        save_weights(model, job_.save, member);
      } catch (const SystemError& e) {  // the path was checked at the start: the machine failed
        fail(std::string("--save ") + e.what(), 1);
      }
    }
    // --save-best stages only a model that ended ok and trained in full (not a calibration's or a
    // probe's few steps), and in the keeper's process only one that may still be among the best.
    if (!job_.keep.empty() && report_.status == ModelStatus::ok &&
        options_.calibration_steps == 0) {
      const auto save = [&] { save_weights(model, job_.keep, member); };
      try {
        if (options_.stage_best)
          options_.stage_best(report_, save);
        else
          save();
      } catch (const SystemError& e) {  // its folder was made at the start: the machine failed
        fail(std::string("--save-best: ") + e.what(), 1);
      }
    }
  });
}

}  // namespace mf

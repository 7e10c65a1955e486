// multifit._multifit: the C++ library under the Python package (python/multifit/). Everything a
// user calls is in the package's Python modules; this binds what they need of the library: a model
// session, the command line's entry in this process, and the build's description. A mistake in
// what was given (mf::UserError) is a ValueError with the command line's text; a model over its
// memory cap (mf::OutOfMemory) a MemoryError.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <optional>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "apps/multifit/cli.h"
#include "arrays.h"
#include "interruptible.h"
#include "judge.h"
#include "nn/callbacks.h"
#include "nn/keras_model.h"
#include "nn/spec.h"
#include "runtime/build_info.h"
#include "runtime/child_process.h"
#include "runtime/error.h"
#include "runtime/interrupt.h"
#include "runtime/mpi_world.h"
#include "session.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace mfpy {
namespace {

nb::dict epoch_dict(const mf::EpochMetrics& e, const mf::ModelSpec& spec) {
  nb::dict d;
  d["loss"] = e.loss;
  const std::vector<mf::MetricSpec> metrics = spec.metric_list();
  for (size_t i = 0; i < metrics.size() && i < e.metrics.size(); ++i)
    d[metrics[i].name.c_str()] = e.metrics[i];
  if (!std::isnan(e.val_loss)) {
    d["val_loss"] = e.val_loss;
    for (size_t i = 0; i < metrics.size() && i < e.val_metrics.size(); ++i)
      d[("val_" + metrics[i].name).c_str()] = e.val_metrics[i];
  }
  if (!std::isnan(e.learning_rate)) d["learning_rate"] = e.learning_rate;
  d["seconds"] = e.seconds;
  return d;
}

nb::dict fit_dict(const mf::FitResult& fit, const mf::ModelSpec& spec) {
  nb::list epochs;
  for (const mf::EpochMetrics& e : fit.epochs) epochs.append(epoch_dict(e, spec));
  nb::dict d;
  d["epochs"] = epochs;
  d["status"] = mf::name_of(mf::kFitStatusNames, fit.status);
  d["why"] = fit.why;
  d["train_s"] = fit.train_s;
  d["samples"] = fit.samples;
  d["stopped_epoch"] = fit.stopped_epoch ? nb::cast(*fit.stopped_epoch) : nb::none();
  d["stop_reason"] = fit.stop_reason;
  d["restored_epoch"] = fit.restored_epoch ? nb::cast(*fit.restored_epoch) : nb::none();
  return d;
}

nb::dict evaluation_dict(const mf::Evaluation& e, const mf::ModelSpec& spec) {
  nb::dict d;
  d["loss"] = e.loss;
  const std::vector<mf::MetricSpec> metrics = spec.metric_list();
  for (size_t i = 0; i < metrics.size() && i < e.metrics.size(); ++i)
    d[metrics[i].name.c_str()] = e.metrics[i];
  return d;
}

// Keras's sample_weight: None, or a float32 array of a weight per row of x.
std::optional<std::vector<float>> weights_of(const nb::object& sample_weight, int64_t rows) {
  if (sample_weight.is_none()) return std::nullopt;
  return sample_weights(nb::cast<Rows>(sample_weight), rows, "sample_weight");
}

// The fit's epoch lines go to `on_line` (None: quiet), each epoch's logs (epoch_dict) to
// `on_epoch(epoch, logs, ended)`, which returns whether to stop (ended: the fit ended with this
// epoch, and what it returns is not read), and the steps taken in an epoch, now and then, to
// `on_step(step, steps)`; each called with the GIL taken back. An exception `on_epoch` or `on_step`
// raises stops the fit (after that epoch, or that step) and is raised again once it has ended (not
// carried through the fit's loop).
nb::dict fit(Session& session, const Rows& x, const Rows& y, const nb::object& on_line,
             const nb::object& on_epoch, const nb::object& sample_weight,
             const nb::object& on_step) {
  const mf::HostRows rows = host_rows(x, &y);
  const std::optional<std::vector<float>> weights = weights_of(sample_weight, rows.rows);
  std::atomic<bool> stop{false};
  std::function<void(const std::string&)> progress;
  if (!on_line.is_none())
    progress = [&on_line](const std::string& line) {
      nb::gil_scoped_acquire held;
      on_line(line);
    };
  std::optional<nb::python_error> raised;
  std::function<bool(int, const mf::EpochMetrics&, bool)> epoch_end;
  if (!on_epoch.is_none())
    epoch_end = [&](int epoch, const mf::EpochMetrics& e, bool ended) {
      nb::gil_scoped_acquire held;
      try {
        return nb::cast<bool>(on_epoch(epoch, epoch_dict(e, session.spec()), ended));
      } catch (nb::python_error& error) {
        raised.emplace(std::move(error));
        return true;
      }
    };
  // The fit's thread waits for the GIL here (at most every 50 ms): a Python thread that holds it
  // long holds training up as long.
  std::function<void(int64_t, int64_t)> step_done;
  if (!on_step.is_none())
    step_done = [&](int64_t step, int64_t steps) {
      nb::gil_scoped_acquire held;
      try {
        on_step(step, steps);
      } catch (nb::python_error& error) {
        raised.emplace(std::move(error));
        stop = true;
      }
    };
  const mf::FitResult result = run_interruptible<mf::FitResult>(
      [&] {
        return session.fit(rows, weights ? &*weights : nullptr, &stop, progress, epoch_end,
                           step_done);
      },
      [&stop] { stop = true; });
  if (raised) throw std::move(*raised);
  return fit_dict(result, session.spec());
}

nb::dict evaluate(Session& session, const Rows& x, const Rows& y, const nb::object& sample_weight) {
  const mf::HostRows rows = host_rows(x, &y);
  const std::optional<std::vector<float>> weights = weights_of(sample_weight, rows.rows);
  const mf::Evaluation e = run_interruptible<mf::Evaluation>(
      [&] { return session.evaluate(rows, weights ? &*weights : nullptr); }, [] {});
  return evaluation_dict(e, session.spec());
}

// `values` as a numpy array of `shape` that owns them (no copy).
using Floats = nb::ndarray<nb::numpy, float>;
Floats to_numpy(std::vector<float>&& values, std::vector<size_t> shape) {
  auto* owned = new std::vector<float>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
  return Floats(owned->data(), shape.size(), shape.data(), owner);
}

Floats predict(Session& session, const Rows& x) {
  const mf::HostRows rows = host_rows(x, nullptr);
  std::vector<float> out =
      run_interruptible<std::vector<float>>([&] { return session.predict(rows); }, [] {});
  return to_numpy(std::move(out), {size_t(rows.rows), size_t(session.spec().outputs())});
}

void set_weights(Session& session, const Rows& flat) {
  if (flat.ndim() != 1)
    throw mf::UserError("set_weights: expected the weights as one flat float32 array");
  session.set_weights(std::vector<float>(flat.data(), flat.data() + flat.shape(0)));
}

// The optimizer's state as {"optimizer": its identifier, "iterations", "slots": [float32 arrays of
// the parameters' count, nn/settings.h optimizer_slots order], "nadam_product", "learning_rate":
// the rate now, None where it is a schedule}, and back from such a dict.
nb::dict optimizer_state(Session& session) {
  mf::OptimizerState state = session.optimizer_state();
  nb::list slots;
  for (std::vector<float>& slot : state.slots) {
    const size_t n = slot.size();
    slots.append(to_numpy(std::move(slot), {n}));
  }
  const mf::OptimizerSpec& optimizer = session.spec().optimizer;
  nb::dict d;
  d["optimizer"] = mf::to_string(optimizer.kind);
  d["iterations"] = state.iterations;
  d["slots"] = slots;
  d["nadam_product"] = state.nadam_product;
  d["learning_rate"] = optimizer.schedule ? nb::none() : nb::cast(session.learning_rate());
  return d;
}

void set_optimizer_state(Session& session, const nb::dict& d) {
  mf::OptimizerState state{
      nb::cast<int64_t>(d["iterations"]), {}, nb::cast<float>(d["nadam_product"])};
  for (nb::handle slot : nb::cast<nb::list>(d["slots"])) {
    const Rows flat = nb::cast<Rows>(slot);
    if (flat.ndim() != 1)
      throw mf::UserError("set_optimizer_state: expected each slot as one flat float32 array");
    state.slots.emplace_back(flat.data(), flat.data() + flat.shape(0));
  }
  session.set_optimizer_state(state);
  if (!d["learning_rate"].is_none())
    session.set_learning_rate(nb::cast<double>(d["learning_rate"]));
}

// This process's standard output (file descriptor 1: what C++ prints), from construction to take(),
// held in a temporary file instead of printed.
// What the command writes to file descriptor `fd` (1: its tables; 2: its notes, a worker
// process's too), held in a temporary file instead of printed, until take().
class CapturedFd {
 public:
  explicit CapturedFd(int fd) : fd_(fd), file_(std::tmpfile()) {
    if (!file_) throw mf::SystemError("cannot make a temporary file to hold the command's output");
    flush();
    saved_ = dup(fd_);
    dup2(fileno(file_), fd_);
  }
  ~CapturedFd() {
    restore();
    std::fclose(file_);
  }
  std::string take() {
    restore();
    std::string text;
    std::rewind(file_);
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, file_)) > 0;) text.append(buffer, n);
    return text;
  }

 private:
  void flush() {
    std::fflush(fd_ == 1 ? stdout : stderr);
    (fd_ == 1 ? std::cout : std::cerr).flush();
  }
  void restore() {
    if (saved_ < 0) return;
    flush();
    dup2(saved_, fd_);
    close(saved_);
    saved_ = -1;
  }
  int fd_;
  std::FILE* file_;
  int saved_ = -1;
};

// `multifit ARGS...` in this process (apps/multifit/cli.h), the GIL released, Ctrl-C a stop of the
// run (its models report, its document is written) and then KeyboardInterrupt. Returns the exit
// code, the mistake's line ("" for none), and with `capture` what it printed on standard output
// (its tables) and standard error (its notes), which are then not printed. `judge` (None: none)
// rules on a run's trials after each epoch (judge.h); `status` (None: none) is called with the GIL
// taken back as each model ends, as `status(ended, models, statuses, best)` (study/progress.h's
// StatusSink), in place of the run's status lines. What either raised is raised after the run, an
// exception from `status` having stopped it as Ctrl-C does.
nb::tuple cli(const std::vector<std::string>& args, bool capture, const nb::object& judge,
              const nb::object& status) {
  mf::clear_stop();
  FirstRaised raised;
  std::optional<PythonJudge> python_judge;
  if (!judge.is_none()) python_judge.emplace(judge, raised);
  mf::RunHooks hooks{python_judge ? &*python_judge : nullptr, {}};
  if (!status.is_none())
    hooks.status = [&](size_t ended, size_t models, const std::string& statuses,
                       const std::string& best) {
      nb::gil_scoped_acquire held;
      if (raised.any()) return;
      try {
        status(ended, models, statuses, best);
      } catch (nb::python_error& error) {
        raised.keep(std::move(error));
      }
    };
  std::optional<CapturedFd> tables, notes;
  if (capture) tables.emplace(1), notes.emplace(2);
  std::string mistake;
  const int code = run_interruptible<int>(
      [&] {
        std::vector<std::string> words = {"multifit"};
        words.insert(words.end(), args.begin(), args.end());
        std::vector<char*> argv;
        for (std::string& w : words) argv.push_back(w.data());
        argv.push_back(nullptr);
        return mf::cli_main(int(words.size()), argv.data(), &mistake, hooks);
      },
      [] { mf::request_stop(); });
  raised.raise_if_any();
  return nb::make_tuple(code, mistake, tables ? tables->take() : std::string(),
                        notes ? notes->take() : std::string());
}

nb::dict build_info() {
  nb::dict d;
  d["version"] = mf::multifit_version();
  d["commit"] = mf::multifit_commit();
  d["cuda"] = mf::built_with_cuda();
  d["mpi"] = mf::built_with_mpi();
  d["description"] = mf::describe_build();
  return d;
}

}  // namespace
}  // namespace mfpy

NB_MODULE(_multifit, m) {
  using namespace mfpy;
  mf::leave_signals_to_embedder();  // SIGINT stays Python's but while multifit works
                                    // (interruptible.h)
  remember_main_thread();
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const mf::OutOfMemory& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const mf::UserError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  m.def("build_info", &build_info,
        "What this build is: version, commit, whether it has CUDA and MPI.");
  m.def(
      "check_backend", [](const BackendChoice& choice) { backend_options(choice); }, "choice"_a,
      "A ValueError for a backend, graphs, gemm, activations or threads that compile() would not take.");
  m.def(
      "spec_from_keras",
      [](const std::string& config_json) {
        return mf::spec_from_keras(mfpy::json_of(config_json, "from_keras"), "from_keras").dump();
      },
      "config_json"_a,
      "The model part of a spec (JSON text) of a Keras Sequential's config (JSON text): nn/keras_model.h; a ValueError naming what multifit does not have.");
  m.def(
      "keras_config",
      [](const std::string& spec_json) {
        return mf::keras_config(mfpy::json_of(spec_json, "to_keras"), "to_keras").dump();
      },
      "spec_json"_a,
      "The config.json (JSON text) of a .keras file holding a spec's model (JSON text): nn/keras_model.h.");
  m.def(
      "keras_classes", [] { return mf::keras_classes().dump(); },
      "Keras's classes a spec takes, by family, with their positional settings (JSON text): nn/spec.h; multifit.keras makes its classes of them.");
  m.def(
      "check_finite",
      [](const Rows& a, const std::string& where) {
        const int cols = a.ndim() == 2 ? int(a.shape(1)) : 1;
        mf::check_finite({a.data(), a.size()}, cols, where);
      },
      "array"_a, "where"_a,
      "A ValueError naming the first NaN or infinite value of a 1-D or 2-D float32 array as WHERE[row, column] (data/dataset.h).");
  m.def("set_worker_program", &mf::set_self_executable, "path"_a,
        "The multifit program that processes mode's workers run (this process is python).");
  m.def(
      "cli", &cli, "args"_a, "capture"_a = false, "judge"_a = nb::none(), "status"_a = nb::none(),
      "Runs `multifit ARGS...` in this process: (exit code, mistake line or '', stdout, stderr); `judge` rules on a run's trials after each epoch (an object with metric, name and judge(trial, epochs, value) -> stop); status(ended, models, statuses, best) is called as each model ends, in place of the status lines.");

  nb::class_<BackendChoice>(m, "BackendChoice")
      .def(nb::init<>())
      .def_rw("backend", &BackendChoice::backend)
      .def_rw("graphs", &BackendChoice::graphs)
      .def_rw("gemm", &BackendChoice::gemm)
      .def_rw("activations", &BackendChoice::activations)
      .def_rw("threads", &BackendChoice::threads);

  nb::class_<Session>(m, "Session")
      .def(nb::init<const std::string&, const BackendChoice&, const std::string&>(), "spec_json"_a,
           "backend"_a, "source"_a)
      .def("respec", &Session::respec, "spec_json"_a, "source"_a)
      .def_prop_ro("backend_name", [](Session& s) { return s.backend().name(); })
      .def_prop_ro("device", [](Session& s) { return s.backend().device(); })
      .def_prop_ro("backend_line", &Session::backend_line)
      .def_prop_ro("input", [](Session& s) { return s.spec().input; })
      .def_prop_ro("outputs", [](Session& s) { return s.spec().outputs(); })
      .def_prop_ro("param_count", [](Session& s) { return mf::Model::param_count(s.spec()); })
      .def(
          "maximizes",
          [](Session& s, const std::string& monitor) {
            return mf::Improvement(s.spec(), monitor, mf::MonitorMode::automatic, 0).maximizes();
          },
          "monitor"_a)
      .def("fit", &fit, "x"_a, "y"_a, "on_line"_a = nb::none(), "on_epoch"_a = nb::none(),
           "sample_weight"_a = nb::none(), "on_step"_a = nb::none())
      .def("evaluate", &evaluate, "x"_a, "y"_a, "sample_weight"_a = nb::none())
      .def("predict", &predict, "x"_a)
      .def("weights",
           [](Session& s) {
             std::vector<float> w = s.weights();
             const size_t n = w.size();
             return to_numpy(std::move(w), {n});
           })
      .def("weight_shapes", &Session::weight_shapes)
      .def("set_weights", &set_weights, "weights"_a)
      .def("optimizer_state", &optimizer_state)
      .def("set_optimizer_state", &set_optimizer_state, "state"_a)
      .def("learning_rate", &Session::learning_rate)
      .def("set_learning_rate", &Session::set_learning_rate, "rate"_a)
      .def("save_weights", &Session::save_weights, "path"_a)
      .def("load_weights", &Session::load_weights, "path"_a);
}

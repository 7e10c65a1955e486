// multifit worker NAME: one model of a processes-mode run, in its own process
// (apps/multifit/modes/processes.cpp describes the exchange with the parent). Not for users: it is
// hidden from --help. NAME is only there so that ps and top show which model a process trains.
#include <iostream>
#include <memory>
#include <string>

#include "apps/multifit/commands.h"
#include "apps/multifit/data_sets.h"
#include "apps/multifit/model_worker.h"
#include "runtime/error.h"
#include "runtime/interrupt.h"

namespace mf {
namespace {

int run_worker() {
  const std::atomic<bool>& stop = stop_on_interrupt();
  std::string line;
  if (!std::getline(std::cin, line)) throw UserError("multifit worker: no job on stdin (it is started by 'multifit run')");
  const nlohmann::json request = nlohmann::json::parse(line);
  const RunOptions options = run_options_from_json(request.at("options"));
  std::vector<Job> jobs = make_jobs(load_sweep(options.sweep), options);
  Job& job = jobs.at(request.at("index").get<size_t>());
  job.device = 0;  // CUDA_VISIBLE_DEVICES shows this process its one GPU as device 0

  std::unique_ptr<Backend> backend;  // declared before the model, which gives its pool back to it
  std::unique_ptr<DataSets> data;
  ModelWorker worker(job, options);
  worker.attempt([&] {
    backend = make_backend(options.backend, std::cerr);
    data = std::make_unique<DataSets>(*backend);
  });
  if (backend) worker.build(*backend, *data);
  std::cout << "ready" << std::endl;  // at the start barrier
  const bool go = std::getline(std::cin, line) && line == "go";
  if (!go) worker.attempt([] { throw UserError("not started: the run was interrupted (Ctrl-C)"); });
  worker.train(&stop, [](const std::string& epoch) { std::cout << "epoch " << epoch << std::endl; });
  if (backend) worker.attempt([&] { backend->synchronize(); });
  std::cout << to_wire(worker.report()).dump() << std::endl;
  return worker.exit_code();
}

}  // namespace

Command add_worker_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("worker", "");  // no description: hidden from --help
  cmd->add_option("name", "The model's name, for ps");
  return [] { return run_worker(); };
}

}  // namespace mf

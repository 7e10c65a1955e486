// A processes-mode child: one model in its own process, exchanging lines with the parent as
// protocol.h describes.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "backends/factory.h"
#include "runtime/error.h"
#include "runtime/interrupt.h"
#include "runtime/process_memory.h"
#include "study/data_sets.h"
#include "study/model_worker.h"
#include "study/modes/processes/protocol.h"
#include "study/pack_worker.h"

namespace mf {
namespace {

// The pipe to the parent: the process's stdout when it started. Anything else that writes to stdout
// (a library's message) goes to stderr instead, so that it cannot break a line of the exchange.
FILE* take_stdout_for_the_parent() {
  const int fd = dup(STDOUT_FILENO);
  FILE* pipe = fd >= 0 ? fdopen(fd, "w") : nullptr;
  if (!pipe || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
    throw SystemError("multifit worker: cannot set up the pipe to the parent");
  return pipe;
}

void say(FILE* parent, const std::string& line) {
  std::fputs(line.c_str(), parent);
  std::fputc('\n', parent);
  std::fflush(parent);
}

}  // namespace

int run_child_process() {
  const std::atomic<bool>& stop = stop_on_interrupt();
  FILE* parent = take_stdout_for_the_parent();
  std::string line;
  if (!std::getline(std::cin, line)) throw UserError("multifit worker: no job on stdin (it is started by 'multifit run')");
  const nlohmann::json request = nlohmann::json::parse(line);
  const RunOptions options = run_options_from_json(request.at("options"));
  Job job = job_from_json(request.at("job"));
  job.device = 0;  // CUDA_VISIBLE_DEVICES shows this process its one GPU as device 0

  std::unique_ptr<Backend> backend;  // declared before the model, which gives its pool back to it
  std::unique_ptr<DataSets> data;
  ModelWorker worker(job, options);
  worker.attempt([&] {
    backend = make_backend(options.backend, std::cerr);
    data = std::make_unique<DataSets>(*backend);
  });
  PackWorker model({&worker}, options, std::nullopt);  // a pack of one
  if (backend) model.build(*backend, *data);
  say(parent, std::string(kReady));  // at the start barrier
  const bool go = std::getline(std::cin, line) && line == kGo;
  if (!go) worker.fail(kNotStarted, 130);
  model.train(&stop, [&](size_t, const std::string& epoch) { say(parent, std::string(kEpoch) + epoch); });
  if (backend) worker.attempt([&] { backend->synchronize(); });
  worker.report().process_peak_rss_bytes = peak_resident_bytes();
  say(parent, nlohmann::json(worker.report()).dump());
  return worker.exit_code();
}

}  // namespace mf

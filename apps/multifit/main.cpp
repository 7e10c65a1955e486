// multifit: train small dense networks on hand-written kernels and measure how
// several of them share one GPU.
#include <cstdio>
#include <exception>

#include "apps/multifit/commands.h"
#include "runtime/error.h"

int main(int argc, char** argv) {
  CLI::App app{"multifit: small dense networks on hand-written CUDA kernels"};
  app.require_subcommand(1);
  const mf::Command train = mf::add_train_command(app);
  const mf::Command info = mf::add_info_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "multifit: error: %s; see 'multifit --help'\n", e.what());
    return 2;
  }
  try {
    return app.got_subcommand("train") ? train() : info();
  } catch (const mf::UserError& e) {
    std::fprintf(stderr, "multifit: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "multifit: failure: %s\n", e.what());
    return 1;
  }
}

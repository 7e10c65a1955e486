// multifit: train small dense networks on hand-written kernels and measure how
// several of them share one GPU.
#include "apps/multifit/cli.h"

int main(int argc, char** argv) { return mf::cli_main(argc, argv); }

#pragma once
// What a run prints when it ends: a table of its models, and for several modes of one sweep the
// modes side by side.
#include <vector>

#include "study/report/report.h"

namespace mf {

// "name: test_loss 0.3512 - test_accuracy 0.8731 - 3 epochs in 4.21s - peak memory 1.20 MiB", or its status.
void print_model_line(const ModelReport& m);
void print_run_table(const RunReport& run);
void print_modes_table(const std::vector<RunReport>& runs);

}  // namespace mf

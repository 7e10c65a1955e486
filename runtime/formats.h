#pragma once
// Numbers as multifit's lines and tables print them: the epoch lines (nn/fit.cpp), the progress
// line (study/progress.cpp), the answer (study/report/answer.cpp) and the summary (apps/multifit).
#include <string>

namespace mf {

// A number as Keras prints it: 4 decimals, and nan or inf without a sign for NaN.
std::string format_metric(double value);
// A duration: "2.31s", or "14ms" under a second (a tiny model's epoch is not "0.00s").
std::string format_duration(double seconds);
// A ratio: "2.96x".
std::string format_ratio(double x);

}  // namespace mf

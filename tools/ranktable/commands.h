// The three commands of cohort-ranktable. Each returns the process exit code:
// 0 success, 1 invalid table or failure.
#pragma once

#include <string>

#include "cohort/ranktable.h"

namespace cohort::tools {

struct ValidateArgs {
  std::string file;
  int rank = -1;
  std::string profile = "default";
  double waitS = 0;  ///< how long an "initializing" table is re-read
  bool quiet = false;
};

struct GenerateArgs {
  ranktable::GenerateOptions cluster;
  std::string format = "json";
  std::string output;  ///< empty = stdout
};

struct ConvertArgs {
  std::string file;
  std::string to;
  std::string output;  ///< empty = stdout
};

int runValidate(const ValidateArgs& args);
int runGenerate(const GenerateArgs& args);
int runConvert(const ConvertArgs& args);

}  // namespace cohort::tools

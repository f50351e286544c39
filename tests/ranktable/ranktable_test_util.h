// Shared helpers of the ranktable tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "cohort/ranktable.h"

namespace cohort::ranktable::test {

/// A file of tests/ranktable/data.
inline std::string dataPath(const std::string& name) {
  return std::string(COHORT_RANKTABLE_DATA_DIR) + "/" + name;
}

/// Options for tests: no waiting, no log noise.
inline LoadOptions quietOptions() {
  LoadOptions options;
  options.timeoutMs = 0;
  options.logWarnings = false;
  return options;
}

/// Every diagnostic, one per line, for failure messages.
inline std::string describe(const Diagnostics& diagnostics) {
  std::string out;
  for (const auto& d : diagnostics.all()) out += "\n  " + d.toString();
  return out;
}

}  // namespace cohort::ranktable::test

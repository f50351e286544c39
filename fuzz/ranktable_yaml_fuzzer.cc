// libFuzzer target: YAML cluster files.
#include "fuzz/loader_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cohort::fuzz::fuzzLoader(cohort::ranktable::Format::kYaml, data, size);
}

// libFuzzer target: rank table JSON (1.0, 1.2, legacy template).
#include "fuzz/loader_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cohort::fuzz::fuzzLoader(cohort::ranktable::Format::kJson, data, size);
}

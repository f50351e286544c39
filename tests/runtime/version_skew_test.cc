// Compiled with COHORT_API_VERSION=999999: a program built against an API newer
// than the library's must be refused at initialisation, naming both versions.
#include <gtest/gtest.h>

#include "cohort/runtime.h"
#include "common/version.h"
#include "test_util.h"

namespace cohort::runtime {
namespace {

TEST(VersionSkewTest, NewerProgramIsRefusedNamingBothVersions) {
  const std::string library = apiVersionString(loadedVersion().apiVersion);
  const Status s = init();
  EXPECT_EQ(s.code(), ErrorCode::kVersionMismatch) << s.toString();
  EXPECT_NE(s.message().find("compiled against Cohort API 999.999"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("provides API " + library), std::string::npos) << s.message();
  EXPECT_ERROR(setDevice(0), kVersionMismatch, "999.999");
}

}  // namespace
}  // namespace cohort::runtime

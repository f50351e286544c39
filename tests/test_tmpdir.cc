// Linked into every gtest binary (tests/CMakeLists.txt): the files a test writes under
// ::testing::TempDir() (rank logs, rank tables, traces) go to a folder of the binary's own,
// removed once all its tests passed; a failed run keeps it and says where. Tests then need
// no cleanup of their own, and a suite run leaves nothing in /tmp.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

namespace {

// Registered before main() runs; SetUp and TearDown run on the main thread around
// all tests (before any test thread exists, so setenv is safe there).
class TestTempFolder : public ::testing::Environment {
 public:
  void SetUp() override {
    const std::string parent = ::testing::TempDir();  // TEST_TMPDIR, TMPDIR or /tmp/
    std::string pattern = parent + "cohort-test-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) return;  // TempDir() stays the parent
    folder_ = pattern;
    ::setenv("TEST_TMPDIR", folder_.c_str(), 1);
  }
  void TearDown() override {
    if (folder_.empty()) return;
    if (::testing::UnitTest::GetInstance()->Passed()) {
      std::error_code ignored;
      std::filesystem::remove_all(folder_, ignored);
    } else {
      std::fprintf(stderr, "test files kept in %s\n", folder_.c_str());
    }
  }

 private:
  std::string folder_;
};

[[maybe_unused]] ::testing::Environment* const kRegistered =
    ::testing::AddGlobalTestEnvironment(new TestTempFolder);

}  // namespace

// The test harness's own promise (tests/test_tmpdir.cc): a binary's temporary files go
// to a folder of its own, not straight into /tmp.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

namespace {

TEST(TestTempFolder, TempDirIsAFreshFolderOfThisBinary) {
  const std::string dir = ::testing::TempDir();
  EXPECT_NE(dir.find("/cohort-test-"), std::string::npos) << dir;
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0) << dir;
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u) << "mkdtemp's folder is the owner's alone";
}

}  // namespace

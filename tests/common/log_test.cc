#include "common/log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace cohort {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(LogTest, FileLinesCarryTimePidRankDeviceAndSubsystem) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("cohort_log_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  Config config = Config::parse({{"COHORT_LOG_DIR", dir.string()},
                                 {"COHORT_LOG_LEVEL", "info"},
                                 {"COHORT_LOG_SUBSYS", "runtime,^transport"}});
  log::configure(config);
  log::setRank(3);
  log::setThreadDevice(5);
  EXPECT_TRUE(log::enabled(LogLevel::kInfo, "runtime"));
  EXPECT_FALSE(log::enabled(LogLevel::kDebug, "runtime"));   // below the level
  EXPECT_FALSE(log::enabled(LogLevel::kInfo, "collective"));  // not included
  EXPECT_FALSE(log::enabled(LogLevel::kError, "transport"));  // excluded
  EXPECT_TRUE(log::enabled(LogLevel::kError, "collective"));  // errors pass the include list
  COHORT_LOG(kInfo, "runtime", "hello {}", 42);
  COHORT_LOG(kInfo, "collective", "filtered out");
  COHORT_LOG(kWarn, "runtime", "careful");
  log::configure(Config::parse({}));  // flushes and closes the file
  const std::string text = readFile((dir / ("cohort_" + std::to_string(::getpid()) + ".log")).string());
  const std::string pid = "[" + std::to_string(::getpid()) + "]";
  EXPECT_NE(text.find(pid + " [info] [rank 3 dev 5] [runtime] hello 42"), std::string::npos) << text;
  EXPECT_NE(text.find("[warning] [rank 3 dev 5] [runtime] careful"), std::string::npos) << text;
  EXPECT_EQ(text.find("filtered out"), std::string::npos) << text;
  EXPECT_EQ(text.rfind("[20", 0), 0u) << "lines start with the date: " << text;
  log::setRank(-1);
  log::setThreadDevice(-1);
  std::filesystem::remove_all(dir);
}

TEST(LogTest, DefaultLevelIsWarn) {
  log::configure(Config::parse({}));
  EXPECT_FALSE(log::enabled(LogLevel::kInfo, "runtime"));
  EXPECT_TRUE(log::enabled(LogLevel::kWarn, "runtime"));
}

}  // namespace
}  // namespace cohort

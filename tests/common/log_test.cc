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

// A process holding several ranks (one thread per device, HcclCommInitAll): each line
// names the rank of the thread that writes it, not the last rank the process made.
TEST(LogTest, LinesNameTheRankOfTheirThreadOrDevice) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("cohort_log_rank_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  log::configure(Config::parse({{"COHORT_LOG_DIR", dir.string()}, {"COHORT_LOG_LEVEL", "info"}}));
  log::setRank(7);  // the last communicator made in this process
  const int owner = 0, other = 0;
  log::claimDeviceRank(4, 2, &owner);
  log::claimDeviceRank(4, 5, &other);  // a second claim (a sub-communicator) is ignored
  log::setThreadDevice(4);
  COHORT_LOG(kInfo, "runtime", "worker of device 4");
  {
    log::RankScope scope(1);
    COHORT_LOG(kInfo, "collective", "inside a scope");
    {
      log::RankScope inner(6);
      COHORT_LOG(kInfo, "collective", "nested");
    }
    COHORT_LOG(kInfo, "collective", "outer again");
  }
  log::releaseDeviceRank(4, &owner);
  COHORT_LOG(kInfo, "runtime", "released");
  log::setThreadDevice(3);
  COHORT_LOG(kInfo, "runtime", "unclaimed device");
  log::configure(Config::parse({}));
  const std::string text = readFile((dir / ("cohort_" + std::to_string(::getpid()) + ".log")).string());
  EXPECT_NE(text.find("[rank 2 dev 4] [runtime] worker of device 4"), std::string::npos) << text;
  EXPECT_NE(text.find("[rank 1 dev 4] [collective] inside a scope"), std::string::npos) << text;
  EXPECT_NE(text.find("[rank 6 dev 4] [collective] nested"), std::string::npos) << text;
  EXPECT_NE(text.find("[rank 1 dev 4] [collective] outer again"), std::string::npos) << text;
  EXPECT_NE(text.find("[rank 7 dev 4] [runtime] released"), std::string::npos) << text;
  EXPECT_NE(text.find("[rank 7 dev 3] [runtime] unclaimed device"), std::string::npos) << text;
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

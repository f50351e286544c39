#include "common/config.h"

#include <gtest/gtest.h>

namespace cohort {
namespace {

TEST(ConfigTest, DefaultsWhenNothingIsSet) {
  Config c = Config::parse({});
  EXPECT_TRUE(c.errors.empty());
  EXPECT_EQ(c.deviceCount, 8);
  EXPECT_EQ(c.deviceMemory, 16ull << 30);
  EXPECT_EQ(c.connectTimeoutS, 120);
  EXPECT_EQ(c.execTimeoutS, 1800);
  EXPECT_EQ(c.ifBasePort, 60000);
  EXPECT_EQ(c.buffSize, 200ull << 20);
  EXPECT_EQ(c.logLevel, LogLevel::kWarn);
  EXPECT_TRUE(c.status().ok());
}

TEST(ConfigTest, ParsesValidValues) {
  Config c = Config::parse({{"COHORT_DEVICE_COUNT", "4"},
                            {"COHORT_VISIBLE_DEVICES", "3,1"},
                            {"COHORT_DEVICE_MEMORY", "512M"},
                            {"COHORT_LOG_LEVEL", "debug"},
                            {"COHORT_LOG_SUBSYS", "runtime,^transport"},
                            {"COHORT_TRANSPORT", "tcp"},
                            {"COHORT_DETERMINISTIC", "1"}});
  ASSERT_TRUE(c.errors.empty()) << c.status().toString();
  EXPECT_EQ(c.deviceCount, 4);
  EXPECT_EQ(c.visibleDevices, (std::vector<int>{3, 1}));
  EXPECT_EQ(c.deviceMemory, 512ull << 20);
  EXPECT_EQ(c.logLevel, LogLevel::kDebug);
  EXPECT_EQ(c.logSubsystems, (std::vector<std::string>{"runtime", "^transport"}));
  EXPECT_EQ(c.transport, "tcp");
  EXPECT_TRUE(c.deterministic);
}

TEST(ConfigTest, EveryInvalidValueIsReportedWithNameValueAndExpectation) {
  Config c = Config::parse({{"COHORT_DEVICE_COUNT", "abc"},
                            {"COHORT_CONNECT_TIMEOUT", "0"},
                            {"COHORT_TRANSPORT", "carrier-pigeon"},
                            {"COHORT_VISIBLE_DEVICES", "1,1"},
                            {"COHORT_DEVICE_MEMORY", "12Q"}});
  ASSERT_EQ(c.errors.size(), 5u);
  const Status s = c.status();
  EXPECT_EQ(s.code(), ErrorCode::kConfigError);
  for (const char* needle :
       {"'abc' for environment variable COHORT_DEVICE_COUNT", "an integer in [1, 64]",
        "COHORT_CONNECT_TIMEOUT", "'carrier-pigeon'", "one of auto, shm, tcp, rdma",
        "COHORT_VISIBLE_DEVICES", "'12Q'"}) {
    EXPECT_NE(s.message().find(needle), std::string::npos) << needle << " in " << s.message();
  }
}

TEST(ConfigTest, UnknownCohortVariableIsAWarningNotAnError) {
  Config c = Config::parse({{"COHORT_DEVCE_COUNT", "4"}});
  EXPECT_TRUE(c.errors.empty());
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("COHORT_DEVCE_COUNT"), std::string::npos);
}

TEST(ConfigTest, ByteSizes) {
  std::uint64_t b = 0;
  EXPECT_TRUE(parseByteSize("1024", &b));
  EXPECT_EQ(b, 1024u);
  EXPECT_TRUE(parseByteSize("16G", &b));
  EXPECT_EQ(b, 16ull << 30);
  EXPECT_TRUE(parseByteSize("3KiB", &b));
  EXPECT_EQ(b, 3u << 10);
  EXPECT_FALSE(parseByteSize("", &b));
  EXPECT_FALSE(parseByteSize("-1", &b));
  EXPECT_FALSE(parseByteSize("5X", &b));
  EXPECT_FALSE(parseByteSize("99999999999999T", &b));
}

TEST(ConfigTest, DescribeListsEveryVariable) {
  const std::string text = Config::parse({{"COHORT_IF_BASE_PORT", "61000"}}).describe();
  EXPECT_NE(text.find("COHORT_IF_BASE_PORT=61000\n"), std::string::npos);
  EXPECT_NE(text.find("COHORT_EXEC_TIMEOUT=1800\n"), std::string::npos);
  EXPECT_NE(text.find("COHORT_LOG_LEVEL=warn\n"), std::string::npos);
}

}  // namespace
}  // namespace cohort

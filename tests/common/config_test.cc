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
  EXPECT_EQ(c.processors, 0);  // the online processors
  EXPECT_TRUE(c.status().ok());
}

TEST(ConfigTest, ParsesValidValues) {
  Config c = Config::parse({{"COHORT_DEVICE_COUNT", "4"},
                            {"COHORT_VISIBLE_DEVICES", "3,1"},
                            {"COHORT_DEVICE_MEMORY", "512M"},
                            {"COHORT_LOG_LEVEL", "debug"},
                            {"COHORT_LOG_SUBSYS", "runtime,^transport"},
                            {"COHORT_TRANSPORT", "tcp"},
                            {"COHORT_DETERMINISTIC", "1"},
                            {"COHORT_PROCESSORS", "3"}});
  ASSERT_TRUE(c.errors.empty()) << c.status().toString();
  EXPECT_EQ(c.deviceCount, 4);
  EXPECT_EQ(c.visibleDevices, (std::vector<int>{3, 1}));
  EXPECT_EQ(c.deviceMemory, 512ull << 20);
  EXPECT_EQ(c.logLevel, LogLevel::kDebug);
  EXPECT_EQ(c.logSubsystems, (std::vector<std::string>{"runtime", "^transport"}));
  EXPECT_EQ(c.transport, "tcp");
  EXPECT_TRUE(c.deterministic);
  EXPECT_EQ(c.processors, 3);
  EXPECT_FALSE(Config::parse({}).deterministic);
}

TEST(ConfigTest, EveryInvalidValueIsReportedWithNameValueAndExpectation) {
  Config c = Config::parse({{"COHORT_DEVICE_COUNT", "abc"},
                            {"COHORT_CONNECT_TIMEOUT", "0"},
                            {"COHORT_TRANSPORT", "carrier-pigeon"},
                            {"COHORT_VISIBLE_DEVICES", "1,1"},
                            {"COHORT_DEVICE_MEMORY", "12Q"},
                            {"COHORT_DETERMINISTIC", "yes"},
                            {"COHORT_PROCESSORS", "-2"}});
  ASSERT_EQ(c.errors.size(), 7u);
  const Status s = c.status();
  EXPECT_EQ(s.code(), ErrorCode::kConfigError);
  for (const char* needle :
       {"'abc' for environment variable COHORT_DEVICE_COUNT", "an integer in [1, 64]",
        "COHORT_CONNECT_TIMEOUT", "'carrier-pigeon'", "one of auto, shm, tcp, rdma",
        "COHORT_VISIBLE_DEVICES", "'12Q'", "'-2' for environment variable COHORT_PROCESSORS",
        "'yes' for environment variable COHORT_DETERMINISTIC"}) {
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

// HCCL_OP_RETRY_ENABLE / HCCL_OP_RETRY_PARAMS: CANN's defaults, format and ranges.
TEST(HcclConfigTest, OpRetryLevelsAndParameters) {
  const Config none = Config::parse({});
  EXPECT_FALSE(none.retryL0 || none.retryL1 || none.retryL2);
  EXPECT_EQ(none.retryMaxCnt, 1);
  EXPECT_EQ(none.retryHoldMs, 5000);
  EXPECT_EQ(none.retryIntervalMs, 1000);
  const Config on = Config::parse({{"HCCL_OP_RETRY_ENABLE", "L0:0,L1:1,L2:0"},
                                   {"HCCL_OP_RETRY_PARAMS", "MaxCnt:3, HoldTime:200, IntervalTime:0"}});
  EXPECT_TRUE(on.errors.empty()) << on.status().toString();
  EXPECT_FALSE(on.retryL0);
  EXPECT_TRUE(on.retryL1);
  EXPECT_EQ(on.retryMaxCnt, 3);
  EXPECT_EQ(on.retryHoldMs, 200);
  EXPECT_EQ(on.retryIntervalMs, 0);
  EXPECT_TRUE(Config::parse({{"HCCL_OP_RETRY_ENABLE", "L0:1"}}).retryL0);
  for (const char* bad : {"L1", "L1:2", "L3:1", "L1:1,L1:0", "", "L1:1;L2:0"}) {
    const Config c = Config::parse({{"HCCL_OP_RETRY_ENABLE", bad}});
    EXPECT_NE(c.status().message().find("HCCL_OP_RETRY_ENABLE"), std::string::npos) << bad;
  }
  for (const char* bad : {"MaxCnt:0", "MaxCnt:11", "HoldTime:60001", "IntervalTime:-1",
                          "Hold:10", "MaxCnt:2,MaxCnt:3", "MaxCnt=3"}) {
    const Config c = Config::parse({{"HCCL_OP_RETRY_PARAMS", bad}});
    EXPECT_NE(c.status().message().find("HCCL_OP_RETRY_PARAMS"), std::string::npos) << bad;
  }
}

}  // namespace
}  // namespace cohort

namespace cohort {
namespace {

TEST(HcclConfigTest, HcclVariablesMapOntoCohortsWithHcclRanges) {
  Config c = Config::parse({{"HCCL_CONNECT_TIMEOUT", "300"},
                            {"HCCL_EXEC_TIMEOUT", "0"},
                            {"HCCL_IF_IP", "10.1.2.3"},
                            {"HCCL_SOCKET_IFNAME", "^=eth0"},
                            {"HCCL_IF_BASE_PORT", "61000"},
                            {"HCCL_BUFFSIZE", "64"},
                            {"HCCL_ALGO", "level0:NA;level1:ring"},
                            {"HCCL_DETERMINISTIC", "TRUE"},
                            {"HCCL_RDMA_TC", "104"},
                            {"ASCEND_RT_VISIBLE_DEVICES", "2,3"},
                            {"ASCEND_GLOBAL_LOG_LEVEL", "1"},
                            {"ASCEND_SLOG_PRINT_TO_STDOUT", "1"}});
  ASSERT_TRUE(c.errors.empty()) << c.status().toString();
  EXPECT_EQ(c.connectTimeoutS, 300);
  EXPECT_EQ(c.execTimeoutS, 0);
  EXPECT_EQ(c.ifIp, "10.1.2.3");
  EXPECT_EQ(c.socketIfname, "^=eth0");
  EXPECT_EQ(c.ifBasePort, 61000);
  EXPECT_EQ(c.buffSize, 64ull << 20);
  EXPECT_EQ(c.hcclAlgo, "level0:NA;level1:ring");
  EXPECT_TRUE(c.deterministic);
  EXPECT_EQ(c.rdmaTc, 104);
  EXPECT_EQ(c.visibleDevices, (std::vector<int>{2, 3}));
  EXPECT_EQ(c.logLevel, LogLevel::kInfo);
  EXPECT_TRUE(c.logToStdout);
}

TEST(HcclConfigTest, CohortVariablesWinOverHccls) {
  Config c = Config::parse({{"HCCL_CONNECT_TIMEOUT", "300"}, {"COHORT_CONNECT_TIMEOUT", "7"}});
  EXPECT_TRUE(c.errors.empty());
  EXPECT_EQ(c.connectTimeoutS, 7);
}

TEST(HcclConfigTest, OutOfRangeValuesGiveHcclsEI0001Text) {
  Config c = Config::parse({{"HCCL_CONNECT_TIMEOUT", "60"},
                            {"HCCL_RDMA_SL", "1000"},
                            {"HCCL_RDMA_TC", "130"},
                            {"HCCL_DETERMINISTIC", "maybe"},
                            {"ASCEND_GLOBAL_LOG_LEVEL", "9"}});
  const std::string m = c.status().message();
  EXPECT_EQ(c.errors.size(), 5u) << m;
  EXPECT_NE(m.find("Value '60' for environment variable HCCL_CONNECT_TIMEOUT is invalid. "
                   "Expected value: an integer in [120, 7200]."), std::string::npos) << m;
  EXPECT_NE(m.find("Value '1000' for environment variable HCCL_RDMA_SL"), std::string::npos);
  EXPECT_NE(m.find("HCCL_RDMA_TC is invalid. Expected value: a multiple of 4"), std::string::npos);
  EXPECT_NE(m.find("'maybe' for environment variable HCCL_DETERMINISTIC"), std::string::npos);
  EXPECT_NE(m.find("ASCEND_GLOBAL_LOG_LEVEL"), std::string::npos);
}

TEST(HcclConfigTest, IntraServerLinkTable) {
  EXPECT_EQ(Config::parse({{"HCCL_INTRA_ROCE_ENABLE", "1"}}).transport, "tcp");
  EXPECT_EQ(Config::parse({{"HCCL_INTRA_PCIE_ENABLE", "1"}, {"HCCL_INTRA_ROCE_ENABLE", "0"}}).transport, "auto");
  EXPECT_NE(Config::parse({{"HCCL_INTRA_PCIE_ENABLE", "1"}, {"HCCL_INTRA_ROCE_ENABLE", "1"}})
                .status().message().find("0 or 1 (but not both 1)"), std::string::npos);
  EXPECT_NE(Config::parse({{"HCCL_INTRA_PCIE_ENABLE", "0"}}).status().message()
                .find("HCCL_INTRA_PCIE_ENABLE"), std::string::npos);
  EXPECT_NE(Config::parse({{"HCCL_INTRA_ROCE_ENABLE", "0"}}).status().message()
                .find("HCCL_INTRA_ROCE_ENABLE"), std::string::npos);
  EXPECT_FALSE(Config::parse({{"HCCL_INTRA_ROCE_ENABLE", "2"}}).errors.empty());
}

TEST(HcclConfigTest, Whitelist) {
  EXPECT_EQ(Config::parse({{"HCCL_WHITELIST_DISABLE", "0"}, {"HCCL_WHITELIST_FILE", "/etc/w.json"}})
                .whitelistFile, "/etc/w.json");
  EXPECT_EQ(Config::parse({{"HCCL_WHITELIST_DISABLE", "1"}, {"HCCL_WHITELIST_FILE", "/etc/w.json"}})
                .whitelistFile, "");
  EXPECT_FALSE(Config::parse({{"HCCL_WHITELIST_DISABLE", "0"}}).errors.empty());
}

}  // namespace
}  // namespace cohort

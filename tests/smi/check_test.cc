// `cohort-smi check`: the items with chosen inputs (in this process), then the
// tool in a clean environment and with each kind of fault, checking the exit
// status and that the FAIL line names the cause and its fix.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "smi/smi_test_util.h"
#include "test_util.h"
#include "tools/smi/self_check.h"

namespace cohort::smi {
namespace {

using smitest::run;

std::string writeFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/smi_" + std::to_string(getpid()) + name;
  std::ofstream(path) << text;
  return path;
}

// One server with two devices; `hostIp` and rank 1's id chosen by the test.
std::string table(const std::string& hostIp, int secondRank = 1) {
  return R"({"status": "completed", "version": "1.0", "server_count": "1", "server_list": [
    {"server_id": "node-a", "host_ip": ")" +
         hostIp + R"(", "device": [{"device_id": "0", "rank_id": "0"},
      {"device_id": "1", "rank_id": ")" +
         std::to_string(secondRank) + R"("}]}]})";
}

const CheckItem* find(const std::vector<CheckItem>& items, const std::string& name,
                      CheckStatus status) {
  for (const auto& item : items) {
    if (item.name == name && item.status == status) return &item;
  }
  return nullptr;
}

// A base port whose 32 ports are free now, above the ephemeral range.
int freeBasePort() {
  for (int i = 0; i < 100; ++i) {
    const int base = 61000 + ((getpid() + i) % 140) * 32;
    if (checkPorts(base).status == CheckStatus::kOk) return base;
  }
  return 0;
}

TEST(CheckItems, EachBadVariableIsOneFailNamingIt) {
  const auto items = checkConfiguration(
      {{"HCCL_CONNECT_TIMEOUT", "5"}, {"COHORT_TRANSPORT", "pigeon"}, {"COHORT_NO_SUCH", "1"}});
  const auto* timeout = find(items, "configuration", CheckStatus::kFail);
  ASSERT_NE(timeout, nullptr);
  int fails = 0;
  bool namedTransport = false;
  for (const auto& item : items) {
    if (item.status != CheckStatus::kFail) continue;
    ++fails;
    namedTransport |= item.detail.find("COHORT_TRANSPORT") != std::string::npos &&
                      item.fix == "set COHORT_TRANSPORT to a valid value, or unset it";
  }
  EXPECT_EQ(fails, 2);
  EXPECT_TRUE(namedTransport);
  const auto* unknown = find(items, "configuration", CheckStatus::kWarn);
  ASSERT_NE(unknown, nullptr);
  EXPECT_NE(unknown->detail.find("COHORT_NO_SUCH"), std::string::npos);
  const auto good = checkConfiguration({{"COHORT_TRANSPORT", "tcp"}});
  ASSERT_EQ(good.size(), 1u);
  EXPECT_EQ(good[0].status, CheckStatus::kOk);
}

TEST(CheckItems, LimitsAndShmCompareWithWhatTheJobNeeds) {
  auto limits = checkLimits(2, 2, 2);
  EXPECT_NE(find(limits, "ulimit -n", CheckStatus::kOk), nullptr);
  EXPECT_NE(find(limits, "ulimit -u", CheckStatus::kOk), nullptr);
  limits = checkLimits(1 << 30, 1 << 20, 32);  // a billion ranks: no machine has the files
  const auto* files = find(limits, "ulimit -n", CheckStatus::kFail);
  ASSERT_NE(files, nullptr);
  EXPECT_NE(files->detail.find("for 1073741824 ranks"), std::string::npos) << files->detail;
  EXPECT_EQ(files->fix.rfind("ulimit -n ", 0), 0u) << files->fix;
  const CheckItem shm = checkShm("/dev/shm", 1ull << 60);
  EXPECT_EQ(shm.status, CheckStatus::kFail);
  EXPECT_NE(shm.detail.find("the job maps 1099511627776 MiB"), std::string::npos) << shm.detail;
  EXPECT_NE(shm.fix.find("--shm-size"), std::string::npos);
  EXPECT_EQ(checkShm("/dev/shm", 1 << 20).status, CheckStatus::kOk);
  const CheckItem missing = checkShm("/no/such/dir", 0);
  EXPECT_EQ(missing.status, CheckStatus::kFail);
  EXPECT_NE(missing.detail.find("/no/such/dir"), std::string::npos);
}

TEST(CheckItems, RankTableMustBeValidAndNameThisHost) {
  const std::string good = writeFile("good.json", table("10.1.2.3"));
  auto items = checkRankTable(good, {"127.0.0.1", "10.1.2.3"}, 8);
  ASSERT_NE(find(items, "rank table", CheckStatus::kOk), nullptr);
  EXPECT_EQ(items.back().detail,
            "this host is server 'node-a' (host_ip 10.1.2.3): ranks 0-1 on devices 0,1");
  items = checkRankTable(good, {"192.168.7.7"}, 8);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kFail);
  EXPECT_NE(items[0].detail.find("no server names this host: the table's addresses are "
                                 "10.1.2.3; this host's are 192.168.7.7"),
            std::string::npos)
      << items[0].detail;
  items = checkRankTable(good, {"10.1.2.3"}, 1);  // device 1 does not exist here
  const auto* devices = find(items, "rank table", CheckStatus::kFail);
  ASSERT_NE(devices, nullptr);
  EXPECT_NE(devices->detail.find("device_id 1 not on this node (COHORT_DEVICE_COUNT=1)"),
            std::string::npos);
  const std::string duplicate = writeFile("dup.json", table("10.1.2.3", 0));
  items = checkRankTable(duplicate, {"10.1.2.3"}, 8);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].status, CheckStatus::kFail);
  EXPECT_NE(items[0].detail.find("duplicate-rank-id"), std::string::npos) << items[0].detail;
  EXPECT_NE(items[0].fix.find("cohort-ranktable validate"), std::string::npos);
}

TEST(CheckItems, TakenBasePortFailsNamingIt) {
  const int base = freeBasePort();
  ASSERT_NE(base, 0);
  EXPECT_EQ(checkPorts(base).detail, "32 of 32 ports free in " + std::to_string(base) + "-" +
                                         std::to_string(base + 31) + " (COHORT_IF_BASE_PORT)");
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(base));
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  const CheckItem taken = checkPorts(base);
  close(fd);
  EXPECT_EQ(taken.status, CheckStatus::kFail);
  EXPECT_NE(taken.detail.find("port " + std::to_string(base) + " is in use"), std::string::npos)
      << taken.detail;
  EXPECT_NE(taken.fix.find("sport = :" + std::to_string(base)), std::string::npos);
}

// ---- The tool ---------------------------------------------------------------------

std::vector<std::string> cleanEnv(int base) {
  return {"COHORT_IF_BASE_PORT=" + std::to_string(base)};
}

TEST(CheckTool, PassesInACleanEnvironment) {
  const int base = freeBasePort();
  ASSERT_NE(base, 0);
  const auto r = run({COHORT_SMI, "check", "--job-memory", "1M"}, cleanEnv(base));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
  for (const char* item : {"versions", "configuration", "devices", "registry", "/dev/shm",
                           "ulimit -n", "ulimit -u", "ports"}) {
    EXPECT_NE(r.out.find(std::string("OK    ") + item), std::string::npos) << item << "\n" << r.out;
  }
  EXPECT_NE(r.out.find("all checks passed"), std::string::npos);
}

TEST(CheckTool, FailsNamingABadVariable) {
  auto env = cleanEnv(freeBasePort());
  env.push_back("HCCL_CONNECT_TIMEOUT=5");
  const auto r = run({COHORT_SMI, "check"}, env);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL  configuration  Value '5' for environment variable "
                       "HCCL_CONNECT_TIMEOUT is invalid"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("fix: set HCCL_CONNECT_TIMEOUT to a valid value, or unset it"),
            std::string::npos);
  const auto json = run({COHORT_SMI, "check", "--json"}, env);
  EXPECT_EQ(json.code, 1);
  const auto j = nlohmann::json::parse(json.out.substr(json.out.find('{')));
  EXPECT_FALSE(j["ok"].get<bool>());
  bool named = false;
  for (const auto& item : j["items"]) {
    named |= item["status"] == "FAIL" &&
             item["detail"].get<std::string>().find("HCCL_CONNECT_TIMEOUT") != std::string::npos;
  }
  EXPECT_TRUE(named) << j.dump(2);
}

TEST(CheckTool, FailsForABadRankTableAndPassesForOneNamingThisHost) {
  const auto env = cleanEnv(freeBasePort());
  const std::string bad = writeFile("tool_dup.json", table("127.0.0.1", 0));
  auto r = run({COHORT_SMI, "check", "--ranktable", bad}, env);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL  rank table"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("duplicate-rank-id"), std::string::npos) << r.out;
  const std::string good = writeFile("tool_good.json", table("127.0.0.1"));
  r = run({COHORT_SMI, "check", "--ranktable", good}, env);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("OK    rank table     this host is server 'node-a'"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("need 67 for 2 ranks"), std::string::npos) << "ranks from the table";
}

TEST(CheckTool, RefusesABadByteSize) {
  const auto r = run({COHORT_SMI, "check", "--job-memory", "lots"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("--job-memory 'lots' is not a byte size"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace cohort::smi

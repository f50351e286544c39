// How cohort-linkcheck finds its job: rank tables (the store served by the
// table's rank 0 on COHORT_IF_BASE_PORT, which the test environment sets) and the
// errors of every wrong request. Addresses are 127.0.0.1 only.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <thread>

#include "common/config.h"
#include "free_port.h"
#include "test_util.h"
#include "tools/linkcheck/job_join.h"

namespace cohort::linkcheck {
namespace {

std::string writeTable(const std::string& name, const std::string& rank0Ips) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << R"({"status": "completed", "version": "1.0", "server_count": "1",
    "server_list": [{"server_id": "node-0", )"
                      << rank0Ips << R"("device": [
      {"device_id": "0", "rank_id": "0"}, {"device_id": "1", "rank_id": "1"}]}]})";
  return path;
}

// One test, so that the base port is used by one process at a time.
TEST(JoinJob, RankTableStoreIsServedByRankZeroOnTheBasePort) {
  const std::string table = writeTable("join_good.json", R"("host_ip": "127.0.0.1", )");
  JobMembership early;
  const Status unreachable = joinJob({table, 1}, Deadline::afterMs(300), &early);
  EXPECT_FALSE(unreachable.ok());
  const std::string where = "rank 1 cannot reach the job store at 127.0.0.1:" +
                            std::to_string(Config::global().ifBasePort) + " (served by rank 0 of";
  EXPECT_NE(unreachable.message().find(where), std::string::npos) << unreachable.toString();
  {
    JobMembership zero, one;
    Status s0, s1;
    std::thread t0([&] { s0 = joinJob({table, 0}, Deadline::afterMs(5000), &zero); });
    std::thread t1([&] { s1 = joinJob({table, 1}, Deadline::afterMs(5000), &one); });
    t0.join();
    t1.join();
    ASSERT_OK(s0);
    ASSERT_OK(s1);
    EXPECT_NE(zero.server, nullptr);
    EXPECT_EQ(one.server, nullptr);
    EXPECT_EQ(zero.size, 2);
    EXPECT_EQ(one.rank, 1);
    EXPECT_EQ(zero.token, one.token);  // both hashed the same table
    ASSERT_EQ(one.table.size(), 2u);
    EXPECT_EQ(one.table[1].hostIp, "127.0.0.1");
    EXPECT_EQ(one.table[1].deviceIp, "");
    EXPECT_EQ(one.table[1].serverId, "node-0");
    EXPECT_EQ(one.source, "rank table " + table);
    ASSERT_OK(zero.store->set("k", {7}));
    transport::Bytes v;
    ASSERT_OK(one.store->get("k", &v, Deadline::afterMs(2000)));
    EXPECT_EQ(v, transport::Bytes{7});
  }
  // No host_ip: rank 0's device_ip.
  const std::string path = ::testing::TempDir() + "/join_device_ip.json";
  std::ofstream(path) << R"({"status": "completed", "version": "1.0", "server_count": "1",
    "server_list": [{"server_id": "n", "device": [
      {"device_id": "0", "device_ip": "127.0.0.1", "rank_id": "0"}]}]})";
  JobMembership m;
  ASSERT_OK(joinJob({path, 0}, Deadline::afterMs(3000), &m));
  ASSERT_EQ(m.table.size(), 1u);
  EXPECT_EQ(m.table[0].deviceIp, "127.0.0.1");
  EXPECT_EQ(m.table[0].serverId, "n");
  EXPECT_NE(m.server, nullptr);
}

TEST(JoinJob, RankZeroWithoutAnAddressIsRefused) {
  const std::string table = writeTable("join_no_address.json", "");
  JobMembership m;
  EXPECT_ERROR(joinJob({table, 1}, Deadline::afterMs(300), &m), kInvalidArgument,
               "rank 0 has neither host_ip nor device_ip");
}

TEST(JoinJob, WrongRequestsSayWhatIsMissing) {
  const std::string table = writeTable("join_requests.json", R"("host_ip": "127.0.0.1", )");
  JobMembership m;
  EXPECT_ERROR(joinJob({"", 3}, Deadline::afterMs(100), &m), kInvalidArgument,
               "--rank 3 needs --ranktable FILE");
  EXPECT_ERROR(joinJob({table, -1}, Deadline::afterMs(100), &m), kInvalidArgument,
               "needs --rank N");
  EXPECT_ERROR(joinJob({table, 5}, Deadline::afterMs(100), &m), kValidationError, "rank");
  EXPECT_ERROR(
      joinJob({::testing::TempDir() + "/no_such_table.json", 0}, Deadline::afterMs(100), &m),
      kInvalidArgument, "no_such_table.json");
}

TEST(JoinJob, WithoutALauncherOrTableItSaysHowToStart) {
  for (const char* v : {"RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID",
                        "COHORT_ROOT_INFO"}) {
    ::unsetenv(v);
  }
  JobMembership m;
  EXPECT_ERROR(joinJob({}, Deadline::afterMs(100), &m), kUnavailable,
               "run it under cohortrun or mpirun, or pass --ranktable FILE --rank N");
}

TEST(JoinJob, AMasterAddressJobJoinsItsStore) {
  ::setenv("RANK", "0", 1);
  ::setenv("WORLD_SIZE", "1", 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", std::to_string(test::freePort()).c_str(), 1);
  JobMembership m;
  const Status s = joinJob({}, Deadline::afterMs(3000), &m);
  for (const char* v : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}) ::unsetenv(v);
  ASSERT_OK(s);
  EXPECT_EQ(m.source, "torchrun/env");
  EXPECT_EQ(m.size, 1);
  EXPECT_NE(m.server, nullptr);
}

}  // namespace
}  // namespace cohort::linkcheck

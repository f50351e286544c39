// HcclCommInitClusterInfo: four ranks (threads) joining from a rank table whose
// rank 0 serves the store on 127.0.0.1, communicators made again from the same
// table, and every way a table or a rank can be wrong.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "hccl_test_util.h"

namespace {

using hccl_test::DeviceBuffer;
using hccl_test::freePort;
using hccl_test::rankTableJson;
using hccl_test::runRanks;
using hccl_test::writeTempFile;

// AllGather of each rank's id, then checked: proves ranks and devices line up.
void expectAllGatherOfRanks(HcclComm comm, int rank, int n) {
  aclrtStream s = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&s));
  DeviceBuffer in(4), out(4 * n);
  in.upload(std::vector<int32_t>{rank * 11});
  ASSERT_HCCL_OK(HcclAllGather(in.get(), out.get(), 1, HCCL_DATA_TYPE_INT32, comm, s));
  ASSERT_ACL_OK(aclrtSynchronizeStream(s));
  const auto got = out.download<int32_t>(n);
  for (int q = 0; q < n; ++q) EXPECT_EQ(got[q], q * 11) << "rank " << rank;
  EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

TEST(HcclCluster, FourRanksJoinTwiceFromOneTable) {
  const std::string table = writeTempFile("cluster4.json", rankTableJson(4, freePort()));
  for (int round = 0; round < 2; ++round) {  // the second round uses the next port
    runRanks(4, [&](int r) {
      HcclComm comm = nullptr;
      ASSERT_HCCL_OK(HcclCommInitClusterInfo(table.c_str(), r, &comm));
      uint32_t size = 0;
      ASSERT_HCCL_OK(HcclGetRankSize(comm, &size));
      EXPECT_EQ(size, 4u);
      char name[COMM_NAME_MAX_LENGTH] = {};
      ASSERT_HCCL_OK(HcclGetCommName(comm, name));
      EXPECT_STREQ(name, "hccl_world_group");
      expectAllGatherOfRanks(comm, r, 4);
      EXPECT_EQ(HcclCommDestroy(comm), HCCL_SUCCESS);
    });
  }
}

TEST(HcclCluster, ConfigVariantNamesTheCommunicator) {
  const std::string table = writeTempFile("cluster2.json", rankTableJson(2, freePort()));
  runRanks(2, [&](int r) {
    HcclCommConfig config;
    HcclCommConfigInit(&config);
    std::strcpy(config.hcclCommName, "dp_group");
    HcclComm comm = nullptr;
    ASSERT_HCCL_OK(HcclCommInitClusterInfoConfig(table.c_str(), r, &config, &comm));
    char name[COMM_NAME_MAX_LENGTH] = {};
    ASSERT_HCCL_OK(HcclGetCommName(comm, name));
    EXPECT_STREQ(name, "dp_group");
    expectAllGatherOfRanks(comm, r, 2);
    EXPECT_EQ(HcclCommDestroy(comm), HCCL_SUCCESS);
  });
}

TEST(HcclCluster, UnreadableAndInvalidTables) {
  ASSERT_ACL_OK(aclrtSetDevice(0));
  HcclComm comm = nullptr;
  EXPECT_HCCL(HcclCommInitClusterInfo("/nonexistent/rank_table.json", 0, &comm),
              HCCL_E_OPEN_FILE_FAILURE,
              "EI0004: Failed to parse the ranktable file /nonexistent/rank_table.json");
  EXPECT_HCCL(HcclCommInitClusterInfo(::testing::TempDir().c_str(), 0, &comm),
              HCCL_E_OPEN_FILE_FAILURE, "EI0004");
  EXPECT_HCCL(HcclCommInitClusterInfo("", 0, &comm), HCCL_E_PARA, "parameter clusterInfo");
  const std::string longPath(5000, 'a');
  EXPECT_HCCL(HcclCommInitClusterInfo(longPath.c_str(), 0, &comm), HCCL_E_PARA, "1 to 4095 bytes");
  const std::string broken = writeTempFile("broken.json", "{\"status\": \"completed\",");
  EXPECT_HCCL(HcclCommInitClusterInfo(broken.c_str(), 0, &comm), HCCL_E_PARA,
              "EI0004: Failed to parse the ranktable file " + broken);
  std::string dup = rankTableJson(2, 0);
  dup.replace(dup.rfind("\"rank_id\":\"1\""), 13, "\"rank_id\":\"0\"");
  const std::string dupPath = writeTempFile("dup.json", dup);
  EXPECT_HCCL(HcclCommInitClusterInfo(dupPath.c_str(), 0, &comm), HCCL_E_PARA,
              "EI0014: Value \"0\" for ranktable variable /server_list/0/device/1/rank_id");
  std::string noAddress = rankTableJson(1, 0);
  noAddress.replace(noAddress.find("\"host_ip\":\"127.0.0.1\","), 22, "");
  noAddress.replace(noAddress.find("\"device_ip\":\"192.168.100.1\","), 28, "");
  const std::string noAddressPath = writeTempFile("noaddr.json", noAddress);
  EXPECT_HCCL(HcclCommInitClusterInfo(noAddressPath.c_str(), 0, &comm), HCCL_E_PARA,
              "for ranktable variable host_ip of rank 0");
}

TEST(HcclCluster, RankAndDeviceMustMatchTheTable) {
  const std::string table = writeTempFile("cluster_rd.json", rankTableJson(4, freePort()));
  HcclComm comm = nullptr;
  std::thread([&] {
    EXPECT_HCCL(HcclCommInitClusterInfo(table.c_str(), 1, &comm), HCCL_E_RUNTIME,
                "call aclrtSetDevice first (rank 1 has device_id 1");
  }).join();
  ASSERT_ACL_OK(aclrtSetDevice(2));
  EXPECT_HCCL(HcclCommInitClusterInfo(table.c_str(), 4, &comm), HCCL_E_PARA,
              "EI0014: Value 4 for ranktable variable rank_id is invalid. Expected value: is less "
              "than the communication size 4");
  EXPECT_HCCL(HcclCommInitClusterInfo(table.c_str(), 0, &comm), HCCL_E_UNAVAIL,
              "ranktable config devId[0], but local devId[2]");
}

// Rank 0 cannot serve the store on a port somebody else holds.
TEST(HcclCluster, PortTakenByAnotherProgram) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof(a);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const int port = ntohs(a.sin_port);
  const std::string table = writeTempFile("taken.json", rankTableJson(1, port));
  ASSERT_ACL_OK(aclrtSetDevice(0));
  HcclComm comm = nullptr;
  EXPECT_HCCL(HcclCommInitClusterInfo(table.c_str(), 0, &comm), HCCL_E_UNAVAIL,
              "127.0.0.1:" + std::to_string(port));
  close(fd);
}

}  // namespace

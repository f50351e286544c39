// Making communicators: root info, rank table, configs, sub-communicators, and
// HcclCommDestroy while a call is in progress. Ranks are threads of this process.
#include <chrono>
#include <cstring>
#include <thread>

#include "hccl/comm_registry.h"
#include "hccl_test_util.h"
#include "transport/root_info.h"

namespace {

using hccl_test::DeviceBuffer;
using hccl_test::runRanks;

// Every rank allreduces 1 + rank over 16 ints; the sum is n(n+1)/2.
void expectAllReduceWorks(HcclComm comm, int rank, int n) {
  aclrtStream s = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&s));
  DeviceBuffer buf(16 * 4);
  buf.upload(std::vector<int32_t>(16, rank + 1));
  ASSERT_HCCL_OK(
      HcclAllReduce(buf.get(), buf.get(), 16, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, s));
  ASSERT_ACL_OK(aclrtSynchronizeStream(s));
  EXPECT_EQ(buf.download<int32_t>(16), std::vector<int32_t>(16, n * (n + 1) / 2)) << rank;
  EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

TEST(HcclRootInfo, ThreeRanksJoinAndAReusedRootInfoIsRefused) {
  HcclRootInfo root;
  std::memset(&root, 0, sizeof(root));
  ASSERT_HCCL_OK(HcclGetRootInfo(&root));
  EXPECT_EQ(sizeof(root.internal), 4108u);
  runRanks(3, [&](int r) {
    HcclComm comm = nullptr;
    ASSERT_HCCL_OK(HcclCommInitRootInfo(3, &root, r, &comm));
    uint32_t rank = 9, size = 0;
    ASSERT_HCCL_OK(HcclGetRankId(comm, &rank));
    ASSERT_HCCL_OK(HcclGetRankSize(comm, &size));
    EXPECT_EQ(rank, static_cast<uint32_t>(r));
    EXPECT_EQ(size, 3u);
    expectAllReduceWorks(comm, r, 3);
    HcclComm again = nullptr;
    EXPECT_HCCL(HcclCommInitRootInfo(3, &root, r, &again), HCCL_E_PARA,
                "already used for rank " + std::to_string(r));
    EXPECT_EQ(HcclCommDestroy(comm), HCCL_SUCCESS);
  });
}

TEST(HcclRootInfo, BadArgumentsAndForgedRootInfos) {
  HcclRootInfo root, zeros;
  std::memset(&zeros, 0, sizeof(zeros));
  ASSERT_HCCL_OK(HcclGetRootInfo(&root));
  HcclComm comm = nullptr;
  ASSERT_ACL_OK(aclrtSetDevice(0));
  EXPECT_HCCL(HcclCommInitRootInfo(0, &root, 0, &comm), HCCL_E_PARA, "parameter nRanks");
  EXPECT_HCCL(HcclCommInitRootInfo(2, &root, 2, &comm), HCCL_E_PARA,
              "Value 2 for parameter rank is invalid");
  EXPECT_HCCL(HcclCommInitRootInfo(1, &zeros, 0, &comm), HCCL_E_PARA,
              "The expected value is a root info made by HcclGetRootInfo");
  EXPECT_HCCL(HcclCommInitRootInfoConfig(1, &root, 0, nullptr, &comm), HCCL_E_PTR, "config");
  // Another job's token: the root's store refuses the connection.
  cohort::transport::RootInfo info;
  ASSERT_TRUE(cohort::transport::RootInfo::fromBytes(
                  reinterpret_cast<const std::uint8_t*>(root.internal), &info)
                  .ok());
  info.token.bytes[0] ^= 0xff;
  HcclRootInfo forged;
  info.toBytes(reinterpret_cast<std::uint8_t*>(forged.internal));
  EXPECT_HCCL(HcclCommInitRootInfo(1, &forged, 0, &comm), HCCL_E_TCP_CONNECT, "token");
  // A thread without a device.
  std::thread([&] {
    EXPECT_HCCL(HcclCommInitRootInfo(1, &root, 0, &comm), HCCL_E_RUNTIME, "call aclrtSetDevice");
  }).join();
}

TEST(HcclRootInfo, ConfigNamesTheCommunicatorAndChoosesItsAlgorithm) {
  HcclRootInfo root;
  ASSERT_HCCL_OK(HcclGetRootInfo(&root));
  runRanks(2, [&](int r) {
    HcclCommConfig config;
    HcclCommConfigInit(&config);
    std::strcpy(config.hcclCommName, "tp_group");
    std::strcpy(config.hcclAlgo, "level0:NA;level1:ring");
    std::strcpy(config.hcclRetryEnable, "L0:1,L1:1");  // accepted; these links are shm
    std::strcpy(config.hcclRetryParams, "MaxCnt:2,HoldTime:1000");
    config.hcclBufferSize = 64;
    config.hcclDeterministic = 1;
    HcclComm comm = nullptr;
    ASSERT_HCCL_OK(HcclCommInitRootInfoConfig(2, &root, r, &config, &comm));
    char name[COMM_NAME_MAX_LENGTH] = {};
    ASSERT_HCCL_OK(HcclGetCommName(comm, name));
    EXPECT_STREQ(name, "tp_group");
    expectAllReduceWorks(comm, r, 2);
    // hcclAlgo "level1:ring" reached the communicator.
    const std::string choice = cohort::hccl::CommRegistry::get().find(comm)->comm->lastChoice();
    EXPECT_NE(choice.find("ring"), std::string::npos) << choice;
    EXPECT_EQ(HcclCommDestroy(comm), HCCL_SUCCESS);
  });
}

TEST(HcclConfig, FieldsOutOfRangeAreRefusedBeforeJoining) {
  HcclRootInfo root;
  ASSERT_HCCL_OK(HcclGetRootInfo(&root));
  ASSERT_ACL_OK(aclrtSetDevice(0));
  HcclComm comm = nullptr;
  struct Case {
    void (*set)(HcclCommConfig*);
    const char* needle;
  };
  const Case cases[] = {
      {[](HcclCommConfig* c) { std::memset(c, 0, 24); }, "config (magic word)"},
      {[](HcclCommConfig* c) { *reinterpret_cast<size_t*>(c) = 100; }, "config (size)"},
      {[](HcclCommConfig* c) { c->hcclBufferSize = 0; },
       "Value 0 for parameter "
       "config.hcclBufferSize"},
      {[](HcclCommConfig* c) { c->hcclDeterministic = 3; }, "config.hcclDeterministic"},
      {[](HcclCommConfig* c) { std::memset(c->hcclCommName, 'x', 128); }, "config.hcclCommName"},
      {[](HcclCommConfig* c) { c->hcclOpExpansionMode = 9; }, "config.hcclOpExpansionMode"},
      {[](HcclCommConfig* c) { c->hcclRdmaTrafficClass = 5; }, "a multiple of 4"},
      {[](HcclCommConfig* c) { c->hcclRdmaServiceLevel = 8; }, "config.hcclRdmaServiceLevel"},
      {[](HcclCommConfig* c) { c->hcclExecTimeOut = -5; }, "config.hcclExecTimeOut"},
      {[](HcclCommConfig* c) { std::strcpy(c->hcclAlgo, "level1:bogus"); }, "config.hcclAlgo"},
      {[](HcclCommConfig* c) { c->hcclQos = 8; }, "config.hcclQos"},
      {[](HcclCommConfig* c) { std::strcpy(c->hcclRetryEnable, "L1:2"); },
       "config.hcclRetryEnable"},
      {[](HcclCommConfig* c) { std::memset(c->hcclRetryEnable, 'L', 50); },
       "config.hcclRetryEnable"},
      {[](HcclCommConfig* c) { std::strcpy(c->hcclRetryParams, "MaxCnt:11"); },
       "config.hcclRetryParams"},
      {[](HcclCommConfig* c) { std::strcpy(c->hcclRetryParams, "HoldTime:5000,Bogus:1"); },
       "HCCL_OP_RETRY_PARAMS's syntax"},
  };
  for (const Case& c : cases) {
    HcclCommConfig config;
    HcclCommConfigInit(&config);
    c.set(&config);
    EXPECT_HCCL(HcclCommInitRootInfoConfig(1, &root, 0, &config, &comm), HCCL_E_PARA, c.needle);
  }
  // None of them used the root info up.
  HcclCommConfig config;
  HcclCommConfigInit(&config);
  ASSERT_HCCL_OK(HcclCommInitRootInfoConfig(1, &root, 0, &config, &comm));
  EXPECT_EQ(HcclCommDestroy(comm), HCCL_SUCCESS);
}

// Ranks 1 and 3 of a 4-rank communicator form a sub-communicator; 0 and 2 join none.
TEST(HcclSubComm, ListedRanksFormItAndOthersGetNull) {
  HcclComm comms[4] = {};
  int32_t devices[4] = {0, 1, 2, 3};
  ASSERT_HCCL_OK(HcclCommInitAll(4, devices, comms));
  runRanks(4, [&](int r) {
    uint32_t ids[2] = {1, 3};
    HcclComm sub = reinterpret_cast<HcclComm>(1);
    const bool member = r == 1 || r == 3;
    ASSERT_HCCL_OK(HcclCreateSubCommConfig(&comms[r], member ? 2 : 0, member ? ids : nullptr,
                                           member ? 7 : 0xFFFFFFFF, r / 2, nullptr, &sub));
    if (!member) {
      EXPECT_EQ(sub, nullptr);
      return;
    }
    uint32_t rank = 9;
    ASSERT_HCCL_OK(HcclGetRankId(sub, &rank));
    EXPECT_EQ(rank, static_cast<uint32_t>(r / 2));
    char name[COMM_NAME_MAX_LENGTH] = {};
    ASSERT_HCCL_OK(HcclGetCommName(sub, name));
    EXPECT_STREQ(name, "hccl_world_all_sub_7");
    expectAllReduceWorks(sub, r / 2, 2);
    HcclComm again = nullptr;
    EXPECT_HCCL(HcclCreateSubCommConfig(&comms[r], 2, ids, 8, r / 2, nullptr, &again),
                HCCL_E_NOT_SUPPORT, "already made a sub-communicator of ranks [1,3]");
    EXPECT_EQ(HcclCommDestroy(sub), HCCL_SUCCESS);
  });
  uint32_t unsorted[2] = {3, 1}, ids[2] = {0, 2};
  HcclComm sub = nullptr;
  ASSERT_ACL_OK(aclrtSetDevice(0));
  EXPECT_HCCL(HcclCreateSubCommConfig(&comms[0], 2, unsorted, 1, 0, nullptr, &sub), HCCL_E_PARA,
              "Value 1 for parameter rankIds[1] is invalid. The expected value is greater than "
              "rankIds[0] = 3");
  EXPECT_HCCL(HcclCreateSubCommConfig(&comms[0], 2, ids, 1, 1, nullptr, &sub), HCCL_E_PARA,
              "parameter subCommRankId");
  EXPECT_HCCL(HcclCreateSubCommConfig(&comms[0], 0, ids, 1, 0, nullptr, &sub), HCCL_E_PARA,
              "parameter rankNum");
  EXPECT_HCCL(HcclCreateSubCommConfig(&comms[0], 5, ids, 1, 0, nullptr, &sub), HCCL_E_PARA,
              "rankNum");
  for (HcclComm c : comms) EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
}

// HcclCommDestroy while another thread waits inside a call on the communicator.
TEST(HcclDestroy, WhileInUseSaysTryAgain) {
  HcclComm comms[2] = {};
  int32_t devices[2] = {0, 1};
  ASSERT_HCCL_OK(HcclCommInitAll(2, devices, comms));
  uint32_t ids[2] = {0, 1};
  HcclComm subs[2] = {};
  std::thread rank0([&] {
    ASSERT_ACL_OK(aclrtSetDevice(0));
    ASSERT_HCCL_OK(HcclCreateSubCommConfig(&comms[0], 2, ids, 1, 0, nullptr, &subs[0]));
  });
  // Rank 0 is inside the call (holding its communicator) until rank 1 joins.
  auto& registry = cohort::hccl::CommRegistry::get();
  while (registry.find(comms[0]).use_count() < 3) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_HCCL(HcclCommDestroy(comms[0]), HCCL_E_AGAIN, "is in use, please try again later");
  std::thread rank1([&] {
    ASSERT_ACL_OK(aclrtSetDevice(1));
    ASSERT_HCCL_OK(HcclCreateSubCommConfig(&comms[1], 2, ids, 1, 1, nullptr, &subs[1]));
  });
  rank0.join();
  rank1.join();
  for (HcclComm c : {subs[0], subs[1], comms[0], comms[1]})
    EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
}

}  // namespace

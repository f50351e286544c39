// The HCCL calls beyond the collectives: HcclAlltoAllVC, the zero-copy memory
// calls over reserved and mapped device memory (aclrtReserveMemAddress ...), and
// the process-wide configuration and state calls. 4 ranks as threads.
#include <cstdint>
#include <cstring>
#include <vector>

#include "hccl_test_util.h"

namespace {

using hccl_test::DeviceBuffer;
using hccl_test::runRanks;

constexpr int kExtraRanks = 4;

class HcclExtraTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int32_t devices[kExtraRanks] = {0, 1, 2, 3};
    ASSERT_HCCL_OK(HcclCommInitAll(kExtraRanks, devices, comms_));
  }
  void TearDown() override {
    for (HcclComm c : comms_) {
      if (c != nullptr) {
        EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
      }
    }
  }
  HcclComm comms_[kExtraRanks] = {};
};

// Every rank holds the same matrix: rank i sends (i + 2 * j) % 5 + 1 elements to rank j,
// odd counts that differ by pair, packed in rank order on both sides.
TEST_F(HcclExtraTest, AlltoAllVCFollowsTheMatrix) {
  uint64_t matrix[kExtraRanks][kExtraRanks];
  for (int i = 0; i < kExtraRanks; ++i) {
    for (int j = 0; j < kExtraRanks; ++j) matrix[i][j] = static_cast<uint64_t>((i + 2 * j) % 5 + 1);
  }
  runRanks(kExtraRanks, [&](int r) {
    aclrtStream s = nullptr;
    ASSERT_ACL_OK(aclrtCreateStream(&s));
    std::vector<int32_t> in;
    for (int j = 0; j < kExtraRanks; ++j) {
      for (uint64_t k = 0; k < matrix[r][j]; ++k) in.push_back(1000 * r + 100 * j + int(k));
    }
    std::size_t received = 0;
    for (int j = 0; j < kExtraRanks; ++j) received += matrix[j][r];
    DeviceBuffer send(in.size() * 4), recv(received * 4);
    send.upload(in);
    ASSERT_HCCL_OK(HcclAlltoAllVC(send.get(), matrix, HCCL_DATA_TYPE_INT32, recv.get(),
                                  HCCL_DATA_TYPE_INT32, comms_[r], s));
    ASSERT_ACL_OK(aclrtSynchronizeStream(s));
    const auto got = recv.download<int32_t>(received);
    std::size_t at = 0;
    for (int j = 0; j < kExtraRanks; ++j) {
      for (uint64_t k = 0; k < matrix[j][r]; ++k, ++at) {
        ASSERT_EQ(got[at], 1000 * j + 100 * r + int(k)) << "rank " << r << " from " << j;
      }
    }
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  });
}

TEST_F(HcclExtraTest, AlltoAllVCRefusesBadArguments) {
  aclrtStream s = nullptr;
  ASSERT_ACL_OK(aclrtSetDevice(0));
  ASSERT_ACL_OK(aclrtCreateStream(&s));
  uint64_t matrix[kExtraRanks * kExtraRanks] = {};
  int buf = 0;
  EXPECT_HCCL(HcclAlltoAllVC(&buf, nullptr, HCCL_DATA_TYPE_INT32, &buf, HCCL_DATA_TYPE_INT32,
                             comms_[0], s), HCCL_E_PTR, "sendCountMatrix");
  EXPECT_HCCL(HcclAlltoAllVC(&buf, matrix, HCCL_DATA_TYPE_INT32, &buf, HCCL_DATA_TYPE_FP32,
                             comms_[0], s), HCCL_E_PARA, "recvType");
  EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

// hccl_test's zero copy (-z 1): reserve addresses, back them piece by piece with physical
// allocations, tell the communicator, and run a collective on buffers that span two
// mappings.
TEST_F(HcclExtraTest, AllReduceOnReservedAndMappedMemory) {
  runRanks(kExtraRanks, [&](int r) {
    aclrtPhysicalMemProp prop = {ACL_MEM_HANDLE_TYPE_NONE, ACL_MEM_ALLOCATION_TYPE_PINNED,
                                 ACL_HBM_MEM_HUGE,
                                 {static_cast<uint32_t>(r), ACL_MEM_LOCATION_TYPE_DEVICE}, 0};
    size_t gran = 0;
    ASSERT_ACL_OK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM,
                                                   &gran));
    ASSERT_EQ(gran, 2u << 20);
    void* va = nullptr;
    ASSERT_ACL_OK(aclrtReserveMemAddress(&va, 4 * gran, 0, nullptr, 1));
    ASSERT_EQ(reinterpret_cast<uintptr_t>(va) % gran, 0u);
    ASSERT_HCCL_OK(HcclCommSetMemoryRange(comms_[r], va, 4 * gran, 0, 0));
    aclrtDrvMemHandle h[2] = {};
    for (int k = 0; k < 2; ++k) {
      ASSERT_ACL_OK(aclrtMallocPhysical(&h[k], gran, &prop, 0));
      char* at = static_cast<char*>(va) + k * gran;
      ASSERT_ACL_OK(aclrtMapMem(at, gran, 0, h[k], 0));
      ASSERT_HCCL_OK(HcclCommActivateCommMemory(comms_[r], at, gran, 0, h[k], 0));
    }
    // 1 MiB of floats from the middle of the first mapping into the second.
    const std::size_t n = 1 << 18;
    auto* buf = static_cast<float*>(static_cast<void*>(static_cast<char*>(va) + gran / 2 + 4));
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>((i % 7) + r);
    ASSERT_ACL_OK(aclrtMemcpy(buf, n * 4, x.data(), n * 4, ACL_MEMCPY_HOST_TO_DEVICE));
    aclrtStream s = nullptr;
    ASSERT_ACL_OK(aclrtCreateStream(&s));
    ASSERT_HCCL_OK(HcclAllReduce(buf, buf, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comms_[r], s));
    ASSERT_ACL_OK(aclrtSynchronizeStream(s));
    std::vector<float> got(n);
    ASSERT_ACL_OK(aclrtMemcpy(got.data(), n * 4, buf, n * 4, ACL_MEMCPY_DEVICE_TO_HOST));
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(got[i], static_cast<float>(4 * (i % 7) + 6)) << "rank " << r << " at " << i;
    }
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    // Unmapping while active is the caller's business; the records are checked.
    EXPECT_HCCL(HcclCommUnsetMemoryRange(comms_[r], va), HCCL_E_PARA, "activated");
    for (int k = 0; k < 2; ++k) {
      char* at = static_cast<char*>(va) + k * gran;
      ASSERT_HCCL_OK(HcclCommDeactivateCommMemory(comms_[r], at));
      ASSERT_ACL_OK(aclrtFreePhysical(h[k]));  // mapped: freed at the unmap, as CANN does
      ASSERT_ACL_OK(aclrtUnmapMem(at));
      EXPECT_EQ(aclrtFreePhysical(h[k]), ACL_ERROR_RT_INVALID_HANDLE) << "freed already";
    }
    ASSERT_HCCL_OK(HcclCommUnsetMemoryRange(comms_[r], va));
    ASSERT_ACL_OK(aclrtReleaseMemAddress(va));
  });
}

TEST_F(HcclExtraTest, MemoryRangeRulesAreChecked) {
  ASSERT_ACL_OK(aclrtSetDevice(0));
  void* va = nullptr;
  const size_t gran = 2 << 20;
  ASSERT_ACL_OK(aclrtReserveMemAddress(&va, 2 * gran, 0, nullptr, 0));
  EXPECT_HCCL(HcclCommSetMemoryRange(comms_[0], va, gran, 8, 0), HCCL_E_PARA, "alignment");
  ASSERT_HCCL_OK(HcclCommSetMemoryRange(comms_[0], va, gran, 0, 0));
  EXPECT_HCCL(HcclCommSetMemoryRange(comms_[0], va, gran, 0, 0), HCCL_E_PARA, "overlaps");
  // Not mapped yet: not device memory to activate.
  int dummy = 0;
  EXPECT_HCCL(HcclCommActivateCommMemory(comms_[0], va, gran, 0, &dummy, 0), HCCL_E_PARA,
              "mapped");
  EXPECT_HCCL(HcclCommDeactivateCommMemory(comms_[0], va), HCCL_E_PARA, "activated");
  EXPECT_HCCL(HcclCommUnsetMemoryRange(comms_[0], static_cast<char*>(va) + 64), HCCL_E_PARA,
              "base");
  ASSERT_HCCL_OK(HcclCommUnsetMemoryRange(comms_[0], va));
  ASSERT_ACL_OK(aclrtReleaseMemAddress(va));
}

TEST_F(HcclExtraTest, SymmetricWindowsAreFoundByAddress) {
  ASSERT_ACL_OK(aclrtSetDevice(0));
  DeviceBuffer mem(1 << 16);
  HcclCommSymWindow win = nullptr, found = nullptr;
  ASSERT_HCCL_OK(HcclCommSymWinRegister(comms_[0], mem.get(), 1 << 16, &win, 0));
  size_t offset = 0;
  ASSERT_HCCL_OK(HcclCommSymWinGet(comms_[0], static_cast<char*>(mem.get()) + 100, 50, &found,
                                   &offset));
  EXPECT_EQ(found, win);
  EXPECT_EQ(offset, 100u);
  EXPECT_HCCL(HcclCommSymWinGet(comms_[0], static_cast<char*>(mem.get()) + 100, 1 << 16, &found,
                                &offset), HCCL_E_PARA, "inside a window");
  EXPECT_HCCL(HcclCommSymWinGet(comms_[1], mem.get(), 8, &found, &offset), HCCL_E_PARA,
              "inside a window");
  ASSERT_HCCL_OK(HcclCommSymWinDeregister(win));
  EXPECT_HCCL(HcclCommSymWinDeregister(win), HCCL_E_PARA, "window");
}

TEST_F(HcclExtraTest, DeterministicConfigIsReadBack) {
  HcclConfigValue v{};
  ASSERT_HCCL_OK(HcclGetConfig(HCCL_DETERMINISTIC, &v));
  EXPECT_EQ(v.value, 0);  // HCCL_DETERMINISTIC is not set in this test
  v.value = 2;
  ASSERT_HCCL_OK(HcclSetConfig(HCCL_DETERMINISTIC, v));
  HcclConfigValue back{};
  ASSERT_HCCL_OK(HcclGetConfig(HCCL_DETERMINISTIC, &back));
  EXPECT_EQ(back.value, 2);
  v.value = 3;
  EXPECT_HCCL(HcclSetConfig(HCCL_DETERMINISTIC, v), HCCL_E_PARA, "0, 1 or 2");
  EXPECT_HCCL(HcclGetConfig(HCCL_DETERMINISTIC, nullptr), HCCL_E_PTR, "configValue");
  v.value = 0;
  ASSERT_HCCL_OK(HcclSetConfig(HCCL_DETERMINISTIC, v));
  EXPECT_GT(HcclGetCommConfigCapability(), static_cast<uint32_t>(HCCL_COMM_CONFIG_BUFFER_NAME));
}

TEST_F(HcclExtraTest, ConfigInfoNamesTheHostExpansionMode) {
  HcclConfigTypeOpExpansionMode mode = HCCL_OP_EXPANSION_MODE_INVALID;
  ASSERT_HCCL_OK(HcclConfigGetInfo(comms_[0], HCCL_CONFIG_TYPE_OP_EXPANSION_MODE, sizeof(mode),
                                   &mode));
  EXPECT_EQ(mode, HCCL_OP_EXPANSION_MODE_HOST);
  EXPECT_HCCL(HcclConfigGetInfo(comms_[0], HCCL_CONFIG_TYPE_OP_EXPANSION_MODE, 2, &mode),
              HCCL_E_PARA, "infoLen");
  std::vector<char> algo(HCCL_COMM_ALGO_MAX_LENGTH, 'x');
  ASSERT_HCCL_OK(HcclConfigGetInfo(comms_[0], HCCL_CONFIG_TYPE_HCCL_ALGO,
                                   static_cast<uint32_t>(algo.size()), algo.data()));
  EXPECT_STREQ(algo.data(), "");
}

// Suspend makes operations fail with HCCL_E_SUSPENDING (and the status say so) until
// Resume, which runs the registered callbacks around it; destroy runs them too.
struct Calls {
  std::vector<std::pair<HcclComm, HcclCommStatePhase>> seen;
};
HcclResult recordPhase(HcclComm comm, HcclCommStatePhase phase, void* args) {
  static_cast<Calls*>(args)->seen.emplace_back(comm, phase);
  return HCCL_SUCCESS;
}

TEST_F(HcclExtraTest, SuspendResumeStatusAndStateCallbacks) {
  Calls calls;
  ASSERT_HCCL_OK(HcclCommRegCommStateCallback("extra_test", recordPhase, &calls));
  char name[COMM_NAME_MAX_LENGTH] = {};
  ASSERT_HCCL_OK(HcclGetCommName(comms_[0], name));
  HcclComm byName = nullptr;
  ASSERT_HCCL_OK(HcclCommGetHandleWithName(name, &byName));
  EXPECT_EQ(byName, comms_[0]);
  EXPECT_HCCL(HcclCommGetHandleWithName("no such communicator", &byName), HCCL_E_NOT_FOUND,
              "no live communicator");
  HcclCommStatus status = HCCL_COMM_STATUS_INVALID;
  ASSERT_HCCL_OK(HcclCommGetStatus(name, &status));
  EXPECT_EQ(status, HCCL_COMM_STATUS_READY);
  ASSERT_HCCL_OK(HcclCommSuspend(comms_[0]));
  ASSERT_HCCL_OK(HcclCommGetStatus(name, &status));
  EXPECT_EQ(status, HCCL_COMM_STATUS_SUSPENDING);
  ASSERT_ACL_OK(aclrtSetDevice(0));
  aclrtStream s = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&s));
  EXPECT_HCCL(HcclBarrier(comms_[0], s), HCCL_E_SUSPENDING, "suspended");
  ASSERT_HCCL_OK(HcclCommResume(comms_[0]));
  ASSERT_HCCL_OK(HcclCommGetStatus(name, &status));
  EXPECT_EQ(status, HCCL_COMM_STATUS_READY);
  ASSERT_EQ(calls.seen.size(), 2u);
  EXPECT_EQ(calls.seen[0].second, HCCL_COMM_STATE_PHASE_RESUME_PRE);
  EXPECT_EQ(calls.seen[1].second, HCCL_COMM_STATE_PHASE_RESUME_POST);
  EXPECT_EQ(calls.seen[0].first, comms_[0]);
  EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  for (HcclComm& c : comms_) {
    ASSERT_HCCL_OK(HcclCommDestroy(c));
    c = nullptr;
  }
  EXPECT_EQ(calls.seen.size(), 2u + 2 * kExtraRanks);
  EXPECT_EQ(calls.seen[2].second, HCCL_COMM_STATE_PHASE_DESTROY_PRE);
  EXPECT_EQ(calls.seen[3].second, HCCL_COMM_STATE_PHASE_DESTROY_POST);
  // Replaced by a registration that records nothing more into `calls`.
  static Calls ignored;
  ASSERT_HCCL_OK(HcclCommRegCommStateCallback("extra_test", recordPhase, &ignored));
  EXPECT_HCCL(HcclCommRegCommStateCallback("", recordPhase, nullptr), HCCL_E_PARA, "regName");
}

TEST_F(HcclExtraTest, GroupStatusFollowsGroupStartAndEnd) {
  bool inGroup = true;
  ASSERT_HCCL_OK(HcclGroupStatusGet(&inGroup));
  EXPECT_FALSE(inGroup);
  ASSERT_HCCL_OK(HcclGroupStart());
  ASSERT_HCCL_OK(HcclGroupStatusGet(&inGroup));
  EXPECT_TRUE(inGroup);
  ASSERT_HCCL_OK(HcclGroupEnd());
  ASSERT_HCCL_OK(HcclGroupStatusGet(&inGroup));
  EXPECT_FALSE(inGroup);
  bool backup = true;
  uint32_t rank = 1;
  EXPECT_HCCL(HcclCommWorkingDevNicSet(comms_[0], &rank, &backup, 1), HCCL_E_NOT_SUPPORT,
              "backup NIC");
}

}  // namespace

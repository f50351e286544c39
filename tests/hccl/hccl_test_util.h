// Helpers for the HCCL C API tests: ranks as threads (each with its device set),
// device buffers through the ACL API, rank tables in temporary files, and an
// assertion on an HcclResult plus the message the layer recorded.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "cohort/status.h"
#include "free_port.h"
#include "hccl/hccl.h"

// The call returns `result` and the layer recorded a message holding `needle`.
#define EXPECT_HCCL(expr, result, needle)                                                         \
  do {                                                                                            \
    const HcclResult r_ = (expr);                                                                 \
    EXPECT_EQ(r_, result) << #expr << ": " << ::cohort::lastError().toString();                   \
    EXPECT_NE(::cohort::lastError().message().find(needle), std::string::npos)                    \
        << #expr << ": message lacks '" << (needle) << "': " << ::cohort::lastError().toString(); \
  } while (0)

#define ASSERT_HCCL_OK(expr)                                                          \
  do {                                                                                \
    const HcclResult r_ = (expr);                                                     \
    ASSERT_EQ(r_, HCCL_SUCCESS) << #expr << ": " << ::cohort::lastError().toString(); \
  } while (0)

#define ASSERT_ACL_OK(expr)                                              \
  do {                                                                   \
    const aclError e_ = (expr);                                          \
    ASSERT_EQ(e_, ACL_SUCCESS) << #expr << ": " << aclGetRecentErrMsg(); \
  } while (0)

namespace hccl_test {

// aclInit for the whole test binary.
class AclEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS); }
  void TearDown() override { (void)aclFinalize(); }
};

// Runs fn(rank) on `n` threads, thread r on device devices[r] (default r).
inline void runRanks(int n, const std::function<void(int)>& fn, std::vector<int> devices = {}) {
  if (devices.empty()) {
    for (int r = 0; r < n; ++r) devices.push_back(r);
  }
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      ASSERT_EQ(aclrtSetDevice(devices[static_cast<std::size_t>(r)]), ACL_SUCCESS);
      fn(r);
    });
  }
  for (auto& t : threads) t.join();
}

// A test fixture of N ranks made by HcclCommInitAll on devices 0..N-1, destroyed after
// the test; onEveryRank runs a body on one thread per rank.
template <int N>
class RanksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int32_t devices[N];
    for (int r = 0; r < N; ++r) devices[r] = r;
    ASSERT_HCCL_OK(HcclCommInitAll(N, devices, comms_));
  }
  void TearDown() override {
    for (HcclComm c : comms_) EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
  }

  // Runs fn(rank, comm, stream) on every rank; the stream must then synchronize cleanly.
  void onEveryRank(const std::function<void(int, HcclComm, aclrtStream)>& fn) {
    runRanks(N, [&](int r) {
      aclrtStream stream = nullptr;
      ASSERT_ACL_OK(aclrtCreateStream(&stream));
      fn(r, comms_[r], stream);
      EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS) << "rank " << r;
      EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
    });
  }

  HcclComm comms_[N] = {};
};

// Device memory of the calling thread's device, filled from / read into host vectors.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    EXPECT_EQ(aclrtMalloc(&ptr_, bytes, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) (void)aclrtFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  template <typename T>
  void upload(const std::vector<T>& values) {
    EXPECT_EQ(aclrtMemcpy(ptr_, bytes_, values.data(), values.size() * sizeof(T),
                          ACL_MEMCPY_HOST_TO_DEVICE),
              ACL_SUCCESS);
  }
  template <typename T>
  std::vector<T> download(std::size_t count) const {
    std::vector<T> out(count);
    EXPECT_EQ(aclrtMemcpy(out.data(), count * sizeof(T), ptr_, count * sizeof(T),
                          ACL_MEMCPY_DEVICE_TO_HOST),
              ACL_SUCCESS);
    return out;
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_;
};

using cohort::test::freePort;

// A "1.0" rank table of one server at 127.0.0.1, rank r on device r; rank 0's
// host_port (where it serves the store) = port when port > 0.
inline std::string rankTableJson(int ranks, int port) {
  std::string devices;
  for (int r = 0; r < ranks; ++r) {
    devices += std::string(r ? "," : "") + "{\"device_id\":\"" + std::to_string(r) +
               "\",\"device_ip\":\"192.168.100." + std::to_string(r + 1) + "\"," +
               (r == 0 && port > 0 ? "\"host_port\":\"" + std::to_string(port) + "\"," : "") +
               "\"rank_id\":\"" + std::to_string(r) + "\"}";
  }
  return "{\"status\":\"completed\",\"version\":\"1.0\",\"server_count\":\"1\",\"server_list\":"
         "[{\"server_id\":\"node-0\",\"host_ip\":\"127.0.0.1\",\"device\":[" +
         devices + "]}]}";
}

// Writes text to a fresh file in the test's temporary folder; returns its path.
inline std::string writeTempFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "hccl_" + std::to_string(getpid()) + "_" + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace hccl_test

// What the profiling tests (acl_prof_test.cc, acl_prof_errors_test.cc) share: the
// ProfTest fixture (a fresh folder per test, the session's trace read back) and
// small helpers.
#pragma once

#include "acl/acl_prof.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "acl_test_util.h"
#include "common/trace.h"
#include "hccl/hccl.h"

namespace proftest {

using nlohmann::json;
namespace fs = std::filesystem;

inline constexpr uint64_t kAllData = ACL_PROF_ACL_API | ACL_PROF_TASK_TIME |
                                     ACL_PROF_AICORE_METRICS | ACL_PROF_AICPU |
                                     ACL_PROF_HCCL_TRACE | ACL_PROF_MSPROFTX | ACL_PROF_RUNTIME_API;

inline int myTid() { return static_cast<int>(::syscall(SYS_gettid)); }

// The newest recent message contains `needle` (for the calls that return no number).
inline void expectMessage(const char* needle) {
  const char* m = aclGetRecentErrMsg();
  ASSERT_NE(m, nullptr) << "no message for '" << needle << "'";
  const std::string s(m);
  EXPECT_NE(s.substr(0, s.find('\n')).find(needle), std::string::npos) << s;
}

class ProfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/cohort-prof-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root_ = pattern;
    dir_ = root_ + "/out";  // aclprofInit makes it
    aclGetRecentErrMsg();
  }
  void TearDown() override {
    aclprofFinalize();  // whatever a failed test left
    aclGetRecentErrMsg();
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }

  aclError init(const std::string& dir) { return aclprofInit(dir.c_str(), dir.size()); }

  std::string fileIn(const std::string& dir) const {
    return dir + "/cohort-trace-" + std::to_string(::getpid()) + ".json";
  }

  // The session's file, parsed (a test failure if it is not JSON).
  json readTrace(const std::string& dir) const {
    std::ifstream in(fileIn(dir));
    EXPECT_TRUE(in.good()) << fileIn(dir) << " was not written";
    json j = json::parse(in, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << fileIn(dir) << " is not JSON";
    return j.is_discarded() ? json::object() : j;
  }

  static std::vector<json> events(const json& trace, const std::string& ph,
                                  const std::string& name = "") {
    std::vector<json> out;
    for (const auto& e : trace.value("traceEvents", json::array())) {
      if (e.value("ph", "") == ph && (name.empty() || e.value("name", "") == name))
        out.push_back(e);
    }
    return out;
  }

  static std::string threadName(const json& trace, int tid) {
    for (const auto& e : events(trace, "M", "thread_name")) {
      if (e["tid"] == tid) return e["args"]["name"];
    }
    return "";
  }

  static void* stamp(const char* message) {
    void* s = aclprofCreateStamp();
    EXPECT_NE(s, nullptr);
    EXPECT_EQ(aclprofSetStampTraceMessage(s, message, static_cast<uint32_t>(strlen(message))),
              ACL_SUCCESS);
    return s;
  }

  std::string root_, dir_;
};

// Work on a stream: a copy in, a copy out.
inline void streamWork(aclrtStream stream) {
  void* dev = nullptr;
  char in[64] = "profiled", out[64] = {};
  ASSERT_ACL_OK(aclrtMalloc(&dev, sizeof in, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMemcpyAsync(dev, sizeof in, in, sizeof in, ACL_MEMCPY_HOST_TO_DEVICE, stream));
  ASSERT_ACL_OK(
      aclrtMemcpyAsync(out, sizeof out, dev, sizeof in, ACL_MEMCPY_DEVICE_TO_HOST, stream));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  EXPECT_STREQ(out, "profiled");
  ASSERT_ACL_OK(aclrtFree(dev));
}

}  // namespace proftest

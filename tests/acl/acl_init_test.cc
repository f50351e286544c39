// aclInit / aclFinalize, the configuration file, and the error-report functions.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "acl_test_util.h"

namespace cohort::acltest {
namespace {

// A scratch configuration file, removed at the end of the test.
class ConfigFile {
 public:
  explicit ConfigFile(const std::string& text)
      : path_("/tmp/acl_init_test_" + std::to_string(getpid()) + ".json") {
    std::ofstream(path_) << text;
  }
  ~ConfigFile() { std::remove(path_.c_str()); }
  const char* path() const { return path_.c_str(); }

 private:
  std::string path_;
};

TEST(AclInitTest, InitFinalizeAndReinit) {
  ASSERT_ACL_OK(aclInit(nullptr));
  ASSERT_ACL_OK(aclrtSetDevice(0));
  ASSERT_ACL_OK(aclFinalize());
  ASSERT_ACL_OK(aclInit(""));  // an empty path is no file, like NULL
  ASSERT_ACL_OK(aclFinalize());
}

TEST(AclInitTest, RepeatedInitIsReported) {
  ASSERT_ACL_OK(aclInit(nullptr));
  EXPECT_ACL_ERROR(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE, "already initialised");
  ASSERT_ACL_OK(aclFinalize());
}

TEST(AclInitTest, RepeatedFinalizeIsReported) {
  ASSERT_ACL_OK(aclInit(nullptr));
  ASSERT_ACL_OK(aclFinalize());
  EXPECT_ACL_ERROR(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE, "already finalised");
}

TEST(AclInitTest, CallsBeforeInitAreRefused) {
  int32_t device = -1;
  EXPECT_ACL_ERROR(aclrtSetDevice(0), ACL_ERROR_UNINITIALIZE,
                   "aclrtSetDevice called before aclInit");
  EXPECT_ACL_ERROR(aclrtGetDevice(&device), ACL_ERROR_UNINITIALIZE, "aclrtGetDevice");
  void* p = nullptr;
  EXPECT_ACL_ERROR(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_UNINITIALIZE,
                   "aclrtMalloc");
  EXPECT_EQ(p, nullptr);
}

TEST(AclInitTest, FinalizeBeforeAnyInitIsUninitialised) {
  // Each test runs in its own process under ctest; run alone, this is the first call.
  if (::testing::UnitTest::GetInstance()->test_to_run_count() > 1) GTEST_SKIP();
  EXPECT_ACL_ERROR(aclFinalize(), ACL_ERROR_UNINITIALIZE, "aclInit was never called");
}

TEST(AclInitTest, FinalizeReleasesDevicesContextsAndEvents) {
  ASSERT_ACL_OK(aclInit(nullptr));
  ASSERT_ACL_OK(aclrtSetDevice(1));
  ASSERT_ACL_OK(aclrtSetDevice(1));
  aclrtContext context = nullptr;
  ASSERT_ACL_OK(aclrtCreateContext(&context, 2));
  aclrtEvent event = nullptr;
  ASSERT_ACL_OK(aclrtCreateEvent(&event));
  void* p = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_EQ(referenceCount(1), 2);
  EXPECT_EQ(referenceCount(2), 1);
  ASSERT_ACL_OK(aclFinalize());
  EXPECT_EQ(referenceCount(1), 0);
  EXPECT_EQ(referenceCount(2), 0);
  EXPECT_ERROR(runtime::eventQuery(static_cast<runtime::Event*>(event)), kInvalidHandle,
               "not a live event");
}

TEST(AclInitTest, MissingConfigFileIsInvalidFile) {
  EXPECT_ACL_ERROR(aclInit("/nonexistent/acl.json"), ACL_ERROR_INVALID_FILE,
                   "cannot read the configuration file '/nonexistent/acl.json'");
  int32_t device = -1;
  EXPECT_ACL_ERROR(aclrtGetDevice(&device), ACL_ERROR_UNINITIALIZE, "before aclInit");
}

TEST(AclInitTest, ConfigFileThatIsNotJsonIsAParseError) {
  ConfigFile file("{\"err_msg_mode\": ");
  EXPECT_ACL_ERROR(aclInit(file.path()), ACL_ERROR_PARSE_FILE, "is not valid JSON");
}

TEST(AclInitTest, ConfigFileMustHoldAnObject) {
  ConfigFile file("[1, 2]");
  EXPECT_ACL_ERROR(aclInit(file.path()), ACL_ERROR_PARSE_FILE, "must hold one JSON object");
}

TEST(AclInitTest, ConfigFileNestedTooDeeplyIsAParseError) {
  ConfigFile file("{\"a\":[[[[[[[[[[1]]]]]]]]]]}");  // 11 levels
  EXPECT_ACL_ERROR(aclInit(file.path()), ACL_ERROR_PARSE_FILE, "at most 10 levels");
}

TEST(AclInitTest, EmptyAndUnknownConfigurationsAreAccepted) {
  for (const char* text : {"", "{}", "{\"dump\": {\"dump_scene\": \"lite_exception\"}}"}) {
    ConfigFile file(text);
    ASSERT_ACL_OK(aclInit(file.path()));
    ASSERT_ACL_OK(aclFinalize());
  }
}

TEST(AclInitTest, BadErrMsgModeIsAnInvalidAttribute) {
  ConfigFile file("{\"err_msg_mode\": \"2\"}");
  EXPECT_ACL_ERROR(aclInit(file.path()), ACL_ERROR_FILE_ATTR_INVALID,
                   "err_msg_mode is \"2\"; expected \"0\" (per thread) or \"1\" (per process)");
}

TEST(AclInitTest, BadDefaultDeviceIsAnInvalidAttribute) {
  ConfigFile file("{\"defaultDevice\": {\"default_device\": \"9\"}}");
  EXPECT_ACL_ERROR(aclInit(file.path()), ACL_ERROR_FILE_ATTR_INVALID, "a visible device in [0, 3]");
}

TEST(AclInitTest, DefaultDeviceServesThreadsThatSetNone) {
  ConfigFile file("{\"defaultDevice\": {\"default_device\": \"2\"}}");
  ASSERT_ACL_OK(aclInit(file.path()));
  int32_t device = -1;
  ASSERT_ACL_OK(aclrtGetDevice(&device));
  EXPECT_EQ(device, 2);
  std::thread([] {
    void* p = nullptr;
    ASSERT_ACL_OK(aclrtMalloc(&p, 256, ACL_MEM_MALLOC_NORMAL_ONLY));
    runtime::PointerAttributes attributes;
    ASSERT_OK(runtime::pointerGetAttributes(p, &attributes));
    EXPECT_EQ(attributes.device, 2);
  }).join();
  EXPECT_EQ(referenceCount(2), 2);
  ASSERT_ACL_OK(aclFinalize());
  EXPECT_EQ(referenceCount(2), 0);
}

TEST(AclInitTest, ProcessWideMessagesAreSharedByThreads) {
  ConfigFile file("{\"err_msg_mode\": \"1\"}");
  ASSERT_ACL_OK(aclInit(file.path()));
  std::thread([] { EXPECT_EQ(aclrtSetDevice(99), ACL_ERROR_RT_INVALID_DEVICEID); }).join();
  const char* message = aclGetRecentErrMsg();
  ASSERT_NE(message, nullptr);
  EXPECT_NE(std::string(message).find("aclrtSetDevice: 107001"), std::string::npos) << message;
  EXPECT_EQ(aclGetRecentErrMsg(), nullptr);  // read and cleared
  ASSERT_ACL_OK(aclFinalize());
}

using AclErrorReportTest = AclTest;

TEST_F(AclErrorReportTest, MessagesStackNewestFirstAndAreClearedOnRead) {
  EXPECT_EQ(aclGetRecentErrMsg(), nullptr);
  EXPECT_EQ(aclrtSetDevice(7), ACL_ERROR_RT_INVALID_DEVICEID);
  EXPECT_EQ(aclrtMalloc(nullptr, 1, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  const char* message = aclGetRecentErrMsg();
  ASSERT_NE(message, nullptr);
  const std::string text(message);
  const auto first = text.find("aclrtMalloc: 100000 (ACL_ERROR_INVALID_PARAM)");
  const auto second = text.find("aclrtSetDevice: 107001 (ACL_ERROR_RT_INVALID_DEVICEID)");
  ASSERT_NE(first, std::string::npos) << text;
  ASSERT_NE(second, std::string::npos) << text;
  EXPECT_LT(first, second) << text;
  EXPECT_NE(text.find("device 7 does not exist: 4 device(s) visible"), std::string::npos) << text;
  EXPECT_EQ(aclGetRecentErrMsg(), nullptr);
}

TEST_F(AclErrorReportTest, MessagesArePerThread) {
  std::thread([] { EXPECT_EQ(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID); }).join();
  EXPECT_EQ(aclGetRecentErrMsg(), nullptr);
}

TEST_F(AclErrorReportTest, LastErrorIsPeekedThenTaken) {
  EXPECT_EQ(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
  EXPECT_EQ(aclrtSetDevice(12), ACL_ERROR_RT_INVALID_DEVICEID);
  ASSERT_ACL_OK(aclrtSetDevice(0));  // a success does not clear it
  EXPECT_EQ(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_RT_INVALID_DEVICEID);
  EXPECT_EQ(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_RT_INVALID_DEVICEID);
  EXPECT_EQ(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_ERROR_RT_INVALID_DEVICEID);
  EXPECT_EQ(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
  EXPECT_EQ(cohort::lastError().code(), ErrorCode::kInvalidDevice);  // Cohort's own record
}

TEST_F(AclErrorReportTest, UnknownErrorLevelIsInvalid) {
  EXPECT_EQ(aclrtGetLastError(static_cast<aclrtLastErrLevel>(3)), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtPeekAtLastError(static_cast<aclrtLastErrLevel>(3)), ACL_ERROR_INVALID_PARAM);
}

}  // namespace
}  // namespace cohort::acltest

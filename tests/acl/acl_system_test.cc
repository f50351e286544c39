// Initialisation callbacks, the aclInit count of aclFinalizeReference, and versions.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "acl_test_util.h"

// aclrtSetExceptionInfoCallback and aclsysGetCANNVersion are deprecated, and tested.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace cohort::acltest {
namespace {

std::vector<std::string> gEvents;

aclError onInit(const char* config, size_t len, void* userData) {
  gEvents.push_back(std::string(static_cast<const char*>(userData)) +
                    " init:" + std::string(config, len));
  return ACL_SUCCESS;
}

aclError failingInit(const char*, size_t, void*) { return ACL_ERROR_INVALID_FILE; }

aclError onFinalize(void* userData) {
  // Resources are still there when finalize callbacks run.
  uint32_t count = 0;
  gEvents.push_back(
      std::string(static_cast<const char*>(userData)) + " finalize:" +
      std::to_string(aclrtSetDevice(0) == ACL_SUCCESS && aclrtGetDeviceCount(&count) == 0));
  return ACL_SUCCESS;
}

class AclSystemTest : public ::testing::Test {
 protected:
  void SetUp() override { gEvents.clear(); }
  void TearDown() override {
    aclInitCallbackUnRegister(ACL_REG_TYPE_OTHER, onInit);
    aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, onInit);
    aclInitCallbackUnRegister(ACL_REG_TYPE_OTHER, failingInit);
    aclFinalizeCallbackUnRegister(ACL_REG_TYPE_OTHER, onFinalize);
    if (aclFinalize() != ACL_SUCCESS) aclGetRecentErrMsg();
  }
};

TEST_F(AclSystemTest, InitCallbacksRunAtInitOrAtOnce) {
  static char a[] = "a", b[] = "b", c[] = "c";
  ASSERT_ACL_OK(aclInitCallbackRegister(ACL_REG_TYPE_OTHER, onInit, a));  // before aclInit
  ASSERT_ACL_OK(aclInitCallbackRegister(ACL_REG_TYPE_OTHER, onInit, b));  // replaces a
  const std::string path = ::testing::TempDir() + "acl_system_test.json";
  const std::string text = "{\"err_msg_mode\": \"0\"}";
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(text.c_str(), f);
  std::fclose(f);
  ASSERT_ACL_OK(aclInit(path.c_str()));
  ASSERT_EQ(gEvents.size(), 1u);
  EXPECT_EQ(gEvents[0], "b init:" + text);
  // Registered while initialised: it runs now, with the same configuration.
  ASSERT_ACL_OK(aclInitCallbackRegister(ACL_REG_TYPE_ACL_MODEL, onInit, c));
  ASSERT_EQ(gEvents.size(), 2u);
  EXPECT_EQ(gEvents[1], "c init:" + text);
  ASSERT_ACL_OK(aclFinalize());
  // Unregistered ones do not run at the next aclInit; a NULL configuration gives "".
  ASSERT_ACL_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_OTHER, onInit));
  ASSERT_ACL_OK(aclInit(nullptr));
  ASSERT_EQ(gEvents.size(), 3u);
  EXPECT_EQ(gEvents[2], "c init:");
  std::remove(path.c_str());
}

TEST_F(AclSystemTest, AFailingInitCallbackIsAclInitsResult) {
  ASSERT_ACL_OK(aclInitCallbackRegister(ACL_REG_TYPE_OTHER, failingInit, nullptr));
  EXPECT_ACL_ERROR(aclInit(nullptr), ACL_ERROR_INVALID_FILE, "an init callback (type 65535)");
  uint32_t count = 0;
  EXPECT_EQ(aclrtGetDeviceCount(&count), ACL_SUCCESS);  // still initialised
  ASSERT_ACL_OK(aclrtSetDevice(0));
}

TEST_F(AclSystemTest, FinalizeCallbacksRunBeforeRelease) {
  static char f[] = "f";
  ASSERT_ACL_OK(aclFinalizeCallbackRegister(ACL_REG_TYPE_OTHER, onFinalize, f));
  ASSERT_ACL_OK(aclInit(nullptr));
  EXPECT_TRUE(gEvents.empty());
  ASSERT_ACL_OK(aclFinalize());
  ASSERT_EQ(gEvents.size(), 1u);
  EXPECT_EQ(gEvents[0], "f finalize:1");
  ASSERT_ACL_OK(aclFinalizeCallbackUnRegister(ACL_REG_TYPE_OTHER, onFinalize));
  ASSERT_ACL_OK(aclInit(nullptr));
  ASSERT_ACL_OK(aclFinalize());
  EXPECT_EQ(gEvents.size(), 1u);
}

TEST_F(AclSystemTest, CallbackRegistrationErrors) {
  EXPECT_ACL_ERROR(aclInitCallbackRegister(ACL_REG_TYPE_OTHER, nullptr, nullptr),
                   ACL_ERROR_INVALID_PARAM, "cbFunc is null");
  EXPECT_ACL_ERROR(
      aclInitCallbackRegister(static_cast<aclRegisterCallbackType>(8), onInit, nullptr),
      ACL_ERROR_INVALID_PARAM, "type 8 is not an aclRegisterCallbackType");
  EXPECT_ACL_ERROR(aclFinalizeCallbackRegister(ACL_REG_TYPE_OTHER, nullptr, nullptr),
                   ACL_ERROR_INVALID_PARAM, "cbFunc is null");
  EXPECT_ACL_ERROR(
      aclFinalizeCallbackUnRegister(static_cast<aclRegisterCallbackType>(-1), onFinalize),
      ACL_ERROR_INVALID_PARAM, "not an aclRegisterCallbackType");
  ASSERT_ACL_OK(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_DVPP, onInit));  // none: nothing to do
}

TEST_F(AclSystemTest, FinalizeReferenceCountsInits) {
  ASSERT_ACL_OK(aclInit(nullptr));
  EXPECT_EQ(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE);  // counted all the same
  EXPECT_EQ(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE);
  aclGetRecentErrMsg();
  uint64_t left = 99;
  ASSERT_ACL_OK(aclFinalizeReference(&left));
  EXPECT_EQ(left, 2u);
  ASSERT_ACL_OK(aclrtSetDevice(0));  // still initialised
  ASSERT_ACL_OK(aclFinalizeReference(nullptr));
  ASSERT_ACL_OK(aclFinalizeReference(&left));
  EXPECT_EQ(left, 0u);
  uint32_t count = 0;
  EXPECT_EQ(aclrtCreateContext(nullptr, 0), ACL_ERROR_UNINITIALIZE);  // finalised
  EXPECT_EQ(aclrtGetDeviceCount(&count), ACL_SUCCESS);
  EXPECT_ACL_ERROR(aclFinalizeReference(&left), ACL_ERROR_REPEAT_FINALIZE, "already finalised");
  // aclFinalize clears the count whatever it was.
  ASSERT_ACL_OK(aclInit(nullptr));
  EXPECT_EQ(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE);
  ASSERT_ACL_OK(aclFinalize());
  EXPECT_EQ(aclFinalizeReference(&left), ACL_ERROR_REPEAT_FINALIZE);
  aclGetRecentErrMsg();
}

TEST(AclVersionTest, VersionsWorkBeforeAclInit) {
  int32_t major = 0, minor = 0, patch = -1;
  ASSERT_ACL_OK(aclrtGetVersion(&major, &minor, &patch));
  EXPECT_EQ(major, ACL_MAJOR_VERSION);
  EXPECT_EQ(major, 1);
  EXPECT_EQ(minor, 17);
  EXPECT_EQ(patch, 0);
  EXPECT_ACL_ERROR(aclrtGetVersion(&major, nullptr, &patch), ACL_ERROR_INVALID_PARAM,
                   "a version pointer is null");

  char runtime[] = "runtime", cann[] = "cann", hccl[] = "hccl", cohort[] = "cohort";
  char version[ACL_PKG_VERSION_MAX_SIZE] = {};
  ASSERT_ACL_OK(aclsysGetVersionStr(runtime, version));
  EXPECT_STREQ(version, "9.1.0");
  ASSERT_ACL_OK(aclsysGetVersionStr(hccl, version));
  EXPECT_STREQ(version, "9.1.0");
  int32_t number = 0;
  ASSERT_ACL_OK(aclsysGetVersionNum(cann, &number));
  EXPECT_EQ(number, 90100000);
  ASSERT_ACL_OK(aclsysGetVersionStr(cohort, version));
  EXPECT_STREQ(version, COHORT_VERSION_STRING);
  ASSERT_ACL_OK(aclsysGetVersionNum(cohort, &number));
  EXPECT_EQ(number, COHORT_VERSION_MAJOR * 10000000 + COHORT_VERSION_MINOR * 100000 +
                        COHORT_VERSION_PATCH * 1000);

  char compiler[] = "compiler";
  EXPECT_ACL_ERROR(aclsysGetVersionStr(compiler, version), ACL_ERROR_INVALID_FILE,
                   "package 'compiler' is not installed");
  EXPECT_ACL_ERROR(aclsysGetVersionNum(compiler, &number), ACL_ERROR_INVALID_FILE, "not installed");
  EXPECT_ACL_ERROR(aclsysGetVersionStr(nullptr, version), ACL_ERROR_INVALID_PARAM,
                   "pkgName is null");
  EXPECT_ACL_ERROR(aclsysGetVersionNum(runtime, nullptr), ACL_ERROR_INVALID_PARAM,
                   "versionNum is null");
}

TEST(AclVersionTest, CannPackageVersionInParts) {
  aclCANNPackageVersion v;
  std::memset(&v, 'x', sizeof v);
  ASSERT_ACL_OK(aclsysGetCANNVersion(ACL_PKG_NAME_RUNTIME, &v));
  EXPECT_STREQ(v.version, "9.1.0");
  EXPECT_STREQ(v.majorVersion, "9");
  EXPECT_STREQ(v.minorVersion, "1");
  EXPECT_STREQ(v.releaseVersion, "0");
  EXPECT_STREQ(v.patchVersion, "0");
  ASSERT_ACL_OK(aclsysGetCANNVersion(ACL_PKG_NAME_HCCL, &v));
  EXPECT_ACL_ERROR(aclsysGetCANNVersion(ACL_PKG_NAME_DRIVER, &v), ACL_ERROR_INVALID_FILE,
                   "is not installed");
  EXPECT_ACL_ERROR(aclsysGetCANNVersion(static_cast<aclCANNPackageName>(8), &v),
                   ACL_ERROR_INVALID_PARAM, "not an aclCANNPackageName");
  EXPECT_ACL_ERROR(aclsysGetCANNVersion(ACL_PKG_NAME_CANN, nullptr), ACL_ERROR_INVALID_PARAM,
                   "version is null");
}

}  // namespace
}  // namespace cohort::acltest

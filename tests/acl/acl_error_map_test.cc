// The ErrorCode -> aclError table, row by row, and the names used in messages.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>

#include "acl/acl.h"
#include "acl/error_map.h"

namespace cohort::acl {
namespace {

struct Row {
  ErrorCode code;
  aclError general;
};

TEST(AclErrorMapTest, EveryCodeHasItsNumber) {
  const Row rows[] = {
      {ErrorCode::kSuccess, ACL_SUCCESS},
      {ErrorCode::kInvalidArgument, ACL_ERROR_INVALID_PARAM},
      {ErrorCode::kNotInitialized, ACL_ERROR_UNINITIALIZE},
      {ErrorCode::kInvalidDevice, ACL_ERROR_RT_INVALID_DEVICEID},
      {ErrorCode::kOutOfMemory, ACL_ERROR_RT_MEMORY_ALLOCATION},
      {ErrorCode::kInvalidPointer, ACL_ERROR_RT_PARAM_INVALID},
      {ErrorCode::kDoubleFree, ACL_ERROR_RT_MEMORY_FREE},
      {ErrorCode::kInvalidMemcpyKind, ACL_ERROR_RT_PARAM_INVALID},
      {ErrorCode::kSizeOverflow, ACL_ERROR_INVALID_PARAM},
      {ErrorCode::kTimeout, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT},
      {ErrorCode::kTaskFailed, ACL_ERROR_RT_AICPU_EXCEPTION},
      {ErrorCode::kInvalidHandle, ACL_ERROR_RT_INVALID_HANDLE},
      {ErrorCode::kNotReady, ACL_ERROR_RT_EVENT_NOT_COMPLETE},
      {ErrorCode::kVersionMismatch, ACL_ERROR_FAILURE},
      {ErrorCode::kSystemError, ACL_ERROR_DRV_FAILURE},
      {ErrorCode::kInternal, ACL_ERROR_INTERNAL_ERROR},
      {ErrorCode::kAborted, ACL_ERROR_RT_DEVICE_TASK_ABORT},
      {ErrorCode::kRemoteError, ACL_ERROR_RT_SUSPECT_REMOTE_ERROR},
      {ErrorCode::kInvalidUsage, ACL_ERROR_INVALID_PARAM},
      {ErrorCode::kConfigError, ACL_ERROR_INVALID_PARAM},
      {ErrorCode::kParseError, ACL_ERROR_PARSE_FILE},
      {ErrorCode::kValidationError, ACL_ERROR_FILE_ATTR_INVALID},
      {ErrorCode::kUnavailable, ACL_ERROR_RT_RESOURCE_ALLOC_FAIL},
      {ErrorCode::kConnectionError, ACL_ERROR_RT_LINK_ERROR},
      {ErrorCode::kMismatch, ACL_ERROR_FAILURE},
      {ErrorCode::kNotSupported, ACL_ERROR_RT_FEATURE_NOT_SUPPORT},
  };
  ASSERT_EQ(std::size(rows), 26u);  // every ErrorCode: extend this table with the enum
  for (const Row& row : rows) {
    EXPECT_EQ(toAclError(row.code, Site::kGeneral), row.general) << errorString(row.code);
    for (Site site :
         {Site::kGeneral, Site::kStreamSync, Site::kEventSync, Site::kEventTime, Site::kFree}) {
      EXPECT_STRNE(aclErrorName(toAclError(row.code, site)), "unknown error")
          << errorString(row.code);
    }
  }
}

TEST(AclErrorMapTest, SiteDependentNumbers) {
  EXPECT_EQ(toAclError(ErrorCode::kTimeout, Site::kStreamSync), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  EXPECT_EQ(toAclError(ErrorCode::kTimeout, Site::kEventSync), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT);
  EXPECT_EQ(toAclError(ErrorCode::kInvalidUsage, Site::kEventTime),
            ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID);
  EXPECT_EQ(toAclError(ErrorCode::kInvalidPointer, Site::kFree), ACL_ERROR_RT_MEMORY_FREE);
  EXPECT_EQ(toAclError(ErrorCode::kDoubleFree, Site::kFree), ACL_ERROR_RT_MEMORY_FREE);
}

TEST(AclErrorMapTest, NamesOfTheLayersOwnNumbers) {
  EXPECT_STREQ(aclErrorName(ACL_ERROR_REPEAT_INITIALIZE), "ACL_ERROR_REPEAT_INITIALIZE");
  EXPECT_STREQ(aclErrorName(ACL_ERROR_INVALID_FILE), "ACL_ERROR_INVALID_FILE");
  EXPECT_STREQ(aclErrorName(ACL_ERROR_REPEAT_SUBSCRIBE), "ACL_ERROR_REPEAT_SUBSCRIBE");
  EXPECT_STREQ(aclErrorName(ACL_ERROR_STREAM_NOT_SUBSCRIBE), "ACL_ERROR_STREAM_NOT_SUBSCRIBE");
  EXPECT_STREQ(aclErrorName(ACL_ERROR_THREAD_NOT_SUBSCRIBE), "ACL_ERROR_THREAD_NOT_SUBSCRIBE");
  EXPECT_STREQ(aclErrorName(ACL_ERROR_WAIT_CALLBACK_TIMEOUT), "ACL_ERROR_WAIT_CALLBACK_TIMEOUT");
  EXPECT_STREQ(aclErrorName(ACL_ERROR_REPEAT_FINALIZE), "ACL_ERROR_REPEAT_FINALIZE");
  EXPECT_STREQ(aclErrorName(ACL_ERROR_RT_CONTEXT_NULL), "ACL_ERROR_RT_CONTEXT_NULL");
  EXPECT_STREQ(aclErrorName(ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL),
               "ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL");
  EXPECT_STREQ(aclErrorName(ACL_ERROR_BAD_ALLOC), "ACL_ERROR_BAD_ALLOC");
  EXPECT_STREQ(aclErrorName(123), "unknown error");
}

// Every error number a header declares has its name (or, for a number several names
// share, one of them): read from the headers themselves, so a number added there
// without a name here fails.
TEST(AclErrorMapTest, EveryDeclaredNumberHasAName) {
  const std::regex declared(R"((?:static const int|#define)\s+(ACL_ERROR_\w+)\s*=?\s*\(?(\d+))");
  int checked = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(COHORT_ACL_INCLUDE_DIR)) {
    if (!entry.is_regular_file()) continue;  // acl/ops/ is a folder of headers too
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (std::sregex_iterator m(text.begin(), text.end(), declared), end; m != end; ++m) {
      const int code = std::stoi((*m)[2]);
      EXPECT_STRNE(aclErrorName(code), "unknown error")
          << (*m)[1] << " (" << code << ") in " << entry.path().filename();
      ++checked;
    }
  }
  EXPECT_GT(checked, 200);
}

}  // namespace
}  // namespace cohort::acl

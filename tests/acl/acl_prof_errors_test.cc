// The profiling API's refusals and edge cases: call orders and arguments CANN
// rejects give its error numbers; repeated sessions, folders, odd messages, and the
// parts that are not supported.
#include "acl_prof_test_util.h"

namespace {

using namespace proftest;

TEST_F(ProfTest, WrongOrdersGiveCannsErrors) {
  uint32_t d0 = 0, d1 = 1, both[] = {0, 1};
  aclprofConfig* a = aclprofCreateConfig(&d0, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME);
  aclprofConfig* b = aclprofCreateConfig(&d1, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME);
  aclprofConfig* ab = aclprofCreateConfig(both, 2, ACL_AICORE_NONE, nullptr, ACL_PROF_MSPROFTX);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_NE(ab, nullptr);
  EXPECT_ACL_ERROR(aclprofStart(a), ACL_ERROR_PROF_NOT_RUN, "aclprofInit first");
  EXPECT_ACL_ERROR(aclprofStop(a), ACL_ERROR_PROF_NOT_RUN, "aclprofInit first");
  EXPECT_ACL_ERROR(aclprofFinalize(), ACL_ERROR_PROF_NOT_RUN, "aclprofFinalize");
  EXPECT_EQ(aclprofCreateStamp(), nullptr);
  expectMessage("no profiling session");
  EXPECT_ACL_ERROR(aclprofMarkEx("m", 1, nullptr), ACL_ERROR_PROF_NOT_RUN, "aclprofStart first");

  ASSERT_ACL_OK(init(dir_));
  EXPECT_ACL_ERROR(init(dir_), ACL_ERROR_REPEAT_INITIALIZE, "already initialised");
  EXPECT_ACL_ERROR(aclprofStop(a), ACL_ERROR_INVALID_PROFILING_CONFIG, "aclprofStart first");
  ASSERT_ACL_OK(aclprofStart(a));
  EXPECT_ACL_ERROR(aclprofStart(a), ACL_ERROR_PROF_ALREADY_RUN, "device 0");
  EXPECT_ACL_ERROR(aclprofStart(ab), ACL_ERROR_PROF_ALREADY_RUN, "device 0");
  ASSERT_ACL_OK(aclprofStart(b));  // another device: a second start
  EXPECT_ACL_ERROR(aclprofSetConfig(ACL_PROF_SYS_IO_FREQ, "10", 2), ACL_ERROR_PROF_ALREADY_RUN,
                   "a session is running");
  EXPECT_ACL_ERROR(aclprofStop(ab), ACL_ERROR_INVALID_PROFILING_CONFIG, "devices [0,1]");
  ASSERT_ACL_OK(aclprofStop(a));
  EXPECT_TRUE(fs::exists(fileIn(dir_)));  // written at each stop
  EXPECT_ACL_ERROR(aclprofStop(a), ACL_ERROR_INVALID_PROFILING_CONFIG, "is running");
  EXPECT_TRUE(cohort::trace::sessionRunning());  // b still runs
  ASSERT_ACL_OK(aclprofStop(b));
  EXPECT_FALSE(cohort::trace::sessionRunning());

  // Marks need a running session; a span's end does not.
  ASSERT_ACL_OK(aclprofStart(ab));
  void* s = stamp("late pop");
  ASSERT_ACL_OK(aclprofPush(s));
  ASSERT_ACL_OK(aclprofStop(ab));
  EXPECT_ACL_ERROR(aclprofMark(s), ACL_ERROR_PROF_NOT_RUN, "aclprofStart first");
  EXPECT_ACL_ERROR(aclprofPush(s), ACL_ERROR_PROF_NOT_RUN, "aclprofStart first");
  uint32_t id = 0;
  EXPECT_ACL_ERROR(aclprofRangeStart(s, &id), ACL_ERROR_PROF_NOT_RUN, "aclprofStart first");
  ASSERT_ACL_OK(aclprofPop());
  EXPECT_ACL_ERROR(aclprofPop(), ACL_ERROR_INVALID_PARAM, "call aclprofPush first");
  EXPECT_ACL_ERROR(aclprofRangePop(), ACL_ERROR_INVALID_PARAM, "aclprofRangePushEx first");
  EXPECT_ACL_ERROR(aclprofRangeStop(12345), ACL_ERROR_INVALID_PARAM, "range 12345");
  aclprofDestroyStamp(s);

  // A session still running at aclprofFinalize is stopped and written.
  fs::remove(fileIn(dir_));
  ASSERT_ACL_OK(aclprofStart(a));
  ASSERT_ACL_OK(aclprofFinalize());
  EXPECT_FALSE(cohort::trace::sessionRunning());
  EXPECT_FALSE(events(readTrace(dir_), "i", "aclprofStart").empty());
  EXPECT_ACL_ERROR(aclprofFinalize(), ACL_ERROR_PROF_NOT_RUN, "aclprofInit first");
  for (aclprofConfig* c : {a, b, ab}) ASSERT_ACL_OK(aclprofDestroyConfig(c));
  EXPECT_ACL_ERROR(aclprofDestroyConfig(a), ACL_ERROR_INVALID_PARAM, "not a live");
}

TEST_F(ProfTest, BadArgumentsAreRejected) {
  EXPECT_ACL_ERROR(aclprofInit(nullptr, 4), ACL_ERROR_INVALID_PARAM, "profilerResultPath");
  EXPECT_ACL_ERROR(aclprofInit(dir_.c_str(), 0), ACL_ERROR_INVALID_PARAM, "length 0");
  const std::string longPath(4097, 'p');
  EXPECT_ACL_ERROR(aclprofInit(longPath.c_str(), longPath.size()), ACL_ERROR_INVALID_PARAM,
                   "length 4097");
  EXPECT_ACL_ERROR(init("/proc/cohort-no"), ACL_ERROR_INVALID_PARAM, "cannot be created");

  uint32_t ok = 0, bad = 4, twice[] = {1, 1};
  EXPECT_EQ(aclprofCreateConfig(&bad, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME), nullptr);
  expectMessage("device 4 is not visible");
  EXPECT_EQ(aclprofCreateConfig(twice, 2, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME), nullptr);
  expectMessage("twice");
  EXPECT_EQ(aclprofCreateConfig(nullptr, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME), nullptr);
  expectMessage("deviceIdList is null");
  EXPECT_EQ(aclprofCreateConfig(&ok, 1, static_cast<aclprofAicoreMetrics>(9), nullptr, 0), nullptr);
  expectMessage("aicoreMetrics 9");
  EXPECT_EQ(aclprofCreateConfig(&ok, 1, ACL_AICORE_NONE,
                                reinterpret_cast<const aclprofAicoreEvents*>(&ok), 0),
            nullptr);
  expectMessage("aicoreEvents");
  EXPECT_EQ(aclprofCreateConfig(&ok, 1, ACL_AICORE_NONE, nullptr, 1ULL << 40), nullptr);
  expectMessage("unknown bits 0x10000000000");
  EXPECT_ACL_ERROR(aclprofDestroyConfig(nullptr), ACL_ERROR_INVALID_PARAM, "null");

  ASSERT_ACL_OK(init(dir_));
  EXPECT_ACL_ERROR(aclprofStart(nullptr), ACL_ERROR_INVALID_PARAM, "profilerConfig is null");
  int junk = 0;
  EXPECT_ACL_ERROR(aclprofStart(reinterpret_cast<aclprofConfig*>(&junk)), ACL_ERROR_INVALID_PARAM,
                   "not a live aclprofConfig");

  EXPECT_ACL_ERROR(aclprofSetConfig(ACL_PROF_DVPP_FREQ, nullptr, 2), ACL_ERROR_INVALID_PARAM,
                   "config is null");
  EXPECT_ACL_ERROR(aclprofSetConfig(ACL_PROF_DVPP_FREQ, "10", 0), ACL_ERROR_INVALID_PARAM,
                   "configLength 0");
  EXPECT_ACL_ERROR(aclprofSetConfig(ACL_PROF_DVPP_FREQ, "10", 257), ACL_ERROR_INVALID_PARAM,
                   "configLength 257");
  for (int type :
       {static_cast<int>(ACL_PROF_ARGS_MIN), 2, static_cast<int>(ACL_PROF_ARGS_MAX), 99}) {
    EXPECT_ACL_ERROR(aclprofSetConfig(static_cast<aclprofConfigType>(type), "1", 1),
                     ACL_ERROR_INVALID_PARAM, "not a setting");
  }
  for (const char* v : {"0", "101", "ten", "-5"}) {
    EXPECT_ACL_ERROR(aclprofSetConfig(ACL_PROF_SYS_HARDWARE_MEM_FREQ, v, strlen(v)),
                     ACL_ERROR_INVALID_PARAM, "[1, 100]");
  }
  EXPECT_ACL_ERROR(aclprofSetConfig(ACL_PROF_SYS_INTERCONNECTION_FREQ, "51", 2),
                   ACL_ERROR_INVALID_PARAM, "[1, 50]");
  EXPECT_ACL_ERROR(aclprofSetConfig(ACL_PROF_STORAGE_LIMIT, "199MB", 5), ACL_ERROR_INVALID_PARAM,
                   "[200, 4294967295]");
  ASSERT_ACL_OK(aclprofSetConfig(ACL_PROF_STORAGE_LIMIT, "200MB", 5));
  EXPECT_ACL_ERROR(aclprofSetConfig(ACL_PROF_LLC_MODE, "both", 4), ACL_ERROR_INVALID_PARAM,
                   "\"read\" or \"write\"");
  ASSERT_ACL_OK(aclprofSetConfig(ACL_PROF_LLC_MODE, "write", 5));
  ASSERT_ACL_OK(aclprofSetConfig(ACL_PROF_HOST_SYS, "cpu,mem", 7));
  EXPECT_ACL_ERROR(aclprofSetConfig(ACL_PROF_OPTYPE, "1", 1), ACL_ERROR_PROF_MODULES_UNSUPPORTED,
                   "ACL_PROF_OPTYPE");

  // The marks' arguments (with a session, so that only the arguments are wrong).
  aclprofConfig* config = aclprofCreateConfig(&ok, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_MSPROFTX);
  ASSERT_ACL_OK(aclprofStart(config));
  void* s = stamp("x");
  EXPECT_ACL_ERROR(aclprofMark(nullptr), ACL_ERROR_INVALID_PARAM, "stamp is null");
  EXPECT_ACL_ERROR(aclprofMark(&junk), ACL_ERROR_INVALID_PARAM, "not a live stamp");
  EXPECT_ACL_ERROR(aclprofPush(&junk), ACL_ERROR_INVALID_PARAM, "not a live stamp");
  EXPECT_ACL_ERROR(aclprofSetStampTraceMessage(s, nullptr, 3), ACL_ERROR_INVALID_PARAM,
                   "msg is null");
  EXPECT_ACL_ERROR(aclprofSetStampTraceMessage(s, "abc", 0), ACL_ERROR_INVALID_PARAM,
                   "msgLen is 0");
  EXPECT_ACL_ERROR(aclprofRangeStart(s, nullptr), ACL_ERROR_INVALID_PARAM, "rangeId is null");
  const std::string longMark(128, 'm');
  EXPECT_ACL_ERROR(aclprofMarkEx(longMark.c_str(), 128, nullptr), ACL_ERROR_INVALID_PARAM,
                   "msgLen 128");
  EXPECT_ACL_ERROR(aclprofMarkEx(nullptr, 1, nullptr), ACL_ERROR_INVALID_PARAM, "msg is null");
  EXPECT_ACL_ERROR(aclprofMarkEx("m", 1, nullptr), ACL_ERROR_RT_CONTEXT_NULL, "aclprofMarkEx");
  EXPECT_ACL_ERROR(aclprofRangePushEx(nullptr), ACL_ERROR_INVALID_PARAM, "attr is null");
  aclprofTensor tensor = {0, 0, 0, 9, {}};
  aclprofTensorInfo info = {1, 2, 0, 1, 0, 1, nullptr, nullptr};
  aclprofEventAttributes attr = {
      ACL_PROF_EVENT_ATTR_VERSION, sizeof(aclprofEventAttributes), 1, {&info}};
  EXPECT_ACL_ERROR(aclprofRangePushEx(&attr), ACL_ERROR_INVALID_PARAM, "messageType 1");
  attr.messageType = ACL_PROF_MESSAGE_TYPE_TENSOR_INFO;
  EXPECT_ACL_ERROR(aclprofRangePushEx(&attr), ACL_ERROR_INVALID_PARAM, "tensors is null");
  info.tensors = &tensor;
  EXPECT_ACL_ERROR(aclprofRangePushEx(&attr), ACL_ERROR_INVALID_PARAM, "shapeDim 9");
  attr.message.tensorInfo = nullptr;
  EXPECT_ACL_ERROR(aclprofRangePushEx(&attr), ACL_ERROR_INVALID_PARAM, "tensorInfo is null");
  aclprofDestroyStamp(s);
  aclprofDestroyStamp(s);
  expectMessage("not a live stamp");

  aclprofStepInfo* step = aclprofCreateStepInfo();
  ASSERT_ACL_OK(aclInit(nullptr));
  ASSERT_ACL_OK(aclrtSetDevice(0));
  EXPECT_ACL_ERROR(aclprofGetStepTimestamp(nullptr, ACL_STEP_START, nullptr),
                   ACL_ERROR_INVALID_PARAM, "stepInfo is null");
  EXPECT_ACL_ERROR(aclprofGetStepTimestamp(step, static_cast<aclprofStepTag>(2), nullptr),
                   ACL_ERROR_INVALID_PARAM, "tag 2");
  EXPECT_ACL_ERROR(aclprofGetStepTimestamp(step, ACL_STEP_END, nullptr), ACL_ERROR_INVALID_PARAM,
                   "no ACL_STEP_START");
  ASSERT_ACL_OK(aclprofGetStepTimestamp(step, ACL_STEP_START, nullptr));
  EXPECT_ACL_ERROR(aclprofGetStepTimestamp(step, ACL_STEP_START, nullptr), ACL_ERROR_INVALID_PARAM,
                   "already");
  aclprofDestroyStepInfo(step);
  EXPECT_ACL_ERROR(aclprofGetStepTimestamp(step, ACL_STEP_END, nullptr), ACL_ERROR_INVALID_PARAM,
                   "not a live step info");
  ASSERT_ACL_OK(aclrtSynchronizeDevice());
  ASSERT_ACL_OK(aclprofStop(config));
  ASSERT_ACL_OK(aclprofDestroyConfig(config));
  ASSERT_ACL_OK(aclprofFinalize());
  ASSERT_ACL_OK(aclFinalize());
}

TEST_F(ProfTest, Str2IdIsAStableHash) {
  const uint64_t add = aclprofStr2Id("Add");
  EXPECT_EQ(add, aclprofStr2Id("Add"));
  EXPECT_NE(add, aclprofStr2Id("Mul"));
  EXPECT_NE(add, UINT64_MAX);
  EXPECT_EQ(add, 0xf9aee319a006c9b4ULL);  // FNV-1a, the same in every process
  EXPECT_EQ(aclprofStr2Id(nullptr), UINT64_MAX);
  expectMessage("message is null");
}

// Sessions into one folder add up in its file; a new folder starts afresh, and
// ACL_PROF_PATH chooses it instead of aclprofInit's.
TEST_F(ProfTest, FoldersAndRepeatedSessions) {
  uint32_t d = 0;
  aclprofConfig* config = aclprofCreateConfig(&d, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_MSPROFTX);
  ASSERT_ACL_OK(init(dir_));
  for (const char* name : {"first", "second"}) {
    ASSERT_ACL_OK(aclprofStart(config));
    void* s = stamp(name);
    ASSERT_ACL_OK(aclprofMark(s));
    aclprofDestroyStamp(s);
    ASSERT_ACL_OK(aclprofStop(config));
  }
  json trace = readTrace(dir_);
  EXPECT_EQ(events(trace, "i", "first").size(), 1u);
  EXPECT_EQ(events(trace, "i", "second").size(), 1u);
  ASSERT_ACL_OK(aclprofFinalize());

  const std::string other = root_ + "/other";
  ASSERT_ACL_OK(init(root_ + "/unused"));
  ASSERT_ACL_OK(aclprofSetConfig(ACL_PROF_PATH, other.c_str(), other.size()));
  ASSERT_ACL_OK(aclprofStart(config));
  void* s = stamp("third");
  ASSERT_ACL_OK(aclprofMark(s));
  aclprofDestroyStamp(s);
  ASSERT_ACL_OK(aclprofStop(config));
  trace = readTrace(other);
  EXPECT_EQ(events(trace, "i", "third").size(), 1u);
  EXPECT_TRUE(events(trace, "i", "first").empty());
  EXPECT_FALSE(fs::exists(fileIn(root_ + "/unused")));
  ASSERT_ACL_OK(aclprofFinalize());
  ASSERT_ACL_OK(aclprofDestroyConfig(config));
}

// A message that is not UTF-8 still gives a JSON file.
TEST_F(ProfTest, MessagesThatAreNotUtf8StayJson) {
  uint32_t d = 0;
  aclprofConfig* config = aclprofCreateConfig(&d, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_MSPROFTX);
  ASSERT_ACL_OK(init(dir_));
  ASSERT_ACL_OK(aclprofStart(config));
  void* s = aclprofCreateStamp();
  ASSERT_ACL_OK(aclprofSetStampTraceMessage(s, "a\xff\"b\\\n\xe2\x82\xac", 9));
  ASSERT_ACL_OK(aclprofMark(s));
  aclprofDestroyStamp(s);
  ASSERT_ACL_OK(aclprofStop(config));
  EXPECT_EQ(events(readTrace(dir_), "i", "a?\"b\\\n\xe2\x82\xac").size(), 1u);
  ASSERT_ACL_OK(aclprofDestroyConfig(config));
}

// COHORT_TRACE already traces the process: profiling is configured (CANN's answer
// when aclInit configured it).
TEST_F(ProfTest, CohortTraceExcludesASession) {
  cohort::trace::configure(root_ + "/env");
  EXPECT_ACL_ERROR(init(dir_), ACL_ERROR_PROF_ALREADY_RUN, "COHORT_TRACE");
  EXPECT_FALSE(cohort::trace::startSession(dir_));
  cohort::trace::configure("");
}

TEST_F(ProfTest, ModelSubscriptionIsNotSupported) {
  EXPECT_ACL_ERROR(aclprofModelSubscribe(1, nullptr), ACL_ERROR_API_NOT_SUPPORT, "no models");
  EXPECT_ACL_ERROR(aclprofModelUnSubscribe(1), ACL_ERROR_API_NOT_SUPPORT, "no models");
  EXPECT_EQ(aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, nullptr), nullptr);
  expectMessage("aclprofCreateSubscribeConfig");
  EXPECT_ACL_ERROR(aclprofDestroySubscribeConfig(nullptr), ACL_ERROR_API_NOT_SUPPORT,
                   "aclprofDestroySubscribeConfig");
  size_t size = 0;
  EXPECT_ACL_ERROR(aclprofGetOpDescSize(&size), ACL_ERROR_API_NOT_SUPPORT, "aclprofGetOpDescSize");
  char data[64] = {};
  uint32_t n = 0;
  EXPECT_ACL_ERROR(aclprofGetOpNum(data, sizeof data, &n), ACL_ERROR_INVALID_PARAM,
                   "not subscription data");
  EXPECT_ACL_ERROR(aclprofGetOpNum(nullptr, 0, &n), ACL_ERROR_INVALID_PARAM, "opInfo is null");
  EXPECT_ACL_ERROR(aclprofGetOpTypeLen(data, sizeof data, 0, &size), ACL_ERROR_INVALID_PARAM,
                   "aclprofGetOpTypeLen");
  EXPECT_ACL_ERROR(aclprofGetOpType(data, sizeof data, 0, data, 8), ACL_ERROR_INVALID_PARAM,
                   "aclprofGetOpType");
  EXPECT_ACL_ERROR(aclprofGetOpNameLen(data, sizeof data, 0, &size), ACL_ERROR_INVALID_PARAM,
                   "aclprofGetOpNameLen");
  EXPECT_ACL_ERROR(aclprofGetOpName(data, sizeof data, 0, data, 8), ACL_ERROR_INVALID_PARAM,
                   "aclprofGetOpName");
  EXPECT_EQ(aclprofGetOpStart(data, sizeof data, 0), 0u);
  expectMessage("aclprofGetOpStart");
  EXPECT_EQ(aclprofGetOpEnd(data, sizeof data, 0), 0u);
  EXPECT_EQ(aclprofGetOpDuration(data, sizeof data, 0), 0u);
  EXPECT_EQ(aclprofGetModelId(data, sizeof data, 0), 0u);
  EXPECT_EQ(aclprofGetOpFlag(data, sizeof data, 0), ACL_SUBSCRIBE_NONE);
  EXPECT_EQ(aclprofGetOpAttriValue(data, sizeof data, 0, ACL_SUBSCRIBE_ATTRI_THREADID), nullptr);
  expectMessage("aclprofGetOpAttriValue");
  // Between aclprofInit and aclprofFinalize the two APIs conflict.
  ASSERT_ACL_OK(init(dir_));
  EXPECT_ACL_ERROR(aclprofModelSubscribe(1, nullptr), ACL_ERROR_PROF_API_CONFLICT,
                   "aclprofFinalize first");
  EXPECT_ACL_ERROR(aclprofGetOpNum(data, sizeof data, &n), ACL_ERROR_PROF_API_CONFLICT,
                   "aclprofFinalize first");
  ASSERT_ACL_OK(aclprofFinalize());
}

}  // namespace

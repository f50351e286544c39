// The profiling API (acl/acl_prof.h): a session writes the COHORT_TRACE timeline
// into aclprofInit's folder, with the streams' tasks, the collectives, and the
// msproftx marks and ranges, filtered by the config's data kinds; call orders and
// arguments CANN rejects give its error numbers.
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

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr uint64_t kAllData = ACL_PROF_ACL_API | ACL_PROF_TASK_TIME | ACL_PROF_AICORE_METRICS |
                              ACL_PROF_AICPU | ACL_PROF_HCCL_TRACE | ACL_PROF_MSPROFTX |
                              ACL_PROF_RUNTIME_API;

int myTid() { return static_cast<int>(::syscall(SYS_gettid)); }

// The newest recent message contains `needle` (for the calls that return no number).
void expectMessage(const char* needle) {
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
void streamWork(aclrtStream stream) {
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

TEST_F(ProfTest, CycleRecordsStreamTasksMarksRangesStepsAndTheConfig) {
  ASSERT_ACL_OK(aclInit(nullptr));
  ASSERT_ACL_OK(aclrtSetDevice(0));
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));  // before the session: its track is named anyway
  ASSERT_ACL_OK(init(dir_));
  EXPECT_TRUE(fs::is_directory(dir_));
  uint32_t devices[] = {0};
  aclprofConfig* config =
      aclprofCreateConfig(devices, 1, ACL_AICORE_PIPE_UTILIZATION, nullptr, kAllData);
  ASSERT_NE(config, nullptr);
  ASSERT_ACL_OK(aclprofSetConfig(ACL_PROF_SYS_HARDWARE_MEM_FREQ, "15", 2));
  ASSERT_ACL_OK(aclprofStart(config));

  aclprofStepInfo* step = aclprofCreateStepInfo();
  ASSERT_NE(step, nullptr);
  ASSERT_ACL_OK(aclprofGetStepTimestamp(step, ACL_STEP_START, stream));
  void* load = stamp("load");
  void* outer = stamp("outer");
  void* inner = stamp("inner");
  void* range = stamp("preprocess");
  ASSERT_ACL_OK(aclprofMark(load));
  ASSERT_ACL_OK(aclprofPush(outer));
  uint32_t rangeId = 0;
  ASSERT_ACL_OK(aclprofRangeStart(range, &rangeId));
  EXPECT_NE(rangeId, 0u);
  int stopTid = 0;
  std::thread([&] {  // a range may end on another thread
    stopTid = myTid();
    EXPECT_EQ(aclprofRangeStop(rangeId), ACL_SUCCESS);
  })
      .join();
  ASSERT_ACL_OK(aclprofPush(inner));
  streamWork(stream);
  ASSERT_ACL_OK(aclprofPop());
  ASSERT_ACL_OK(aclprofPop());
  ASSERT_ACL_OK(aclprofMarkEx("ex mark", 7, stream));
  aclprofTensor tensors[2] = {{0, 2, 1, 2, {4, 8}}, {1, 2, 1, 1, {32}}};
  aclprofTensorInfo info = {
      aclprofStr2Id("MyAdd_1"), aclprofStr2Id("Add"), 0, 2, 0, 8, stream, tensors};
  aclprofEventAttributes attr = {ACL_PROF_EVENT_ATTR_VERSION,
                                 sizeof(aclprofEventAttributes),
                                 ACL_PROF_MESSAGE_TYPE_TENSOR_INFO,
                                 {&info}};
  ASSERT_ACL_OK(aclprofRangePushEx(&attr));
  ASSERT_ACL_OK(aclprofRangePop());
  ASSERT_ACL_OK(aclprofGetStepTimestamp(step, ACL_STEP_END, stream));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream));
  for (void* s : {load, outer, inner, range}) aclprofDestroyStamp(s);
  aclprofDestroyStepInfo(step);
  ASSERT_ACL_OK(aclprofStop(config));

  const json trace = readTrace(dir_);
  const int me = myTid();
  // The stream's tasks, on its worker's named track.
  const auto tasks = events(trace, "X", "task");
  ASSERT_GE(tasks.size(), 2u);
  const int worker = tasks[0]["tid"];
  EXPECT_EQ(tasks[0]["cat"], "stream");
  EXPECT_NE(worker, me);
  EXPECT_NE(threadName(trace, worker).find("stream"), std::string::npos);
  // A mark, and push/pop spans nested on this thread.
  const auto marks = events(trace, "i", "load");
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0]["cat"], "msproftx");
  EXPECT_EQ(marks[0]["tid"], me);
  const auto o = events(trace, "X", "outer"), i = events(trace, "X", "inner");
  ASSERT_EQ(o.size(), 1u);
  ASSERT_EQ(i.size(), 1u);
  EXPECT_EQ(o[0]["tid"], me);
  EXPECT_LE(o[0]["ts"].get<double>(), i[0]["ts"].get<double>());
  EXPECT_GE(o[0]["ts"].get<double>() + o[0]["dur"].get<double>(),
            i[0]["ts"].get<double>() + i[0]["dur"].get<double>());
  EXPECT_GE(marks[0]["ts"].get<double>(), 0.0);
  // The range: begun here, ended on the other thread, one id.
  const auto b = events(trace, "b", "preprocess"), e = events(trace, "e", "preprocess");
  ASSERT_EQ(b.size(), 1u);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(b[0]["tid"], me);
  EXPECT_EQ(e[0]["tid"], stopTid);
  EXPECT_EQ(b[0]["id"], e[0]["id"]);
  EXPECT_LE(b[0]["ts"].get<double>(), e[0]["ts"].get<double>());
  // aclprofMarkEx: on this thread and on the stream, paired by mark_id.
  const auto ex = events(trace, "i", "ex mark");
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_EQ(ex[0]["args"]["mark_id"], ex[1]["args"]["mark_id"]);
  EXPECT_NE(ex[0]["tid"], ex[1]["tid"]);
  for (const auto& m : ex) EXPECT_TRUE(m["tid"] == me || m["tid"] == worker) << m;
  // The operator span of aclprofRangePushEx, named through aclprofStr2Id.
  const auto op = events(trace, "X", "MyAdd_1");
  ASSERT_EQ(op.size(), 1u);
  EXPECT_EQ(op[0]["args"]["op_type"], "Add");
  EXPECT_EQ(op[0]["args"]["block_nums"], 8);
  EXPECT_EQ(op[0]["args"]["tensors"][0]["shape"], json({4, 8}));
  EXPECT_EQ(op[0]["args"]["tensors"][1]["kind"], "output");
  // The step, where the stream reached its ends.
  int stepEnds = 0;
  for (const std::string ph : {"b", "e"}) {
    for (const auto& s : events(trace, ph)) {
      if (s["cat"] != "step") continue;
      ++stepEnds;
      EXPECT_EQ(s["tid"], worker);
    }
  }
  EXPECT_EQ(stepEnds, 2);
  // The session's record: what was asked for.
  const auto started = events(trace, "i", "aclprofStart");
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0]["args"]["devices"], json({0}));
  EXPECT_EQ(started[0]["args"]["settings"]["ACL_PROF_SYS_HARDWARE_MEM_FREQ"], "15");
  EXPECT_EQ(events(trace, "i", "aclprofStop").size(), 1u);

  // cohort-trace merges the folder.
  const std::string merge = std::string(COHORT_TRACE_BIN) + " merge " + dir_ + " >/dev/null";
  ASSERT_EQ(std::system(merge.c_str()), 0);
  std::ifstream merged(dir_ + "/merged.json");
  const json m = json::parse(merged, nullptr, false);
  ASSERT_FALSE(m.is_discarded());
  EXPECT_GE(m["traceEvents"].size(), trace["traceEvents"].size());

  ASSERT_ACL_OK(aclprofDestroyConfig(config));
  ASSERT_ACL_OK(aclprofFinalize());
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
  ASSERT_ACL_OK(aclFinalize());
}

// The data kinds choose the categories: without ACL_PROF_MSPROFTX no marks, without
// a task kind no stream tasks.
TEST_F(ProfTest, DataKindsChooseWhatTheFileHolds) {
  ASSERT_ACL_OK(aclInit(nullptr));
  ASSERT_ACL_OK(aclrtSetDevice(0));
  aclrtStream stream = nullptr;
  ASSERT_ACL_OK(aclrtCreateStream(&stream));
  uint32_t devices[] = {0};
  for (uint64_t kinds : {ACL_PROF_TASK_TIME, ACL_PROF_MSPROFTX}) {
    const std::string dir = dir_ + std::to_string(kinds);
    ASSERT_ACL_OK(init(dir));
    aclprofConfig* config = aclprofCreateConfig(devices, 1, ACL_AICORE_NONE, nullptr, kinds);
    ASSERT_NE(config, nullptr);
    ASSERT_ACL_OK(aclprofStart(config));
    void* s = stamp("a mark");
    ASSERT_ACL_OK(aclprofMark(s));  // succeeds either way
    streamWork(stream);
    aclprofDestroyStamp(s);
    ASSERT_ACL_OK(aclprofStop(config));
    const json trace = readTrace(dir);
    EXPECT_EQ(events(trace, "i", "a mark").size(), kinds == ACL_PROF_MSPROFTX ? 1u : 0u);
    EXPECT_EQ(events(trace, "X", "task").empty(), kinds == ACL_PROF_MSPROFTX);
    ASSERT_ACL_OK(aclprofDestroyConfig(config));
    ASSERT_ACL_OK(aclprofFinalize());
  }
  ASSERT_ACL_OK(aclrtDestroyStream(stream));
  ASSERT_ACL_OK(aclFinalize());
}

// hccl_test's order: the session starts before aclInit and ends before aclFinalize;
// the collectives of a communicator are in it.
TEST_F(ProfTest, WorksBeforeAclInitAndRecordsCollectives) {
  ASSERT_ACL_OK(init(dir_));
  uint32_t device = 1;
  aclprofConfig* config =
      aclprofCreateConfig(&device, 1, ACL_AICORE_PIPE_UTILIZATION, nullptr, kAllData);
  ASSERT_NE(config, nullptr);
  ASSERT_ACL_OK(aclprofStart(config));
  ASSERT_ACL_OK(aclInit(nullptr));
  int32_t devs[2] = {0, 1};
  HcclComm comms[2] = {};
  ASSERT_EQ(HcclCommInitAll(2, devs, comms), HCCL_SUCCESS);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      ASSERT_EQ(aclrtSetDevice(r), ACL_SUCCESS);
      aclrtStream stream = nullptr;
      ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
      void *send = nullptr, *recv = nullptr;
      ASSERT_EQ(aclrtMalloc(&send, 1024, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
      ASSERT_EQ(aclrtMalloc(&recv, 1024, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
      EXPECT_EQ(
          HcclAllReduce(send, recv, 256, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comms[r], stream),
          HCCL_SUCCESS);
      EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
      EXPECT_EQ(aclrtFree(send), ACL_SUCCESS);
      EXPECT_EQ(aclrtFree(recv), ACL_SUCCESS);
      EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
    });
  }
  for (auto& t : ranks) t.join();
  for (HcclComm c : comms) EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
  ASSERT_ACL_OK(aclprofStop(config));
  ASSERT_ACL_OK(aclprofFinalize());
  ASSERT_ACL_OK(aclprofDestroyConfig(config));
  ASSERT_ACL_OK(aclFinalize());

  const json trace = readTrace(dir_);
  int collectives = 0;
  for (const auto& e : events(trace, "X")) {
    if (e["cat"] == "collective") ++collectives;
  }
  EXPECT_GE(collectives, 2) << "one allreduce span per rank";
  EXPECT_FALSE(events(trace, "X", "task").empty());
}

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

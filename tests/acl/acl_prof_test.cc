// The profiling API (acl/acl_prof.h): a session writes the COHORT_TRACE timeline
// into aclprofInit's folder, with the streams' tasks, the collectives, and the
// msproftx marks and ranges, filtered by the config's data kinds (the call orders and
// arguments CANN rejects: acl_prof_errors_test.cc).
#include "acl_prof_test_util.h"

namespace {

using namespace proftest;

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
      // A task of the stream's own: the allreduce may finish on this thread (the
      // launch's fast path) and then queues none.
      EXPECT_EQ(aclrtMemsetAsync(send, 1024, 0, 1024, stream), ACL_SUCCESS);
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

}  // namespace

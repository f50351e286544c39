// Built models (aclmdlRIBuildBegin ... aclmdlRIBuildEnd) and labels: work queued on a
// bound persistent stream runs only when the model runs, every time it runs; a label
// switch jumps at each run to the label its device index names (forward, or back for
// a loop); and each misuse is named.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "acl_test_util.h"
#include "cohort/runtime_capture.h"

namespace cohort::acltest {
namespace {

constexpr std::size_t kBuildCount = 515;  // odd

class AclBuildTest : public AclDevice0StreamTest {
 protected:
  void TearDown() override {
    for (aclrtStream s : bound_) {
      EXPECT_EQ(aclmdlRIUnbindStream(model_, s), ACL_SUCCESS);
    }
    if (model_ != nullptr) {
      EXPECT_EQ(aclmdlRIDestroy(model_), ACL_SUCCESS);
    }
    for (aclrtStream s : persistent_) {
      EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    }
    for (aclrtLabel l : labels_) {
      EXPECT_EQ(aclrtDestroyLabel(l), ACL_SUCCESS);
    }
    AclDevice0StreamTest::TearDown();
  }
  aclrtStream persistentStream() {
    aclrtStream s = nullptr;
    EXPECT_EQ(aclrtCreateStreamWithConfig(&s, 0, ACL_STREAM_PERSISTENT), ACL_SUCCESS);
    persistent_.push_back(s);
    return s;
  }
  // A stream bound to model_ as a head stream.
  aclrtStream boundStream() {
    aclrtStream s = persistentStream();
    EXPECT_EQ(aclmdlRIBindStream(model_, s, ACL_MODEL_STREAM_FLAG_HEAD), ACL_SUCCESS)
        << aclGetRecentErrMsg();
    bound_.push_back(s);
    return s;
  }
  aclrtLabel label() {
    aclrtLabel l = nullptr;
    EXPECT_EQ(aclrtCreateLabel(&l), ACL_SUCCESS);
    labels_.push_back(l);
    return l;
  }
  aclrtLabelList listOf(std::vector<aclrtLabel> labels) {
    aclrtLabelList list = nullptr;
    EXPECT_EQ(aclrtCreateLabelList(labels.data(), labels.size(), &list), ACL_SUCCESS);
    return list;
  }
  // Queues on `s` a kernel that appends `mark` to trace_ (its runs are ordered: one
  // stream, or streams the test orders).
  void mark(aclrtStream s, int value) {
    ASSERT_OK(runtime::launchKernel(static_cast<runtime::Stream*>(s), [this, value](runtime::Stream*) {
      trace_.push_back(value);
      return Status::Ok();
    }));
  }

  aclmdlRI model_ = nullptr;
  std::vector<aclrtStream> persistent_, bound_;
  std::vector<aclrtLabel> labels_;
  std::vector<int> trace_;
};

// Two head streams: a copy and a kernel on one, a kernel on the other. Nothing runs
// while building; each run of the model on stream_ runs both with the host data of
// that time, and synchronizing stream_ waits for both.
TEST_F(AclBuildTest, BoundStreamsRunTheirWorkAtEachExecution) {
  std::vector<float> host(kBuildCount), out(kBuildCount, -1.0f), side(kBuildCount, -1.0f);
  void *dev = nullptr, *devOut = nullptr, *devSide = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&dev, kBuildCount * 4, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMalloc(&devOut, kBuildCount * 4, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMalloc(&devSide, kBuildCount * 4, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclmdlRIBuildBegin(&model_, 0));
  aclrtStream a = boundStream(), b = boundStream();
  ASSERT_ACL_OK(aclrtMemcpyAsync(dev, kBuildCount * 4, host.data(), kBuildCount * 4,
                                 ACL_MEMCPY_HOST_TO_DEVICE, a));
  ASSERT_OK(runtime::launchKernel(static_cast<runtime::Stream*>(a), [=](runtime::Stream*) {
    for (std::size_t i = 0; i < kBuildCount; ++i) {
      static_cast<float*>(devOut)[i] = static_cast<const float*>(dev)[i] * 3.0f;
    }
    return Status::Ok();
  }));
  ASSERT_ACL_OK(aclrtMemcpyAsync(out.data(), kBuildCount * 4, devOut, kBuildCount * 4,
                                 ACL_MEMCPY_DEVICE_TO_HOST, a));
  ASSERT_ACL_OK(aclrtMemsetAsync(devSide, kBuildCount * 4, 0x3f, kBuildCount * 4, b));
  ASSERT_ACL_OK(aclrtMemcpyAsync(side.data(), kBuildCount * 4, devSide, kBuildCount * 4,
                                 ACL_MEMCPY_DEVICE_TO_HOST, b));
  ASSERT_ACL_OK(aclmdlRIEndTask(model_, a));
  ASSERT_ACL_OK(aclmdlRIEndTask(model_, b));
  ASSERT_ACL_OK(aclrtSynchronizeStream(a));  // nothing of the model runs on it
  ASSERT_ACL_OK(aclmdlRIBuildEnd(model_, nullptr));
  EXPECT_EQ(out[0], -1.0f);
  EXPECT_EQ(side[0], -1.0f);
  const std::uint32_t setBits = 0x3f3f3f3fU;  // every byte 0x3f
  float setValue = 0;
  std::memcpy(&setValue, &setBits, 4);
  for (int run = 1; run <= 2; ++run) {
    for (std::size_t i = 0; i < kBuildCount; ++i) host[i] = static_cast<float>(run * 1000 + i);
    std::fill(side.begin(), side.end(), -1.0f);
    ASSERT_ACL_OK(aclmdlRIExecuteAsync(model_, stream_));
    ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
    for (std::size_t i = 0; i < kBuildCount; ++i) {
      ASSERT_EQ(out[i], host[i] * 3.0f) << "run " << run << " element " << i;
      ASSERT_EQ(side[i], setValue) << "run " << run << " element " << i;
    }
  }
  // After the build the bound streams run what is queued on them again.
  std::vector<float> direct(1, 0.0f);
  ASSERT_ACL_OK(aclrtMemcpyAsync(direct.data(), 4, devOut, 4, ACL_MEMCPY_DEVICE_TO_HOST, a));
  ASSERT_ACL_OK(aclrtSynchronizeStream(a));
  EXPECT_EQ(direct[0], out[0]);
  ASSERT_ACL_OK(aclrtFree(dev));
  ASSERT_ACL_OK(aclrtFree(devOut));
  ASSERT_ACL_OK(aclrtFree(devSide));
}

// switch -> L0: 0, L1: 1, L2: 2. The device index picks where each run starts; an
// index past the list goes to its last label.
TEST_F(AclBuildTest, ASwitchJumpsToTheLabelItsIndexNames) {
  uint32_t* index = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(reinterpret_cast<void**>(&index), 4, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclmdlRIBuildBegin(&model_, 0));
  aclrtStream s = boundStream();
  aclrtLabel l0 = label(), l1 = label(), l2 = label();
  aclrtLabelList list = listOf({l0, l1, l2});
  ASSERT_ACL_OK(aclrtSwitchLabelByIndex(index, 3, list, s));
  ASSERT_ACL_OK(aclrtSetLabel(l0, s));
  mark(s, 0);
  ASSERT_ACL_OK(aclrtSetLabel(l1, s));
  mark(s, 1);
  ASSERT_ACL_OK(aclrtSetLabel(l2, s));
  mark(s, 2);
  ASSERT_ACL_OK(aclmdlRIEndTask(model_, s));
  ASSERT_ACL_OK(aclmdlRIBuildEnd(model_, nullptr));
  ASSERT_ACL_OK(aclrtDestroyLabelList(list));  // the model keeps what it needs
  const std::vector<std::pair<uint32_t, std::vector<int>>> runs = {
      {1, {1, 2}}, {0, {0, 1, 2}}, {2, {2}}, {7, {2}}};
  for (const auto& [value, want] : runs) {
    trace_.clear();
    ASSERT_ACL_OK(aclrtMemcpy(index, 4, &value, 4, ACL_MEMCPY_HOST_TO_DEVICE));
    ASSERT_ACL_OK(aclmdlRIExecuteAsync(model_, stream_));
    ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
    EXPECT_EQ(trace_, want) << "index " << value;
  }
  ASSERT_ACL_OK(aclrtFree(index));
}

// A switch back to a label before it is a loop: the kernel counts and sets the index
// to leave after the third pass.
TEST_F(AclBuildTest, ASwitchBackIsALoop) {
  uint32_t* index = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(reinterpret_cast<void**>(&index), 4, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclmdlRIBuildBegin(&model_, 0));
  aclrtStream s = boundStream();
  aclrtLabel again = label(), done = label();
  aclrtLabelList list = listOf({again, done});
  int passes = 0;
  ASSERT_ACL_OK(aclrtSetLabel(again, s));
  ASSERT_OK(runtime::launchKernel(static_cast<runtime::Stream*>(s), [&passes, index](runtime::Stream*) {
    *index = ++passes < 3 ? 0 : 1;
    return Status::Ok();
  }));
  ASSERT_ACL_OK(aclrtSwitchLabelByIndex(index, 2, list, s));
  ASSERT_ACL_OK(aclrtSetLabel(done, s));
  mark(s, 9);
  ASSERT_ACL_OK(aclmdlRIEndTask(model_, s));
  ASSERT_ACL_OK(aclmdlRIBuildEnd(model_, nullptr));
  ASSERT_ACL_OK(aclmdlRIExecuteAsync(model_, stream_));
  ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
  EXPECT_EQ(passes, 3);
  EXPECT_EQ(trace_, std::vector<int>{9});
  ASSERT_ACL_OK(aclrtDestroyLabelList(list));
  ASSERT_ACL_OK(aclrtFree(index));
}

// A head stream, a switch on a 64-bit device value that starts one of two streams, each
// of which starts the ended stream; a stream nothing starts. Each run follows the
// value of that run; what is not started does not run; stream_ waits for the end.
TEST_F(AclBuildTest, StartedStreamsRunAndTheOthersDoNot) {
  ASSERT_ACL_OK(aclmdlRIBuildBegin(&model_, 0));
  aclrtStream head = boundStream();
  aclrtStream onTrue = persistentStream(), onFalse = persistentStream(), end = persistentStream(),
              idle = persistentStream();
  for (aclrtStream s : {onTrue, onFalse, end, idle}) {
    ASSERT_ACL_OK(aclmdlRIBindStream(model_, s, ACL_MODEL_STREAM_FLAG_DEFAULT));
    bound_.push_back(s);
  }
  void *value = nullptr, *bound = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&value, 8, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtMalloc(&bound, 8, ACL_MEM_MALLOC_HUGE_FIRST));
  const int64_t three = 3;
  ASSERT_ACL_OK(aclrtMemcpy(bound, 8, &three, 8, ACL_MEMCPY_HOST_TO_DEVICE));
  mark(head, 1);
  ASSERT_ACL_OK(aclrtSwitchStream(value, ACL_RT_GREATER_OR_EQUAL, bound, ACL_RT_SWITCH_INT64,
                                  onTrue, onFalse, head));
  mark(onTrue, 2);
  ASSERT_ACL_OK(aclrtActiveStream(end, onTrue));
  mark(onFalse, 3);
  ASSERT_ACL_OK(aclrtActiveStream(end, onFalse));
  mark(end, 4);
  mark(idle, 9);
  ASSERT_ACL_OK(aclmdlRIEndTask(model_, end));
  ASSERT_ACL_OK(aclmdlRIBuildEnd(model_, nullptr));
  EXPECT_TRUE(trace_.empty());
  // -5 and 2 are below 3; 3 and 2^33 are not (2^33's low 32 bits, 0, would be).
  const int64_t values[] = {-5, 3, 2, int64_t{1} << 33};
  const std::vector<int> expected[] = {{1, 3, 4}, {1, 2, 4}, {1, 3, 4}, {1, 2, 4}};
  for (int run = 0; run < 4; ++run) {
    ASSERT_ACL_OK(aclrtMemcpy(value, 8, &values[run], 8, ACL_MEMCPY_HOST_TO_DEVICE));
    trace_.clear();
    ASSERT_ACL_OK(aclmdlRIExecuteAsync(model_, stream_));
    ASSERT_ACL_OK(aclrtSynchronizeStream(stream_));
    EXPECT_EQ(trace_, expected[run]) << "run " << run << ", value " << values[run];
  }
  ASSERT_ACL_OK(aclrtFree(value));
  ASSERT_ACL_OK(aclrtFree(bound));
}

// The stream that ends the model is never started: the run fails naming it, at once
// (no lane is left that could start it), and the model runs again.
TEST_F(AclBuildTest, AnEndNothingStartsFailsTheRun) {
  ASSERT_ACL_OK(aclmdlRIBuildBegin(&model_, 0));
  aclrtStream head = boundStream();
  aclrtStream end = persistentStream();
  ASSERT_ACL_OK(aclmdlRIBindStream(model_, end, ACL_MODEL_STREAM_FLAG_DEFAULT));
  bound_.push_back(end);
  mark(head, 1);
  mark(end, 2);
  ASSERT_ACL_OK(aclmdlRIEndTask(model_, end));
  ASSERT_ACL_OK(aclmdlRIBuildEnd(model_, nullptr));
  for (int run = 0; run < 2; ++run) {
    trace_.clear();
    ASSERT_ACL_OK(aclmdlRIExecuteAsync(model_, stream_));
    EXPECT_NE(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
    const char* m = aclGetRecentErrMsg();
    ASSERT_NE(m, nullptr);
    EXPECT_NE(std::string(m).find("waited to be started, but no task of this launch started it"),
              std::string::npos)
        << m;
    EXPECT_EQ(trace_, std::vector<int>{1});
  }
}

TEST_F(AclBuildTest, EachMisuseIsNamed) {
  ASSERT_ACL_OK(aclmdlRIBuildBegin(&model_, 0));
  aclmdlRI other = nullptr;
  EXPECT_ACL_ERROR(aclmdlRIBuildBegin(&other, 1), ACL_ERROR_INVALID_PARAM, "flag 1 is reserved");
  EXPECT_ACL_ERROR(aclmdlRIBindStream(model_, stream_, ACL_MODEL_STREAM_FLAG_HEAD),
                   ACL_ERROR_INVALID_PARAM, "ACL_STREAM_PERSISTENT");
  aclrtStream s = boundStream();
  EXPECT_ACL_ERROR(aclmdlRIBindStream(model_, s, ACL_MODEL_STREAM_FLAG_HEAD),
                   ACL_ERROR_INVALID_PARAM, "is bound to model");
  EXPECT_ACL_ERROR(aclmdlRIBindStream(model_, persistentStream(), 5), ACL_ERROR_INVALID_PARAM,
                   "flag 0x5");
  aclmdlRI done = nullptr;
  EXPECT_ACL_ERROR(aclmdlRICaptureEnd(s, &done), ACL_ERROR_INVALID_PARAM, "is built, not captured");
  EXPECT_ACL_ERROR(aclmdlRIExecuteAsync(model_, stream_), ACL_ERROR_RT_MODEL_CAPTURED,
                   "still being built");
  mark(s, 1);
  EXPECT_ACL_ERROR(aclmdlRIBuildEnd(model_, nullptr), ACL_ERROR_INVALID_PARAM,
                   "was ended (modelEndTask)");
  // A switch to a label set on another stream, and a label set twice.
  aclrtStream t = boundStream();
  aclrtLabel here = label(), there = label();
  aclrtLabelList list = listOf({here, there});
  void* index = nullptr;
  ASSERT_ACL_OK(aclrtMalloc(&index, 4, ACL_MEM_MALLOC_HUGE_FIRST));
  ASSERT_ACL_OK(aclrtSwitchLabelByIndex(index, 2, list, s));
  ASSERT_ACL_OK(aclrtSetLabel(here, s));
  ASSERT_ACL_OK(aclrtSetLabel(there, t));
  ASSERT_ACL_OK(aclmdlRIEndTask(model_, s));
  ASSERT_ACL_OK(aclmdlRIEndTask(model_, t));
  EXPECT_ACL_ERROR(aclmdlRIBuildEnd(model_, nullptr), ACL_ERROR_INVALID_PARAM,
                   "not set on the switch's stream");
  EXPECT_ACL_ERROR(aclmdlRIExecuteAsync(model_, stream_), ACL_ERROR_RT_MODEL_CAPTURED,
                   "never completed");
  EXPECT_ACL_ERROR(aclmdlRIUnbindStream(model_, stream_), ACL_ERROR_INVALID_PARAM,
                   "is not bound to model");
  ASSERT_ACL_OK(aclrtDestroyLabelList(list));
  ASSERT_ACL_OK(aclrtFree(index));

  // Starting streams: only a bound stream that is not a head one, from a stream bound
  // to the same model; a switch's arguments.
  aclmdlRI second = nullptr;
  ASSERT_ACL_OK(aclmdlRIBuildBegin(&second, 0));
  aclrtStream head = persistentStream(), later = persistentStream();
  ASSERT_ACL_OK(aclmdlRIBindStream(second, head, ACL_MODEL_STREAM_FLAG_HEAD));
  ASSERT_ACL_OK(aclmdlRIBindStream(second, later, ACL_MODEL_STREAM_FLAG_DEFAULT));
  mark(later, 1);
  EXPECT_ACL_ERROR(aclrtActiveStream(head, later), ACL_ERROR_INVALID_PARAM, "is a head stream");
  EXPECT_ACL_ERROR(aclrtActiveStream(later, stream_), ACL_ERROR_INVALID_PARAM,
                   "is not bound to a model being built");
  EXPECT_ACL_ERROR(aclrtActiveStream(stream_, head), ACL_ERROR_INVALID_PARAM,
                   "is not bound to the model");
  EXPECT_ACL_ERROR(aclrtActiveStream(nullptr, head), ACL_ERROR_INVALID_PARAM,
                   "activeStream is null");
  int32_t word = 0;
  EXPECT_ACL_ERROR(aclrtSwitchStream(nullptr, ACL_RT_EQUAL, &word, ACL_RT_SWITCH_INT32, later,
                                     nullptr, head),
                   ACL_ERROR_INVALID_PARAM, "leftValue is null");
  EXPECT_ACL_ERROR(aclrtSwitchStream(&word, static_cast<aclrtCondition>(9), &word,
                                     ACL_RT_SWITCH_INT32, later, nullptr, head),
                   ACL_ERROR_INVALID_PARAM, "cond 9 is not");
  EXPECT_ACL_ERROR(aclrtSwitchStream(&word, ACL_RT_EQUAL, &word,
                                     static_cast<aclrtCompareDataType>(5), later, nullptr, head),
                   ACL_ERROR_INVALID_PARAM, "dataType 5 is not");
  EXPECT_ACL_ERROR(aclmdlRIEndTask(second, stream_), ACL_ERROR_INVALID_PARAM,
                   "is not bound to model");
  // Destroyed while building: its streams are free again and run their work.
  ASSERT_ACL_OK(aclmdlRIUnbindStream(second, head));
  ASSERT_ACL_OK(aclmdlRIDestroy(second));
  trace_.clear();
  mark(later, 5);
  ASSERT_ACL_OK(aclrtSynchronizeStream(later));
  EXPECT_EQ(trace_, std::vector<int>{5});
}

}  // namespace
}  // namespace cohort::acltest

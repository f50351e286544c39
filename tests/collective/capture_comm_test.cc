// Collectives in captured models: recorded, not run, while the stream captures;
// run again at every launch of the model, in order with its other tasks. Ranks as
// threads.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "cohort/runtime_capture.h"
#include "collective/rank_pool.h"
#include "common/error.h"
#include "test_util.h"

namespace cohort::testing {
namespace {

// Rank r's input element i at launch k; every sum, maximum and copy below is
// exact in int32.
std::int32_t captured(int r, std::size_t i, int k) {
  return static_cast<std::int32_t>((r + 1) * static_cast<int>(i % 7 + 1) + 100 * k);
}

// Device buffers of int32 elements, freed with the test.
struct Buffers {
  std::vector<void*> all;
  std::int32_t* get(std::size_t count) {
    void* p = nullptr;
    if (!runtime::deviceMalloc(&p, count * 4).ok()) return nullptr;
    std::memset(p, 0xff, count * 4);
    all.push_back(p);
    return static_cast<std::int32_t*>(p);
  }
  ~Buffers() {
    for (void* p : all) (void)runtime::deviceFree(p);
  }
};

// The first wrong element of `got` against want(i), or "".
template <typename F>
std::string firstWrong(const char* what, const std::int32_t* got, std::size_t count, F want) {
  for (std::size_t i = 0; i < count; ++i) {
    if (got[i] != want(i)) {
      return std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(got[i]) +
             ", expected " + std::to_string(want(i)) + "; ";
    }
  }
  return "";
}

// One capture of every kind of call (collectives, a grouped ring of sends and
// receives), launched three times: twice on the stream it was captured on, once on
// another. A captured kernel writes each launch's inputs from a counter in device
// memory and another checks every output element against that launch's values.
TEST(CaptureCommTest, EveryCallRecordedOnceRunsAtEveryLaunch) {
  constexpr int kN = 4;
  constexpr std::size_t n = 1001;  // odd: no collective's pieces come out even
  constexpr int kLaunches = 3;
  RankPool& pool = RankPool::shared(kN);
  ASSERT_OK(pool.initStatus());
  auto results = pool.run([&](int r) -> std::string {
    Communicator& c = pool.comm(r);
    runtime::Stream* s = pool.stream(r);
    Buffers b;
    std::int32_t *in = b.get(n), *ar = b.get(n), *ag = b.get(n * kN), *rsIn = b.get(n * kN),
                 *rs = b.get(n), *bc = b.get(n), *red = b.get(n), *a2aIn = b.get(n * kN),
                 *a2a = b.get(n * kN), *sendBuf = b.get(n), *recvBuf = b.get(n);
    auto* launch = b.get(1);
    if (launch == nullptr) return "alloc";
    *launch = 0;
    std::string failures;
    int checked = 0;
    if (Status st = runtime::captureBegin(s, runtime::CaptureMode::kThreadLocal); !st.ok()) {
      return "captureBegin: " + st.toString();
    }
    auto queue = [&]() -> Status {
      COHORT_RETURN_IF_ERROR(runtime::launchKernel(s, [=](runtime::Stream*) {
        const int k = *launch;
        for (std::size_t i = 0; i < n; ++i) {
          in[i] = captured(r, i, k);
          sendBuf[i] = captured(r, i, k) * 3;
          bc[i] = r == 1 ? captured(r, i, k) : -1;
        }
        for (std::size_t i = 0; i < n * kN; ++i) {
          rsIn[i] = captured(r, i, k);
          a2aIn[i] = captured(r, i, k) + 7;
        }
        return Status::Ok();
      }));
      COHORT_RETURN_IF_ERROR(c.allReduce(in, ar, n, DataType::kInt32, ReduceOp::kSum, s));
      COHORT_RETURN_IF_ERROR(c.allGather(in, ag, n, DataType::kInt32, s));
      COHORT_RETURN_IF_ERROR(c.reduceScatter(rsIn, rs, n, DataType::kInt32, ReduceOp::kSum, s));
      COHORT_RETURN_IF_ERROR(c.broadcast(bc, n, DataType::kInt32, 1, s));
      COHORT_RETURN_IF_ERROR(c.reduce(in, red, n, DataType::kInt32, ReduceOp::kMax, 2, s));
      COHORT_RETURN_IF_ERROR(c.allToAll(a2aIn, a2a, n, DataType::kInt32, s));
      COHORT_RETURN_IF_ERROR(Communicator::groupStart());
      COHORT_RETURN_IF_ERROR(c.send(sendBuf, n, DataType::kInt32, (r + 1) % kN, s));
      COHORT_RETURN_IF_ERROR(c.recv(recvBuf, n, DataType::kInt32, (r + kN - 1) % kN, s));
      COHORT_RETURN_IF_ERROR(Communicator::groupEnd());
      return runtime::launchKernel(s, [&, r](runtime::Stream*) {
        const int k = *launch;
        std::string& f = failures;
        f += firstWrong("allreduce", ar, n, [&](std::size_t i) {
          std::int32_t sum = 0;
          for (int q = 0; q < kN; ++q) sum += captured(q, i, k);
          return sum;
        });
        f += firstWrong("allgather", ag, n * kN,
                        [&](std::size_t i) { return captured(static_cast<int>(i / n), i % n, k); });
        f += firstWrong("reducescatter", rs, n, [&](std::size_t i) {
          std::int32_t sum = 0;
          for (int q = 0; q < kN; ++q) sum += captured(q, r * n + i, k);
          return sum;
        });
        f += firstWrong("broadcast", bc, n, [&](std::size_t i) { return captured(1, i, k); });
        if (r == 2) {
          f += firstWrong("reduce", red, n, [&](std::size_t i) { return captured(kN - 1, i, k); });
        }
        f += firstWrong("alltoall", a2a, n * kN, [&](std::size_t i) {
          return captured(static_cast<int>(i / n), r * n + i % n, k) + 7;
        });
        f += firstWrong("recv", recvBuf, n,
                        [&](std::size_t i) { return captured((r + kN - 1) % kN, i, k) * 3; });
        if (!f.empty()) f = "launch " + std::to_string(k) + ": " + f;
        ++checked;
        ++*launch;
        return Status::Ok();
      });
    };
    const Status queued = queue();
    runtime::Model* model = nullptr;
    const Status ended = runtime::captureEnd(s, &model);
    if (!queued.ok() || !ended.ok()) {
      if (model != nullptr) (void)runtime::modelDestroy(model);
      return "capture: " + queued.toString() + " / " + ended.toString();
    }
    // Nothing ran while capturing.
    if (*launch != 0 || checked != 0 || ar[0] != -1) return "the capture ran its tasks";
    runtime::ModelDescription d;
    (void)runtime::modelDescribe(model, &d);
    std::string kinds;
    for (const auto& t : d.tasks) kinds += t.kind + " ";
    if (kinds.find("allreduce allgather reducescatter broadcast reduce alltoall sendrecv") ==
        std::string::npos) {
      failures += "model tasks: " + kinds;
    }
    runtime::Stream* other = nullptr;
    runtime::Event* ev = nullptr;
    Status st = runtime::streamCreate(&other);
    if (st.ok()) st = runtime::eventCreate(&ev);
    for (int k = 0; k < kLaunches && st.ok(); ++k) {
      if (k < 2) {
        st = runtime::modelLaunch(model, s);
      } else {  // after the launches on s, on the other stream
        st = runtime::eventRecord(ev, s);
        if (st.ok()) st = runtime::streamWaitEvent(other, ev);
        if (st.ok()) st = runtime::modelLaunch(model, other);
      }
    }
    if (st.ok()) st = runtime::streamSynchronize(s);
    if (st.ok()) st = runtime::streamSynchronize(other);
    (void)runtime::modelDestroy(model);
    if (ev != nullptr) (void)runtime::eventDestroy(ev);
    if (other != nullptr) (void)runtime::streamDestroy(other);
    if (!st.ok()) return st.toString();
    if (checked != kLaunches) failures += "checked " + std::to_string(checked) + " launches";
    return failures;
  });
  EXPECT_TRUE(joinFailures(results).empty()) << joinFailures(results);
}

// A stream that joins the capture through an event records its collective on its
// own lane; each launch runs it there, joined back before the capture's last task.
TEST(CaptureCommTest, ACollectiveOnAJoinedLaneRunsThere) {
  constexpr std::size_t n = 333;
  RankPool& pool = RankPool::shared(2);
  ASSERT_OK(pool.initStatus());
  auto results = pool.run([&](int r) -> std::string {
    runtime::Stream* s = pool.stream(r);
    runtime::Stream* side = nullptr;
    runtime::Event *fork = nullptr, *join = nullptr;
    Buffers b;
    std::int32_t *in = b.get(n), *out = b.get(n * 2), *launch = b.get(1);
    if (launch == nullptr) return "alloc";
    *launch = 0;
    std::string failures;
    Status st = runtime::streamCreate(&side);
    if (st.ok()) st = runtime::eventCreate(&fork);
    if (st.ok()) st = runtime::eventCreate(&join);
    if (st.ok()) st = runtime::captureBegin(s, runtime::CaptureMode::kThreadLocal);
    if (st.ok()) {
      st = runtime::launchKernel(s, [=](runtime::Stream*) {
        for (std::size_t i = 0; i < n; ++i) in[i] = captured(r, i, *launch);
        return Status::Ok();
      });
    }
    if (st.ok()) st = runtime::eventRecord(fork, s);
    if (st.ok()) st = runtime::streamWaitEvent(side, fork);
    if (st.ok()) st = pool.comm(r).allGather(in, out, n, DataType::kInt32, side);
    if (st.ok()) st = runtime::eventRecord(join, side);
    if (st.ok()) st = runtime::streamWaitEvent(s, join);
    if (st.ok()) {
      st = runtime::launchKernel(s, [&, out](runtime::Stream*) {
        const int k = *launch;
        failures += firstWrong("allgather", out, n * 2, [&](std::size_t i) {
          return captured(static_cast<int>(i / n), i % n, k);
        });
        ++*launch;
        return Status::Ok();
      });
    }
    runtime::Model* model = nullptr;
    const Status ended = runtime::captureEnd(s, &model);
    if (st.ok()) st = ended;
    runtime::ModelDescription d;
    if (st.ok()) st = runtime::modelDescribe(model, &d);
    if (st.ok() && d.lanes != 2) failures += "lanes: " + std::to_string(d.lanes);
    for (int k = 0; k < 3 && st.ok(); ++k) st = runtime::modelLaunch(model, s);
    if (st.ok()) st = runtime::streamSynchronize(s);
    if (model != nullptr) (void)runtime::modelDestroy(model);
    (void)runtime::eventDestroy(fork);
    (void)runtime::eventDestroy(join);
    (void)runtime::streamDestroy(side);
    if (!st.ok()) return st.toString();
    if (*launch != 3) failures += "launches checked: " + std::to_string(*launch);
    return failures;
  });
  EXPECT_TRUE(joinFailures(results).empty()) << joinFailures(results);
}

// Ranks that captured different calls: both captures end cleanly (nothing was
// checked yet), and the first launch fails on both ranks, naming the difference.
TEST(CaptureCommTest, DifferentCapturesMeetTheMismatchAtTheFirstLaunch) {
  RankPool pool(2);  // a fresh pair: a failed communicator stays failed
  ASSERT_OK(pool.initStatus());
  auto results = pool.run([&](int r) -> std::string {
    runtime::Stream* s = pool.stream(r);
    Buffers b;
    std::int32_t* buf = b.get(512);
    if (buf == nullptr) return "alloc";
    const std::size_t count = r == 0 ? 200 : 300;
    Status st = runtime::captureBegin(s, runtime::CaptureMode::kThreadLocal);
    if (st.ok()) st = pool.comm(r).allReduce(buf, buf, count, DataType::kInt32, ReduceOp::kSum, s);
    runtime::Model* model = nullptr;
    const Status ended = runtime::captureEnd(s, &model);
    if (!st.ok() || !ended.ok()) return "capture: " + st.toString() + " / " + ended.toString();
    if (!pool.comm(r).asyncError().ok()) return "failed before any launch";
    st = runtime::modelLaunch(model, s);
    if (st.ok()) st = runtime::streamSynchronize(s);
    (void)runtime::modelDestroy(model);
    return st.toString();
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(results[r].find("mismatched"), std::string::npos) << "rank " << r << ": " << results[r];
    EXPECT_NE(results[r].find("200"), std::string::npos) << results[r];
    EXPECT_NE(results[r].find("300"), std::string::npos) << results[r];
  }
}

// A model may outlive the communicator it recorded calls of: launching it then
// fails at once, naming the call, and queues nothing.
TEST(CaptureCommTest, ALaunchAfterTheCommunicatorIsDestroyedSaysSo) {
  ASSERT_OK(runtime::setDevice(0));
  std::vector<std::unique_ptr<Communicator>> comms;
  ASSERT_OK(Communicator::initAll({0}, &comms));
  runtime::Stream* s = nullptr;
  ASSERT_OK(runtime::streamCreate(&s));
  Buffers b;
  std::int32_t* buf = b.get(16);
  ASSERT_NE(buf, nullptr);
  for (int i = 0; i < 16; ++i) buf[i] = i;
  ASSERT_OK(runtime::captureBegin(s, runtime::CaptureMode::kThreadLocal));
  ASSERT_OK(comms[0]->allReduce(buf, buf, 16, DataType::kInt32, ReduceOp::kSum, s));
  runtime::Model* model = nullptr;
  ASSERT_OK(runtime::captureEnd(s, &model));
  ASSERT_OK(runtime::modelLaunch(model, s));  // a single rank: the sum is the input
  ASSERT_OK(runtime::streamSynchronize(s));
  for (int i = 0; i < 16; ++i) EXPECT_EQ(buf[i], i);
  ASSERT_OK(Communicator::destroy(std::move(comms[0]), false));
  const Status st = runtime::modelLaunch(model, s);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidUsage) << st.toString();
  EXPECT_NE(st.message().find("allreduce"), std::string::npos) << st.toString();
  EXPECT_NE(st.message().find("destroyed"), std::string::npos) << st.toString();
  EXPECT_OK(runtime::streamSynchronize(s));
  EXPECT_OK(runtime::modelDestroy(model));
  EXPECT_OK(runtime::streamDestroy(s));
}

}  // namespace
}  // namespace cohort::testing

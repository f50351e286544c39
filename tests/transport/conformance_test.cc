// The transport conformance suite: every transport available here must honour
// the Connection contract (transport/connection.h) in the same way. Two ranks
// are threads of this process (rank r on device r), connected with the real
// Transport objects through a Bootstrap on a MemoryStore; tcp runs over
// 127.0.0.1 (COHORT_IF_IP). rdma runs only where a device exists, else every
// test skips saying why. Peer death is in conformance_death_test.cc.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <thread>

#include "common/error.h"
#include "conformance_util.h"
#include "test_util.h"

namespace cohort::transport::testing {
namespace {

constexpr std::size_t kGuard = 64;  // bytes after each receive buffer that must stay intact
constexpr std::uint8_t kGuardByte = 0xEE;

class Conformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string reason = unavailableReason(GetParam());
    if (!reason.empty()) GTEST_SKIP() << reason;
    auto store = std::make_shared<MemoryStore>();
    const auto statuses =
        onBoth([&](int r) { return connectEnd(GetParam(), store, r, r, &ends_[r]); });
    ASSERT_OK(statuses[0]);
    ASSERT_OK(statuses[1]);
  }

  Connection& conn(int rank) { return *ends_[rank].conn; }

  // Runs f(0) and f(1) on two threads (each rank drives its own connection).
  static std::vector<Status> onBoth(const std::function<Status(int)>& f) {
    std::vector<Status> out(2);
    std::thread other([&] { out[1] = f(1); });
    out[0] = f(0);
    other.join();
    return out;
  }

  // Rank 0 sends `bytes` of pattern `seed` from device (or host) memory; rank 1
  // receives into a buffer followed by a guard; checks every byte and the guard.
  void sendAndCheck(std::size_t bytes, bool device, std::uint32_t seed) {
    Buffer src(device ? 0 : -1, bytes), dst(device ? 1 : -1, bytes + kGuard);
    ASSERT_OK(src.status());
    ASSERT_OK(dst.status());
    fillPattern(src.data(), bytes, seed);
    std::memset(dst.data(), 0, bytes);
    std::memset(dst.data() + bytes, kGuardByte, kGuard);
    const auto s = onBoth([&](int r) {
      COHORT_RETURN_IF_ERROR(r == 0 ? conn(0).postSend(src.data(), bytes)
                                    : conn(1).postRecv(dst.data(), bytes));
      return drain(conn(r));
    });
    ASSERT_OK(s[0]);
    ASSERT_OK(s[1]);
    EXPECT_EQ(firstWrong(dst.data(), bytes, seed), bytes) << bytes << " bytes, device " << device;
    for (std::size_t i = 0; i < kGuard; ++i) {
      ASSERT_EQ(dst.data()[bytes + i], kGuardByte) << "written past the end, " << bytes << " bytes";
    }
  }

  End ends_[2];
};

const std::size_t kSizes[] = {0, 1, 4095, (1u << 20) + 3, 64u << 20};

TEST_P(Conformance, ExactBytesFromDeviceMemory) {
  std::uint32_t seed = 1;
  for (std::size_t bytes : kSizes) sendAndCheck(bytes, /*device=*/true, seed++);
}

TEST_P(Conformance, ExactBytesFromHostMemory) {
  std::uint32_t seed = 11;
  for (std::size_t bytes : kSizes) sendAndCheck(bytes, /*device=*/false, seed++);
}

TEST_P(Conformance, ManyMessagesInFlightArriveInOrder) {
  constexpr int kCount = 300;  // more than any ring or socket buffer holds
  std::vector<std::size_t> sizes, offsets;
  std::size_t total = 0;
  for (int i = 0; i < kCount; ++i) {
    sizes.push_back((static_cast<std::size_t>(i) * 7919) % 70000 + (i % 3 == 0 ? 0 : 1));
    offsets.push_back(total);
    total += sizes.back();
  }
  Buffer src(0, total), dst(-1, total);  // device memory to plain host memory
  ASSERT_OK(src.status());
  for (int i = 0; i < kCount; ++i) fillPattern(src.data() + offsets[i], sizes[i], 100 + i);
  const auto s = onBoth([&](int r) {
    for (int i = 0; i < kCount; ++i) {  // everything posted before any progress
      COHORT_RETURN_IF_ERROR(r == 0 ? conn(0).postSend(src.data() + offsets[i], sizes[i])
                                    : conn(1).postRecv(dst.data() + offsets[i], sizes[i]));
    }
    return drain(conn(r));
  });
  ASSERT_OK(s[0]);
  ASSERT_OK(s[1]);
  EXPECT_EQ(conn(1).recvsCompleted(), static_cast<std::uint64_t>(kCount));
  for (int i = 0; i < kCount; ++i) {
    ASSERT_EQ(firstWrong(dst.data() + offsets[i], sizes[i], 100 + i), sizes[i]) << "message " << i;
  }
}

TEST_P(Conformance, BothDirectionsAtOnce) {
  constexpr std::size_t kBytes = (8u << 20) + 5;
  Buffer out0(0, kBytes), out1(1, kBytes), in0(0, kBytes), in1(1, kBytes);
  ASSERT_OK(out0.status());
  ASSERT_OK(out1.status());
  fillPattern(out0.data(), kBytes, 70);
  fillPattern(out1.data(), kBytes, 71);
  Buffer* out[2] = {&out0, &out1};
  Buffer* in[2] = {&in0, &in1};
  const auto s = onBoth([&](int r) {
    for (int k = 0; k < 3; ++k) {  // several rounds, each send and receive posted together
      COHORT_RETURN_IF_ERROR(conn(r).postSend(out[r]->data(), kBytes));
      COHORT_RETURN_IF_ERROR(conn(r).postRecv(in[r]->data(), kBytes));
    }
    return drain(conn(r));
  });
  ASSERT_OK(s[0]);
  ASSERT_OK(s[1]);
  EXPECT_EQ(firstWrong(in0.data(), kBytes, 71), kBytes);
  EXPECT_EQ(firstWrong(in1.data(), kBytes, 70), kBytes);
}

void sumInt32(void* dst, const void* a, const void* b, std::size_t bytes, const void*) {
  auto* d = static_cast<std::uint32_t*>(dst);
  const auto* x = static_cast<const std::uint32_t*>(a);
  const auto* y = static_cast<const std::uint32_t*>(b);
  for (std::size_t i = 0; i < bytes / 4; ++i) d[i] = x[i] + y[i];
}

// dst = accumulate + message, with a separate accumulate buffer and in place.
TEST_P(Conformance, ReductionOnReceive) {
  constexpr std::size_t kCount = ((4u << 20) + 12) / 4;  // not a multiple of any chunk
  const Reduction sum{sumInt32, nullptr, 4};
  for (bool inPlace : {false, true}) {
    Buffer msg(0, kCount * 4), acc(1, kCount * 4), dst(1, kCount * 4);
    ASSERT_OK(msg.status());
    ASSERT_OK(dst.status());
    auto* m = reinterpret_cast<std::uint32_t*>(msg.data());
    auto* a = reinterpret_cast<std::uint32_t*>(acc.data());
    auto* d = reinterpret_cast<std::uint32_t*>(inPlace ? acc.data() : dst.data());
    for (std::size_t i = 0; i < kCount; ++i) {
      m[i] = static_cast<std::uint32_t>(3 * i + 1);
      a[i] = static_cast<std::uint32_t>(7 * i + 2);
    }
    const auto s = onBoth([&](int r) {
      COHORT_RETURN_IF_ERROR(r == 0 ? conn(0).postSend(m, kCount * 4)
                                    : conn(1).postRecv(d, kCount * 4, &sum, a));
      return drain(conn(r));
    });
    ASSERT_OK(s[0]);
    ASSERT_OK(s[1]);
    for (std::size_t i = 0; i < kCount; ++i) {
      ASSERT_EQ(d[i], static_cast<std::uint32_t>(10 * i + 3))
          << "element " << i << " in place " << inPlace;
    }
  }
}

// The receiver fails at once; the sender, whose send may already have left,
// fails at the latest at its next operation.
TEST_P(Conformance, MismatchedSizeFailsBothEnds) {
  std::vector<std::uint8_t> out(100, 1), in(64);
  std::uint64_t word = 0;
  const auto s = onBoth([&](int r) {
    COHORT_RETURN_IF_ERROR(r == 0 ? conn(0).postSend(out.data(), 100)
                                  : conn(1).postRecv(in.data(), 64));
    COHORT_RETURN_IF_ERROR(drain(conn(r), 5000));
    COHORT_RETURN_IF_ERROR(conn(r).postRecv(&word, sizeof(word)));
    return drain(conn(r), 5000, "the operation after the mismatch");
  });
  EXPECT_ERROR(s[0], kMismatch, "100");
  EXPECT_ERROR(s[1], kMismatch, "64");
}

// A message the peer received is delivered, even if the peer closes at once;
// after the close, a receive fails (naming the peer) instead of hanging.
TEST_P(Conformance, DeliveredSendCompletesWhenThePeerThenCloses) {
  std::vector<std::uint8_t> out(1 << 20), in(1 << 20);
  fillPattern(out.data(), out.size(), 5);
  ASSERT_OK(conn(0).postSend(out.data(), out.size()));
  ASSERT_OK(conn(1).postRecv(in.data(), in.size()));
  // One thread drives both ends until rank 1 has the message, then closes it
  // before rank 0 progresses again.
  const Deadline deadline = Deadline::afterMs(10000);
  while (conn(1).recvsCompleted() < 1 && !deadline.expired()) {
    ASSERT_OK(conn(0).progress());
    ASSERT_OK(conn(1).progress());
  }
  ASSERT_EQ(firstWrong(in.data(), in.size(), 5), in.size());
  ends_[1].conn.reset();
  EXPECT_OK(drain(conn(0), 5000, "send before the close"));
  std::uint64_t word = 0;
  ASSERT_OK(conn(0).postRecv(&word, sizeof(word)));
  const auto t0 = std::chrono::steady_clock::now();
  const Status s = drain(conn(0), 20000, "receive after the close");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(s.code(), ErrorCode::kRemoteError) << s.toString();
  EXPECT_NE(s.message().find("rank 1"), std::string::npos) << s.toString();
}

// An end aborted after a failure elsewhere (its process lives on): the peer's
// pending receive fails at once, naming the rank, and the aborted end's own
// later calls return the reason.
TEST_P(Conformance, AbortedEndFailsThePeersPendingReceive) {
  std::uint64_t word = 0;
  ASSERT_OK(conn(0).postRecv(&word, sizeof(word)));
  conn(1).abort(Status(ErrorCode::kRemoteError, "rank 7 died"));
  const auto t0 = std::chrono::steady_clock::now();
  const Status s = drain(conn(0), 20000, "receive from an aborted end");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(s.code(), ErrorCode::kRemoteError) << s.toString();
  EXPECT_NE(s.message().find("rank 1"), std::string::npos) << s.toString();
  EXPECT_ERROR(conn(1).postSend(&word, sizeof(word)), kRemoteError, "rank 7 died");
}

INSTANTIATE_TEST_SUITE_P(Transports, Conformance, ::testing::Values("shm", "tcp", "rdma"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace cohort::transport::testing

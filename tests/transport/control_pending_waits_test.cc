// The server's parked get/wait requests, driven by a private io_context.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>

#include "test_util.h"
#include "transport/control/pending_waits.h"

namespace cohort::transport::control {
namespace {

using namespace std::chrono_literals;

struct Fixture {
  boost::asio::io_context io;
  MemoryStore store;
  PendingWaits waits{io, store};

  void set(const std::string& key) {
    ASSERT_OK(store.set(key, Bytes{1}));
    waits.keySet(key);
  }
};

TEST(ControlPendingWaitsTest, AnswersWhenTheLastMissingKeyArrives) {
  Fixture f;
  f.set("present");
  std::optional<Status> now;
  f.waits.add(1, {"present"}, -1, [&](const Status& s) { now = s; });
  ASSERT_TRUE(now.has_value());
  EXPECT_OK(*now);
  EXPECT_EQ(f.waits.size(), 0u);

  std::optional<Status> a;
  std::optional<Status> b;
  f.waits.add(1, {"x", "y", "z"}, -1, [&](const Status& s) { a = s; });
  f.waits.add(2, {"y"}, -1, [&](const Status& s) { b = s; });
  EXPECT_EQ(f.waits.size(), 2u);
  f.set("y");
  ASSERT_TRUE(b.has_value());
  EXPECT_OK(*b);
  EXPECT_FALSE(a.has_value());
  f.set("x");
  EXPECT_FALSE(a.has_value()) << "z is still missing";
  f.set("unrelated");
  f.set("z");
  ASSERT_TRUE(a.has_value());
  EXPECT_OK(*a);
  EXPECT_EQ(f.waits.size(), 0u);
}

TEST(ControlPendingWaitsTest, TimeoutNamesOnlyTheMissingKeys) {
  Fixture f;
  f.set("here");
  std::optional<Status> r;
  const auto start = Clock::now();
  f.waits.add(1, {"here", "gone1", "gone2"}, 50, [&](const Status& s) { r = s; });
  f.io.run_for(2s);  // returns once the timer has fired: no work left
  ASSERT_TRUE(r.has_value());
  EXPECT_ERROR(*r, kTimeout, "key(s) gone1, gone2");
  EXPECT_EQ(r->message().find("here"), std::string::npos) << r->message();
  EXPECT_GE(Clock::now() - start, 45ms);
  std::optional<Status> poll;
  f.waits.add(1, {"gone1"}, 0, [&](const Status& s) { poll = s; });
  ASSERT_TRUE(poll.has_value());
  EXPECT_ERROR(*poll, kTimeout, "gone1");
}

TEST(ControlPendingWaitsTest, AClosedConnectionsRequestsAreDroppedUnanswered) {
  Fixture f;
  int answered = 0;
  f.waits.add(7, {"k"}, 1000, [&](const Status&) { ++answered; });
  f.waits.add(7, {"k", "j"}, -1, [&](const Status&) { ++answered; });
  f.waits.add(8, {"k"}, -1, [&](const Status&) { ++answered; });
  f.waits.dropOwner(7);
  EXPECT_EQ(f.waits.size(), 1u);
  f.set("k");
  f.io.run_for(100ms);  // the cancelled timer's handler runs and does nothing
  EXPECT_EQ(answered, 1);
  f.waits.add(9, {"never"}, -1, [&](const Status&) { ++answered; });
  f.waits.clear();
  EXPECT_EQ(f.waits.size(), 0u);
  EXPECT_EQ(answered, 1);
}

}  // namespace
}  // namespace cohort::transport::control

// The shm transport's ring invariants (COHORT_PROTOCOL_CHECK, in Debug and
// sanitizer builds): counters in the shared control block that no correct peer
// writes abort the rank that reads them, naming the peer and the counts, where
// the release build would hand out messages that were never published.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#include "common/error.h"
#include "conformance_util.h"
#include "transport/shm/shm_transport.h"

namespace cohort::transport::testing {
namespace {

// Connects ranks 0 and 1 over shm (threads of this process), then makes rank 1's
// ring into rank 0 claim more messages in flight than it has entries.
void receiveFromAnOverrunRing() {
  auto store = std::make_shared<MemoryStore>();
  End ends[2];
  Status other;
  std::thread t([&] { other = connectEnd("shm", store, 1, 1, &ends[1]); });
  const Status mine = connectEnd("shm", store, 0, 0, &ends[0]);
  t.join();
  if (!mine.ok() || !other.ok()) {
    std::fprintf(stderr, "connect failed: %s / %s\n", mine.toString().c_str(),
                 other.toString().c_str());
    std::_Exit(3);
  }
  auto* shm = static_cast<shm::ShmTransport*>(ends[0].transport.get());
  shm::MessageRing& ring = shm->self().block->inbound[shm->peer(1)->localIndex];
  ring.posted.store(shm::kRingEntries + 5, std::memory_order_release);
  Buffer buffer(-1, 64);
  (void)ends[0].conn->postRecv(buffer.data(), buffer.size());
  (void)drain(*ends[0].conn, 2000, "overrun ring");
  std::_Exit(4);  // not reached when the check holds
}

TEST(ShmProtocolCheck, ARingOverrunAbortsTheReceiverNamingTheSender) {
  if (!kProtocolChecks) {
    GTEST_SKIP() << "built without COHORT_PROTOCOL_CHECKS (Debug and sanitizer builds have them)";
  }
  const std::string reason = unavailableReason("shm");
  if (!reason.empty()) GTEST_SKIP() << reason;
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(receiveFromAnOverrunRing(),
               "protocol invariant .*rank 1 published 69 messages here, of which 0 were consumed");
}

}  // namespace
}  // namespace cohort::transport::testing

// The far end of the conformance suite's peer-death tests: rank 1 of a pair, in
// a process of its own, which streams 16 MiB messages until it is killed.
//
//   conformance_peer KIND STORE_PORT TOKEN send|recv
//
// It joins the test's TcpStore on 127.0.0.1, connects with a transport of KIND
// (device 1), sets the key "started" once a first message has moved, and goes
// on until SIGKILL. Exit codes: 2 bad arguments, 3 set-up failed, 4 the
// transfer failed (the survivor's side died first).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "conformance_util.h"
#include "transport/tcp_store.h"

namespace ct = cohort::transport;

namespace {

constexpr std::size_t kBytes = 16 << 20;

int failed(int code, const cohort::Status& s) {
  std::fprintf(stderr, "conformance_peer: %s\n", s.toString().c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: conformance_peer KIND STORE_PORT TOKEN send|recv\n");
    return 2;
  }
  const std::string kind = argv[1], role = argv[4];
  const bool sending = role == "send";
  std::shared_ptr<ct::Store> store;
  cohort::Status s =
      ct::connectTcpStore("127.0.0.1", std::atoi(argv[2]), ct::JobToken::fromText(argv[3]), 1,
                          cohort::Deadline::afterMs(10000), &store);
  if (!s.ok()) return failed(3, s);
  ct::testing::End end;
  s = ct::testing::connectEnd(kind, store, 1, 1, &end);
  if (!s.ok()) return failed(3, s);
  ct::testing::Buffer buffer(1, kBytes);
  if (!buffer.status().ok()) return failed(3, buffer.status());
  ct::Connection& c = *end.conn;
  bool started = false;
  for (;;) {  // until killed: two messages always in flight
    while ((sending ? c.sendsPosted() - c.sendsCompleted() : c.recvsPosted() - c.recvsCompleted()) <
           2) {
      s = sending ? c.postSend(buffer.data(), kBytes) : c.postRecv(buffer.data(), kBytes);
      if (!s.ok()) return failed(4, s);
    }
    s = c.progress();
    if (!s.ok()) return failed(4, s);
    if (!started && (sending ? c.sendsCompleted() : c.recvsCompleted()) > 0) {
      started = true;
      s = store->set("started", {1});
      if (!s.ok()) return failed(4, s);
    }
  }
}

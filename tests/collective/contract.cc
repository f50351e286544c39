#include "collective/contract.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cohort::testing {

const char* contractCallName(ContractCall c) {
  switch (c) {
    case ContractCall::kAllReduce: return "allreduce";
    case ContractCall::kReduceScatter: return "reducescatter";
    case ContractCall::kAllGather: return "allgather";
    case ContractCall::kBroadcast: return "broadcast";
    case ContractCall::kAllToAll: return "alltoall";
    case ContractCall::kSendRecv: return "send/recv";
    case ContractCall::kBatchSendRecv: return "batch send/recv";
  }
  return "?";
}

const char* contractScenarioName(ContractScenario s) {
  switch (s) {
    case ContractScenario::kBarrierAfter: return "host barrier after the call";
    case ContractScenario::kWorkBehind: return "work queued behind the call";
    case ContractScenario::kOppositeOrder: return "two communicators in opposite orders";
  }
  return "?";
}

Watchdog::Watchdog() : thread_([this] { loop(); }) {}

Watchdog::~Watchdog() {
  stop_.store(true);
  thread_.join();
}

void Watchdog::loop() {
  while (!stop_.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    for (const Entry& e : entries_) {
      if (e.active && now > e.deadline) {
        std::fprintf(stderr, "CONTRACT BROKEN: %s did not return within %lld s\n", e.what.c_str(),
                     static_cast<long long>(e.limit.count()));
        std::fflush(stderr);
        std::fflush(stdout);
        std::_Exit(3);
      }
    }
  }
}

Watchdog::Guard::Guard(Watchdog& w, std::string what, std::chrono::seconds limit) : w_(w) {
  std::lock_guard<std::mutex> lock(w_.mu_);
  slot_ = 0;
  while (slot_ < w_.entries_.size() && w_.entries_[slot_].active) ++slot_;
  if (slot_ == w_.entries_.size()) w_.entries_.emplace_back();
  Entry& e = w_.entries_[slot_];
  e.active = true;
  e.what = std::move(what);
  e.limit = limit;
  e.deadline = std::chrono::steady_clock::now() + limit;
}

Watchdog::Guard::~Guard() {
  std::lock_guard<std::mutex> lock(w_.mu_);
  w_.entries_[slot_].active = false;
}

namespace {

// Rank r's input at element i: small integers, so that every sum is exact in
// float whatever the order of reduction.
float value(int r, std::size_t i) { return static_cast<float>((static_cast<std::size_t>(r) * 3 + i) % 7 + 1); }
constexpr float kUnwritten = -1.0f;

// One rank's device memory, kept for the thread (ranks as threads each have
// their own): inputs and outputs of both communicators, the copy queued
// behind a call, a memset target and the event between the two streams.
struct ContractBuffers {
  std::size_t capacity = 0;  // bytes of each of the big buffers
  float* inA = nullptr;
  float* outA = nullptr;
  float* copyA = nullptr;
  float* inB = nullptr;
  float* outB = nullptr;
  void* marker = nullptr;  // 64 bytes
  runtime::Event* event = nullptr;
  void release() {
    for (void* p : {static_cast<void*>(inA), static_cast<void*>(outA), static_cast<void*>(copyA),
                    static_cast<void*>(inB), static_cast<void*>(outB), marker}) {
      if (p != nullptr) (void)runtime::deviceFree(p);
    }
    if (event != nullptr) (void)runtime::eventDestroy(event);
    *this = ContractBuffers{};
  }
  Status reserve(std::size_t bytes) {
    if (bytes <= capacity) return Status::Ok();
    release();
    for (float** p : {&inA, &outA, &copyA, &inB, &outB}) {
      void* v = nullptr;
      Status s = runtime::deviceMalloc(&v, bytes);
      if (!s.ok()) return s;
      *p = static_cast<float*>(v);
    }
    Status s = runtime::deviceMalloc(&marker, 64);
    if (s.ok()) s = runtime::eventCreate(&event);
    if (s.ok()) capacity = bytes;
    return s;
  }
};
thread_local ContractBuffers tBuffers;

// The shape of one call at `count` elements per block on a communicator of n.
struct Shape {
  std::size_t in = 0, out = 0;  // elements
};
Shape shapeOf(ContractCall c, std::size_t count, std::size_t n) {
  switch (c) {
    case ContractCall::kAllReduce: return {count, count};
    case ContractCall::kReduceScatter: return {count * n, count};
    case ContractCall::kAllGather: return {count, count * n};
    case ContractCall::kBroadcast: return {0, count};  // in place in the output
    case ContractCall::kAllToAll: return {count * n, count * n};
    case ContractCall::kSendRecv: case ContractCall::kBatchSendRecv: return {count, count};
  }
  return {};
}

// What element i of rank `me`'s output must hold, computed from value() alone.
float expected(ContractCall c, int me, int n, std::size_t count, std::size_t i) {
  auto sum = [&](std::size_t k) {
    float s = 0;
    for (int r = 0; r < n; ++r) s += value(r, k);
    return s;
  };
  const std::size_t block = i / count, at = i % count;
  switch (c) {
    case ContractCall::kAllReduce: return sum(i);
    case ContractCall::kReduceScatter: return sum(static_cast<std::size_t>(me) * count + i);
    case ContractCall::kAllGather: return value(static_cast<int>(block), at);
    case ContractCall::kBroadcast: return value(n - 1, i);
    case ContractCall::kAllToAll:
      return value(static_cast<int>(block), static_cast<std::size_t>(me) * count + at);
    case ContractCall::kSendRecv: case ContractCall::kBatchSendRecv:
      return value((me + n - 1) % n, i);
  }
  return 0;
}

std::string check(const char* what, ContractCall c, int me, int n, std::size_t count,
                  const float* out, std::size_t elements) {
  std::size_t wrong = 0, first = 0;
  for (std::size_t i = 0; i < elements; ++i) {
    if (out[i] != expected(c, me, n, count, i) && wrong++ == 0) first = i;
  }
  if (wrong == 0) return "";
  char line[256];
  std::snprintf(line, sizeof(line), "%s: %zu of %zu elements wrong; element %zu is %g, expected %g",
                what, wrong, elements, first, static_cast<double>(out[first]),
                static_cast<double>(expected(c, me, n, count, first)));
  return line;
}

// Fills a rank's input (or, for a broadcast, the root's buffer) and marks the output.
void prepare(ContractCall c, int me, int n, std::size_t count, float* in, float* out) {
  const Shape sh = shapeOf(c, count, static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < sh.in; ++i) in[i] = value(me, i);
  const bool root = me == n - 1;
  for (std::size_t i = 0; i < sh.out; ++i) {
    out[i] = c == ContractCall::kBroadcast && root ? value(me, i) : kUnwritten;
  }
}

// Queues the call; for plain send/recv two calls, the even ranks sending first.
Status queue(Communicator& comm, ContractCall c, std::size_t count, float* in, float* out,
             runtime::Stream* s) {
  const int me = comm.rank(), n = comm.size();
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  const DataType f = DataType::kFloat32;
  switch (c) {
    case ContractCall::kAllReduce: return comm.allReduce(in, out, count, f, ReduceOp::kSum, s);
    case ContractCall::kReduceScatter:
      return comm.reduceScatter(in, out, count, f, ReduceOp::kSum, s);
    case ContractCall::kAllGather: return comm.allGather(in, out, count, f, s);
    case ContractCall::kBroadcast: return comm.broadcast(out, count, f, n - 1, s);
    case ContractCall::kAllToAll: return comm.allToAll(in, out, count, f, s);
    case ContractCall::kSendRecv: {
      if (me % 2 == 0) {
        Status st = comm.send(in, count, f, next, s);
        return st.ok() ? comm.recv(out, count, f, prev, s) : st;
      }
      Status st = comm.recv(out, count, f, prev, s);
      return st.ok() ? comm.send(in, count, f, next, s) : st;
    }
    case ContractCall::kBatchSendRecv:
      return comm.batchSendRecv({SendRecvItem{true, in, count, f, next},
                                 SendRecvItem{false, out, count, f, prev}},
                                s);
  }
  return Status(ErrorCode::kInvalidArgument, "unknown call");
}

}  // namespace

void releaseContractBuffers() { tBuffers.release(); }

std::string runContract(const ContractRank& me, ContractScenario scenario, ContractCall call,
                        std::size_t bytes, Watchdog& watchdog) {
  Communicator& a = *me.a;
  const int r = a.rank(), n = a.size();
  const std::size_t count = bytes / sizeof(float);
  const Shape sh = shapeOf(call, count, static_cast<std::size_t>(n));
  // Whatever happens, every rank meets the others at the end, as often as they
  // do (the meetings of a failed run included): nobody refills its buffers while
  // a peer may still read them, and a failure on one rank hangs none.
  struct MeetAtTheEnd {
    const ContractRank& me;
    ~MeetAtTheEnd() { me.hostBarrier(); }
  } meetAtTheEnd{me};
  ContractBuffers& b = tBuffers;
  Status st = b.reserve(std::max(sh.in, sh.out) * sizeof(float));
  if (!st.ok()) {
    if (scenario != ContractScenario::kOppositeOrder) me.hostBarrier();  // the one it skips
    return "device memory: " + st.toString();
  }
  char label[200];
  std::snprintf(label, sizeof(label), "rank %d: %s of %zu bytes (%s)", r, contractCallName(call),
                bytes, contractScenarioName(scenario));
  auto failed = [&](const char* step, const Status& s) {
    return std::string(label) + ": " + step + ": " + s.toString();
  };
  // Both streams, each whatever the other's result (the run goes on after a failure).
  auto synchronizeBoth = [&]() -> Status {
    Watchdog::Guard g(watchdog, std::string(label) + ", synchronize", Watchdog::kSyncLimit);
    Status sa = runtime::streamSynchronize(me.sa);
    Status sb = runtime::streamSynchronize(me.sb);
    return sa.ok() ? sb : sa;
  };
  prepare(call, r, n, count, b.inA, b.outA);
  std::string bad;
  if (scenario == ContractScenario::kOppositeOrder) {
    prepare(call, r, n, count, b.inB, b.outB);
    {
      Watchdog::Guard g(watchdog, std::string(label) + ", queuing on both communicators");
      const bool aFirst = r % 2 == 0;
      st = queue(aFirst ? a : *me.b, call, count, aFirst ? b.inA : b.inB,
                 aFirst ? b.outA : b.outB, aFirst ? me.sa : me.sb);
      if (st.ok()) {
        st = queue(aFirst ? *me.b : a, call, count, aFirst ? b.inB : b.inA,
                   aFirst ? b.outB : b.outA, aFirst ? me.sb : me.sa);
      }
    }
    if (!st.ok()) return failed("queue", st);
    st = synchronizeBoth();
    if (!st.ok()) return failed("synchronize", st);
    bad = check("communicator A's output", call, r, n, count, b.outA, sh.out);
    if (bad.empty()) bad = check("communicator B's output", call, r, n, count, b.outB, sh.out);
  } else {
    const bool behind = scenario == ContractScenario::kWorkBehind;
    const std::size_t outBytes = sh.out * sizeof(float);
    auto callAndWork = [&]() -> Status {
      Watchdog::Guard g(watchdog, std::string(label) + (behind ? ", the call or the work behind it"
                                                               : ", the call"));
      Status s = queue(a, call, count, b.inA, b.outA, me.sa);
      if (!behind || !s.ok()) return s;
      s = runtime::memcpyAsync(b.copyA, outBytes, b.outA, outBytes,
                               runtime::MemcpyKind::kDeviceToDevice, me.sa);
      if (s.ok()) s = runtime::memsetAsync(b.marker, 64, 0x5a, 64, me.sa);
      if (s.ok()) s = runtime::eventRecord(b.event, me.sa);
      if (s.ok()) s = runtime::streamWaitEvent(me.sb, b.event);
      // The second stream copies the first's copy once the event says it is there.
      if (s.ok()) {
        s = runtime::memcpyAsync(b.outB, outBytes, b.copyA, outBytes,
                                 runtime::MemcpyKind::kDeviceToDevice, me.sb);
      }
      return s;
    };
    if (behind) std::memset(b.marker, 0, 64);
    // Rank 0 queues first and then meets the others; they call after the meeting.
    if (r == 0) {
      st = callAndWork();
      me.hostBarrier();
    } else {
      me.hostBarrier();
      st = callAndWork();
    }
    if (!st.ok()) return failed("queue", st);
    st = synchronizeBoth();
    if (!st.ok()) return failed("synchronize", st);
    bad = check("the output", call, r, n, count, b.outA, sh.out);
    if (bad.empty() && behind) {
      bad = check("the copy queued behind the call", call, r, n, count, b.copyA, sh.out);
      if (bad.empty()) {
        bad = check("the other stream's copy after the event", call, r, n, count, b.outB, sh.out);
      }
      const auto* m = static_cast<const unsigned char*>(b.marker);
      for (int i = 0; i < 64 && bad.empty(); ++i) {
        if (m[i] != 0x5a) bad = "the memset queued behind the call did not run";
      }
    }
  }
  return bad.empty() ? "" : std::string(label) + ": " + bad;
}

}  // namespace cohort::testing

// One rank of the fault-injection tests, started by fault_test with its job in the
// environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, COHORT_*):
//   fault_worker loop BYTES      allreduce BYTES in place until an error
//   fault_worker mismatch        one allreduce; the last rank passes a larger count
//   fault_worker mismatch-small  the same with 400 bytes (164 elements on the last rank)
//   fault_worker mismatch-type   one small allreduce (400 bytes); the last rank
//                                passes int32 where the others pass float (same bytes)
//   fault_worker oom             a reduce-scatter from host memory (needs communicator
//                                scratch: fails on a rank with a tiny device)
//   fault_worker table PATH RANK join from a rank table, one allreduce
//   fault_worker skew            a rank of another Cohort version: joins the bootstrap
//                                with its versions bumped, nothing more
//   fault_worker shrink BYTES    allreduce BYTES in place until an error, then agree on
//                                the failed ranks, shrink, and check 100 allreduces of
//                                the survivors (FAULT_WORKER_ABORT_AT=N: this rank aborts
//                                and destroys its communicator after N iterations, and
//                                stays alive a while; FAULT_WORKER_PAUSE_AT=N: this rank
//                                makes no call for 6 s after N iterations). Prints the
//                                loop's error and a later call's.
// Prints "rank R: <what> FAILED code=N ...: <error>" and exits 4 (init) or 7 (an
// operation) on failure, "rank R: <mode> OK" and 0 on success.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cohort/communicator.h"
#include "cohort/version.h"
#include "common/error.h"
#include "transport/bootstrap.h"
#include "transport/handshake.h"
#include "transport/jobenv/job_env.h"
#include "transport/peer_info.h"

using namespace cohort;

namespace {

volatile sig_atomic_t gOwnHandlerRuns = 0;
void ownHandler(int) { gOwnHandlerRuns = gOwnHandlerRuns + 1; }

int envRank() {
  const char* r = std::getenv("RANK");
  return r == nullptr ? -1 : std::atoi(r);
}

// FAULT_WORKER_LINGER_MS keeps a failed rank (and its connections) up a while,
// as a rank that reports and waits to be stopped by its launcher: its peers then
// find the fault themselves instead of seeing this rank go away.
int failed(const char* what, const Status& s, int exitCode, int iterations = 0) {
  std::printf("rank %d: %s FAILED code=%d after %d iteration(s): %s\n", envRank(), what,
              static_cast<int>(s.code()), iterations, s.toString().c_str());
  std::fflush(stdout);
  if (const char* linger = std::getenv("FAULT_WORKER_LINGER_MS"))
    ::usleep(1000u * std::atoi(linger));
  return exitCode;
}

Status sync(Status s) { return s.ok() ? runtime::streamSynchronize(nullptr) : s; }

int loop(Communicator& comm, std::size_t bytes) {
  void* buf = nullptr;
  if (!runtime::deviceMalloc(&buf, bytes).ok()) return failed("deviceMalloc", lastError(), 3);
  std::memset(buf, 0, bytes);
  bool told = false;
  for (int i = 0;; ++i) {
    const Status s =
        sync(comm.allReduce(buf, buf, bytes / 4, DataType::kFloat32, ReduceOp::kSum, nullptr));
    if (!s.ok()) return failed("allreduce", s, 7, i);
    if (i == 0) std::printf("rank %d: looping\n", comm.rank());
    if (i == 20) std::printf("rank %d: 20 iterations\n", comm.rank());
    if (gOwnHandlerRuns > 0 && !told) {
      std::printf("rank %d: own SIGUSR1 handler ran\n", comm.rank());
      told = true;
    }
    std::fflush(stdout);
  }
}

// Rank `oldRank`'s input element i of check `k` after the shrink.
float shrunkInput(int oldRank, std::size_t i, int k) {
  return static_cast<float>((oldRank + 1) * 1000 + static_cast<int>(i % 101) + k);
}

int shrinkAfterFailure(std::unique_ptr<Communicator> comm, std::size_t bytes) {
  const int oldRank = comm->rank(), oldSize = comm->size();
  void* buf = nullptr;
  if (!runtime::deviceMalloc(&buf, bytes).ok()) return failed("deviceMalloc", lastError(), 3);
  std::memset(buf, 0, bytes);
  const char* abortAt = std::getenv("FAULT_WORKER_ABORT_AT");
  const char* pauseAt = std::getenv("FAULT_WORKER_PAUSE_AT");
  int i = 0;
  for (;; ++i) {
    if (abortAt != nullptr && i == std::atoi(abortAt)) {
      (void)Communicator::destroy(std::move(comm), true);
      std::printf("rank %d: aborted after %d iterations\n", oldRank, i);
      std::fflush(stdout);
      ::sleep(5);  // alive: the others must not need its process gone
      return 0;
    }
    if (pauseAt != nullptr && i == std::atoi(pauseAt)) {
      std::printf("rank %d: pausing\n", oldRank);
      std::fflush(stdout);
      ::sleep(6);
    }
    const Status s =
        sync(comm->allReduce(buf, buf, bytes / 4, DataType::kFloat32, ReduceOp::kSum, nullptr));
    if (!s.ok()) {
      std::printf("rank %d: loop error code=%d: %s\n", oldRank, static_cast<int>(s.code()),
                  s.message().c_str());
      break;
    }
    if (i == 0) std::printf("rank %d: looping\n", oldRank);
    std::fflush(stdout);
  }
  // The default stream keeps the failure (it stops on errors): a stream of its own.
  runtime::Stream* stream = nullptr;
  Status s = runtime::streamCreate(&stream);
  if (!s.ok()) return failed("streamCreate", s, 3);
  s = comm->allReduce(buf, buf, bytes / 4, DataType::kFloat32, ReduceOp::kSum, stream);
  if (s.ok()) s = runtime::streamSynchronize(stream);
  std::printf("rank %d: later call code=%d: %s\n", oldRank, static_cast<int>(s.code()),
              s.message().c_str());
  std::fflush(stdout);
  std::vector<int> lost;
  s = comm->failedRanks(&lost);
  if (!s.ok()) return failed("failedRanks", s, 7, i);
  std::unique_ptr<Communicator> shrunk;
  s = comm->shrink(&shrunk);
  if (!s.ok()) return failed("shrink", s, 7, i);
  std::string list;
  for (int r : lost) list += (list.empty() ? "" : ",") + std::to_string(r);
  std::printf("rank %d: shrunk: failed=[%s] rank=%d size=%d\n", oldRank, list.c_str(),
              shrunk->rank(), shrunk->size());
  std::fflush(stdout);
  (void)Communicator::destroy(std::move(comm), true);
  // Every element of 100 allreduces of an odd count, against the survivors' inputs.
  constexpr std::size_t kCount = 1001;
  std::vector<float> host(kCount);
  for (int k = 0; k < 100; ++k) {
    for (std::size_t e = 0; e < kCount; ++e) host[e] = shrunkInput(oldRank, e, k);
    std::memcpy(buf, host.data(), kCount * sizeof(float));
    s = shrunk->allReduce(buf, buf, kCount, DataType::kFloat32, ReduceOp::kSum, stream);
    if (s.ok()) s = runtime::streamSynchronize(stream);
    if (!s.ok()) return failed("allreduce after the shrink", s, 7, k);
    const auto* got = static_cast<const float*>(buf);
    for (std::size_t e = 0; e < kCount; ++e) {
      float want = 0.0f;
      for (int q = 0; q < oldSize; ++q) {
        if (std::find(lost.begin(), lost.end(), q) == lost.end()) want += shrunkInput(q, e, k);
      }
      if (got[e] != want) {
        return failed("check after the shrink",
                      makeError(ErrorCode::kInternal, "allreduce {} element {}: {}, want {}", k,
                                e, got[e], want),
                      8, k);
      }
    }
  }
  std::printf("rank %d: after shrink: 100 allreduces OK on %d ranks\n", oldRank, shrunk->size());
  std::fflush(stdout);
  return 0;
}

// The buffer holds count + kGuard elements: nothing may change, neither the data
// (the check comes before any data moves into it) nor the guard after it.
// `small`: 100 elements (the first round travels with the argument check);
// `sameBytes`: the last rank differs in type only, so that its messages have
// the sizes the others expect.
int mismatch(Communicator& comm, bool small, bool sameBytes) {
  const bool odd = comm.rank() == comm.size() - 1;
  const std::size_t kCount = small ? 100 : 1 << 20, kExtra = sameBytes ? 0 : small ? 64 : 256,
                    kGuard = 1024;
  const std::size_t count = odd ? kCount + kExtra : kCount;
  const DataType type = odd && sameBytes ? DataType::kInt32 : DataType::kFloat32;
  const std::size_t total = kCount + kExtra + kGuard;
  void* buf = nullptr;
  if (!runtime::deviceMalloc(&buf, total * 4).ok()) return failed("deviceMalloc", lastError(), 3);
  std::memset(buf, 0x5A, total * 4);
  const Status s = sync(comm.allReduce(buf, buf, count, type, ReduceOp::kSum, nullptr));
  const auto* bytes = static_cast<const unsigned char*>(buf);
  bool untouched = true;
  for (std::size_t i = 0; i < total * 4; ++i) untouched = untouched && bytes[i] == 0x5A;
  std::printf("rank %d: buffer and guard %s\n", comm.rank(), untouched ? "untouched" : "WRITTEN");
  if (!s.ok()) return failed("allreduce", s, 7);
  std::printf("rank %d: mismatch OK (no error?)\n", comm.rank());
  return 0;
}

int oom(Communicator& comm) {
  constexpr std::size_t kRecvCount = 1 << 20;
  std::vector<float> in(kRecvCount * static_cast<std::size_t>(comm.size()), 1.0f);
  std::vector<float> out(kRecvCount, 0.0f);
  const Status s = sync(comm.reduceScatter(in.data(), out.data(), kRecvCount, DataType::kFloat32,
                                           ReduceOp::kSum, nullptr));
  if (!s.ok()) return failed("reducescatter", s, 7);
  std::printf("rank %d: oom OK (%s)\n", comm.rank(), comm.lastChoice().c_str());
  return 0;
}

int once(Communicator& comm) {
  std::vector<float> data(1024, 1.0f);
  const Status s = sync(comm.allReduce(data.data(), data.data(), data.size(), DataType::kFloat32,
                                       ReduceOp::kSum, nullptr));
  if (!s.ok()) return failed("allreduce", s, 7);
  std::printf("rank %d: table OK\n", comm.rank());
  return 0;
}

// What another build would publish: the same identity, other versions.
int skew() {
  transport::JobEnvironment job;
  Status s = transport::detectJobEnvironment(&job);
  if (!s.ok()) return failed("job environment", s, 4);
  const Deadline deadline = Deadline::afterMs(20000);
  std::shared_ptr<transport::Store> store;
  transport::JobToken token;
  std::shared_ptr<transport::TcpStoreServer> server;
  s = transport::connectJobStore(job, deadline, &store, &token, &server);
  if (!s.ok()) return failed("store", s, 4);
  transport::PeerInfo self;
  self.rank = job.rank;
  self.hostId = transport::localHostId();
  self.hostname = "skewed";
  self.pid = static_cast<std::int32_t>(getpid());
  self.device = self.physicalDevice = job.rank;
  self.address = "127.0.0.1";
  self.libraryVersion =
      COHORT_VERSION_MAJOR * 10000 + (COHORT_VERSION_MINOR + 1) * 100 + COHORT_VERSION_PATCH;
  self.protocolVersion = COHORT_PROTOCOL_VERSION + 1;
  // The communicator's bootstrap: prefix "env" (initFromEnvironment), first round.
  transport::Bootstrap boot(std::make_shared<transport::PrefixStore>(store, "env"), job.rank,
                            job.size);
  std::vector<transport::Bytes> blobs;
  s = boot.allgather(self.encode(), &blobs, deadline);
  if (!s.ok()) return failed("bootstrap", s, 4);
  std::printf("rank %d: skewed rank joined as Cohort %s (protocol %u)\n", job.rank,
              transport::libraryVersionString(self.libraryVersion).c_str(), self.protocolVersion);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "skew") return skew();
  // An application's own SIGUSR1 handler: the communicator's report must chain to it.
  ::signal(SIGUSR1, ownHandler);
  std::unique_ptr<Communicator> comm;
  const Status s = mode == "table" && argc == 4
                       ? Communicator::initFromRankTable(argv[2], std::atoi(argv[3]), &comm)
                       : Communicator::initFromEnvironment(&comm);
  if (!s.ok()) return failed("init", s, 4);
  std::printf("rank %d: init OK\n", comm->rank());
  std::fflush(stdout);
  if (mode == "loop" && argc == 3) return loop(*comm, std::strtoull(argv[2], nullptr, 10));
  if (mode == "mismatch") return mismatch(*comm, false, false);
  if (mode == "mismatch-small") return mismatch(*comm, true, false);
  if (mode == "mismatch-type") return mismatch(*comm, true, true);
  if (mode == "oom") return oom(*comm);
  if (mode == "table") return once(*comm);
  if (mode == "shrink" && argc == 3) {
    return shrinkAfterFailure(std::move(comm), std::strtoull(argv[2], nullptr, 10));
  }
  std::printf(
      "usage: fault_worker loop BYTES | mismatch | mismatch-small | mismatch-type | oom | "
      "table PATH RANK | skew | shrink BYTES\n");
  return 2;
}

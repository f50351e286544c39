// One rank of the multi-process tests, started by mp_test with the job in its
// environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, COHORT_TRANSPORT).
//   mp_worker check   run a subset of the collective matrix; exit 0 when all right
//   mp_worker loop    allreduce 64 MiB until an error; print it and exit 7
// Prints "rank R: ..." lines; the parent checks exit codes and messages.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cohort/communicator.h"
#include "collective/expect.h"

using namespace cohort;

namespace {

int fail(int rank, const std::string& what, const Status& s) {
  std::printf("rank %d: %s: %s\n", rank, what.c_str(), s.toString().c_str());
  std::fflush(stdout);
  return 1;
}

int check(Communicator& comm) {
  const int r = comm.rank(), n = comm.size();
  runtime::Stream* s = nullptr;
  if (!runtime::streamCreate(&s).ok()) return 2;
  for (DataType type : {DataType::kFloat32, DataType::kBFloat16, DataType::kInt32, DataType::kInt8}) {
    for (std::size_t count : {1u, 7u, 1023u, (1u << 20) + 3}) {
      const std::size_t e = dataTypeSize(type);
      void *in = nullptr, *out = nullptr;
      if (!runtime::deviceMalloc(&in, count * e * n).ok() || !runtime::deviceMalloc(&out, count * e * n).ok()) return 3;
      for (std::size_t i = 0; i < count; ++i) testing::encode(type, testing::inputValue(ReduceOp::kSum, r, i), static_cast<char*>(in) + i * e);
      Status st = comm.allReduce(in, out, count, type, ReduceOp::kSum, s);
      if (st.ok()) st = runtime::streamSynchronize(s);
      if (!st.ok()) return fail(r, "allreduce", st);
      std::string bad = testing::compare(type, out, count, [&](std::size_t i) { return testing::expectedReduce(ReduceOp::kSum, n, i); });
      if (!bad.empty()) return fail(r, "allreduce " + std::string(dataTypeName(type)) + " " + std::to_string(count) + ": " + bad, Status());
      st = comm.allGather(in, out, count, type, s);
      if (st.ok()) st = runtime::streamSynchronize(s);
      if (!st.ok()) return fail(r, "allgather", st);
      bad = testing::compare(type, out, count * n, [&](std::size_t i) { return testing::inputValue(ReduceOp::kSum, static_cast<int>(i / count), i % count); });
      if (!bad.empty()) return fail(r, "allgather: " + bad, Status());
      if (r == 0) std::memcpy(out, in, count * e);
      st = comm.broadcast(out, count, type, 0, s);
      if (st.ok()) st = runtime::streamSynchronize(s);
      if (!st.ok()) return fail(r, "broadcast", st);
      bad = testing::compare(type, out, count, [&](std::size_t i) { return testing::inputValue(ReduceOp::kSum, 0, i); });
      if (!bad.empty()) return fail(r, "broadcast: " + bad, Status());
      (void)runtime::deviceFree(in);
      (void)runtime::deviceFree(out);
    }
  }
  std::printf("rank %d: check OK (%s)\n", r, comm.lastChoice().c_str());
  return 0;
}

int loop(Communicator& comm) {
  const std::size_t count = (64u << 20) / 4;
  void* buf = nullptr;
  if (!runtime::deviceMalloc(&buf, count * 4).ok()) return 3;
  std::memset(buf, 0, count * 4);
  std::printf("rank %d: looping\n", comm.rank());
  std::fflush(stdout);
  for (int i = 0;; ++i) {
    Status st = comm.allReduce(buf, buf, count, DataType::kFloat32, ReduceOp::kSum, nullptr);
    if (st.ok()) st = runtime::streamSynchronize(nullptr);
    if (!st.ok()) {
      std::printf("rank %d: error after %d iterations: %s\n", comm.rank(), i, st.toString().c_str());
      std::fflush(stdout);
      return 7;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "check";
  std::unique_ptr<Communicator> comm;
  // "table PATH RANK": the job is described by a rank table instead.
  Status st = mode == "table" && argc == 4
                  ? Communicator::initFromRankTable(argv[2], std::atoi(argv[3]), &comm)
                  : Communicator::initFromEnvironment(&comm);
  if (!st.ok()) {
    std::printf("init failed: %s\n", st.toString().c_str());
    return 4;
  }
  return mode == "loop" ? loop(*comm) : check(*comm);
}

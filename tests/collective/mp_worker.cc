// One rank of the multi-process tests, started by mp_test with the job in its
// environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, COHORT_TRANSPORT).
//   mp_worker check   run a subset of the collective matrix; exit 0 when all right
//   mp_worker loop    allreduce 64 MiB until an error; print it and exit 7
//   mp_worker hier    allreduce, allgather, reducescatter, broadcast and reduce (every
//                     root) over ranks that COHORT_HOST_ID puts on several "nodes";
//                     HIER_EXPECT lists the collectives that must run hierarchical
//   mp_worker posted  small collectives queued without a synchronization in
//                     between: runs of calls (some in place), into separate outputs, chained in place, read by
//                     a kernel on the stream, by another stream through an
//                     event, as a large call's input, completed by polling the
//                     stream, and pending when the communicator is destroyed
//   mp_worker postfail POSTFAIL=mismatch|crossed|dead: rank 1 posts a call the
//                     others do not make (another count; a large call instead),
//                     or exits before the call; every other rank must fail
// Prints "rank R: ..." lines; the parent checks exit codes and messages.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
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

// The large count of `check`: under a sanitizer 256 Ki + 3 elements (still pieces and
// the large-message algorithms), since 1 Mi + 3 on 2-4 processes took 120 s of the
// AddressSanitizer suite per transport.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr std::size_t kLargeCount = (1u << 18) + 3;
#else
constexpr std::size_t kLargeCount = (1u << 20) + 3;
#endif

int check(Communicator& comm) {
  const int r = comm.rank(), n = comm.size();
  runtime::Stream* s = nullptr;
  if (!runtime::streamCreate(&s).ok()) return 2;
  for (DataType type : {DataType::kFloat32, DataType::kBFloat16, DataType::kInt32, DataType::kInt8}) {
    for (std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{1023}, kLargeCount}) {
      // The large count once per kind of element (float, integer): the threads'
      // matrix covers every type at that size; processes add the transports.
      if (count > 1023 && type != DataType::kFloat32 && type != DataType::kInt32) continue;
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
  // setAlgorithm switches the algorithm of the calls after it: the same small
  // allreduce, twice as chosen, then forced onto the ring.
  const std::string chosen = comm.lastChoice();
  void *in = nullptr, *out = nullptr;
  constexpr std::size_t kCount = 255;
  if (!runtime::deviceMalloc(&in, kCount * 4).ok() || !runtime::deviceMalloc(&out, kCount * 4).ok()) return 3;
  for (const char* spec : {"", "", "allreduce=ring"}) {
    Status st = comm.setAlgorithm(spec);
    for (std::size_t i = 0; i < kCount; ++i) testing::encode(DataType::kFloat32, testing::inputValue(ReduceOp::kSum, r, i), static_cast<char*>(in) + i * 4);
    if (st.ok()) st = comm.allReduce(in, out, kCount, DataType::kFloat32, ReduceOp::kSum, s);
    if (st.ok()) st = runtime::streamSynchronize(s);
    if (!st.ok()) return fail(r, std::string("allreduce after setAlgorithm('") + spec + "')", st);
    const std::string bad = testing::compare(DataType::kFloat32, out, kCount, [&](std::size_t i) { return testing::expectedReduce(ReduceOp::kSum, n, i); });
    if (!bad.empty()) return fail(r, std::string("allreduce after setAlgorithm('") + spec + "'): " + bad, Status());
    if (*spec != '\0' && comm.lastChoice().find("allreduce=ring") != 0) {
      return fail(r, std::string("after setAlgorithm('") + spec + "') the call ran " + comm.lastChoice(), Status());
    }
  }
  (void)comm.setAlgorithm("");
  (void)runtime::deviceFree(in);
  (void)runtime::deviceFree(out);
  std::printf("rank %d: check OK (%s)\n", r, chosen.c_str());
  return 0;
}

// One collective of the hierarchical check: `run` enqueues it, then every element
// of `out` (`outCount` of `type`) is compared with want(i).
template <typename Run, typename Want>
std::string checkOne(Communicator& comm, runtime::Stream* s, const std::string& name,
                     DataType type, const void* out, std::size_t outCount, Run run, Want want,
                     double tolerance = 0) {
  Status st = run();
  if (st.ok()) st = runtime::streamSynchronize(s);
  if (!st.ok()) return name + ": " + st.toString();
  const char* expect = std::getenv("HIER_EXPECT");
  const std::string coll = name.substr(0, name.find(' '));
  if (expect != nullptr && ("," + std::string(expect) + ",").find("," + coll + ",") != std::string::npos &&
      comm.lastChoice().find("=hierarchical") == std::string::npos) {
    return name + ": expected hierarchical, ran " + comm.lastChoice();
  }
  const std::string bad = testing::compare(type, out, outCount, want, tolerance);
  return bad.empty() ? "" : name + ": " + bad;
}

int hier(Communicator& comm) {
  const int r = comm.rank(), n = comm.size();
  runtime::Stream* s = nullptr;
  if (!runtime::streamCreate(&s).ok()) return 2;
  using testing::expectedReduce;
  using testing::inputValue;
  for (DataType type : {DataType::kFloat32, DataType::kBFloat16, DataType::kInt32}) {
    for (std::size_t count : {1u, 7u, 1023u, 100003u}) {
      const std::size_t e = dataTypeSize(type);
      void *in = nullptr, *out = nullptr;
      if (!runtime::deviceMalloc(&in, count * e * n).ok() || !runtime::deviceMalloc(&out, count * e * n).ok()) return 3;
      auto fill = [&](ReduceOp op) {
        for (std::size_t i = 0; i < count * n; ++i) testing::encode(type, inputValue(op, r, i), static_cast<char*>(in) + i * e);
      };
      const std::string tag = std::string(dataTypeName(type)) + " " + std::to_string(count);
      std::vector<std::string> errors;
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax}) {
        fill(op);
        errors.push_back(checkOne(comm, s, "allreduce " + tag, type, out, count,
            [&] { return comm.allReduce(in, out, count, type, op, s); },
            [&](std::size_t i) { return expectedReduce(op, n, i); }));
        errors.push_back(checkOne(comm, s, "reducescatter " + tag, type, out, count,
            [&] { return comm.reduceScatter(in, out, count, type, op, s); },
            [&](std::size_t i) { return expectedReduce(op, n, r * count + i); }));
        for (int root = 0; root < n; ++root) {
          std::memset(out, 0, count * e);
          errors.push_back(checkOne(comm, s, "reduce " + tag + " root " + std::to_string(root), type,
              out, r == root ? count : 0,
              [&] { return comm.reduce(in, out, count, type, op, root, s); },
              [&](std::size_t i) { return expectedReduce(op, n, i); }));
        }
      }
      if (type == DataType::kFloat32) {
        fill(ReduceOp::kSum);
        errors.push_back(checkOne(comm, s, "reducescatter avg " + tag, type, out, count,
            [&] { return comm.reduceScatter(in, out, count, type, ReduceOp::kAvg, s); },
            [&](std::size_t i) { return expectedReduce(ReduceOp::kAvg, n, r * count + i); }, 1e-6));
      }
      fill(ReduceOp::kSum);
      errors.push_back(checkOne(comm, s, "allgather " + tag, type, out, count * n,
          [&] { return comm.allGather(in, out, count, type, s); },
          [&](std::size_t i) { return inputValue(ReduceOp::kSum, static_cast<int>(i / count), i % count); }));
      for (int root = 0; root < n; ++root) {
        if (r == root) std::memcpy(out, in, count * e);
        errors.push_back(checkOne(comm, s, "broadcast " + tag + " root " + std::to_string(root), type,
            out, count, [&] { return comm.broadcast(out, count, type, root, s); },
            [&](std::size_t i) { return inputValue(ReduceOp::kSum, root, i); }));
      }
      (void)runtime::deviceFree(in);
      (void)runtime::deviceFree(out);
      for (const auto& err : errors) {
        if (!err.empty()) return fail(r, err, Status());
      }
    }
  }
  std::printf("rank %d: hier OK (%s)\n", r, comm.lastChoice().c_str());
  return 0;
}

// Every element of `count` outputs of posted calls, checked once the stream is
// synchronized (or polled idle).
int posted(std::unique_ptr<Communicator> comm) {
  const int r = comm->rank(), n = comm->size();
  using testing::expectedReduce;
  using testing::inputValue;
  runtime::Stream *s = nullptr, *other = nullptr;
  runtime::Event* ev = nullptr;
  if (!runtime::streamCreate(&s).ok() || !runtime::streamCreate(&other).ok() ||
      !runtime::eventCreate(&ev).ok()) {
    return 2;
  }
  // Runs of 20 calls (more than a ring of posted calls) into 20 outputs, one
  // synchronization per run; every type, odd counts, the four posted collectives.
  constexpr int kRun = 20;
  for (DataType type : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16, DataType::kFloat64,
                        DataType::kInt8, DataType::kUint8, DataType::kInt16, DataType::kUint16,
                        DataType::kInt32, DataType::kUint32, DataType::kInt64, DataType::kUint64}) {
    for (std::size_t count : {1u, 7u, 61u}) {
      const std::size_t e = dataTypeSize(type);
      const std::size_t bytes = count * e * n;
      std::vector<void*> ins(kRun), outs(kRun);
      for (int k = 0; k < kRun; ++k) {
        if (!runtime::deviceMalloc(&ins[k], bytes).ok() || !runtime::deviceMalloc(&outs[k], bytes).ok()) return 3;
        for (std::size_t i = 0; i < count * n; ++i) {
          testing::encode(type, inputValue(ReduceOp::kSum, r, i + k), static_cast<char*>(ins[k]) + i * e);
        }
        std::memset(outs[k], 0xff, bytes);
      }
      const ReduceOp ops[] = {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin};
      // Kinds 4 and 5 in place (NCCL's layout): reduce-scatter into the input's
      // block of this rank, allgather from the output's block.
      constexpr int kKinds = 6;
      auto at = [&](void* p) { return static_cast<char*>(p) + r * count * e; };
      for (int k = 0; k < kRun; ++k) {
        if (k % kKinds == 5) std::memcpy(at(outs[k]), ins[k], count * e);
        Status st;
        switch (k % kKinds) {
          case 0: st = comm->allReduce(ins[k], outs[k], count, type, ops[k % 3], s); break;
          case 1: st = comm->allGather(ins[k], outs[k], count, type, s); break;
          case 2: st = comm->reduceScatter(ins[k], outs[k], count, type, ops[k % 3], s); break;
          case 3: st = comm->allToAll(ins[k], outs[k], count, type, s); break;
          case 4: st = comm->reduceScatter(ins[k], at(ins[k]), count, type, ops[k % 3], s); break;
          default: st = comm->allGather(at(outs[k]), outs[k], count, type, s); break;
        }
        if (!st.ok()) return fail(r, "posted call " + std::to_string(k), st);
      }
      Status st = runtime::streamSynchronize(s);
      if (!st.ok()) return fail(r, "synchronize", st);
      for (int k = 0; k < kRun; ++k) {
        // The inputs were inputValue(sum, rank, i + k); the expectations shift alike.
        const ReduceOp op = ops[k % 3];
        auto reduced = [&](std::size_t i) {
          // Sum/max/min over ranks of inputValue(sum, rank, i): computed here.
          double v = inputValue(ReduceOp::kSum, 0, i);
          for (int q = 1; q < n; ++q) {
            const double x = inputValue(ReduceOp::kSum, q, i);
            v = op == ReduceOp::kSum ? v + x : op == ReduceOp::kMax ? std::max(v, x) : std::min(v, x);
          }
          return v;
        };
        std::string bad;
        auto gathered = [&](std::size_t i) {
          return inputValue(ReduceOp::kSum, static_cast<int>(i / count), i % count + k);
        };
        auto exchanged = [&](std::size_t i) {
          return inputValue(ReduceOp::kSum, static_cast<int>(i / count), r * count + i % count + k);
        };
        auto scattered = [&](std::size_t i) { return reduced(r * count + i + k); };
        switch (k % kKinds) {
          case 0: bad = testing::compare(type, outs[k], count, [&](std::size_t i) { return reduced(i + k); }); break;
          case 1: bad = testing::compare(type, outs[k], count * n, gathered); break;
          case 2: bad = testing::compare(type, outs[k], count, scattered); break;
          case 3: bad = testing::compare(type, outs[k], count * n, exchanged); break;
          case 4: bad = testing::compare(type, at(ins[k]), count, scattered); break;
          default: bad = testing::compare(type, outs[k], count * n, gathered); break;
        }
        if (!bad.empty()) {
          return fail(r, std::string(dataTypeName(type)) + " x" + std::to_string(count) + " call " +
                             std::to_string(k) + ": " + bad, Status());
        }
      }
      for (int k = 0; k < kRun; ++k) {
        (void)runtime::deviceFree(ins[k]);
        (void)runtime::deviceFree(outs[k]);
      }
    }
  }
  // In place, chained: each call's input is the last one's output.
  constexpr std::size_t kCount = 33;
  void* buf = nullptr;
  void* big = nullptr;
  constexpr std::size_t kBig = 1 << 18;  // a large call: not posted
  if (!runtime::deviceMalloc(&buf, kCount * 8).ok() || !runtime::deviceMalloc(&big, kBig * 8).ok()) return 3;
  auto* v = static_cast<std::int64_t*>(buf);
  for (std::size_t i = 0; i < kCount; ++i) v[i] = static_cast<std::int64_t>(i + 1);
  for (int k = 0; k < 12; ++k) {
    Status st = comm->allReduce(buf, buf, kCount, DataType::kInt64, ReduceOp::kSum, s);
    if (!st.ok()) return fail(r, "chained allreduce", st);
  }
  // A kernel queued behind them reads the result on the stream.
  std::vector<std::int64_t> seen(kCount, -1);
  Status st = runtime::launchKernel(s, [&](runtime::Stream*) {
    std::memcpy(seen.data(), buf, kCount * 8);
    return Status::Ok();
  });
  if (st.ok()) st = runtime::streamSynchronize(s);
  if (!st.ok()) return fail(r, "kernel after posted calls", st);
  std::int64_t factor = 1;
  for (int k = 0; k < 12; ++k) factor *= n;
  for (std::size_t i = 0; i < kCount; ++i) {
    if (seen[i] != static_cast<std::int64_t>(i + 1) * factor) {
      std::printf("rank %d: chained element %zu is %lld, expected %lld\n", r, i,
                  static_cast<long long>(seen[i]), static_cast<long long>((i + 1) * factor));
      return 5;
    }
  }
  // Another stream waits for an event recorded after a posted call.
  for (std::size_t i = 0; i < kCount; ++i) v[i] = r + 1;
  st = comm->allReduce(buf, buf, kCount, DataType::kInt64, ReduceOp::kSum, s);
  if (st.ok()) st = runtime::eventRecord(ev, s);
  if (st.ok()) st = runtime::streamWaitEvent(other, ev);
  if (st.ok()) st = runtime::launchKernel(other, [&](runtime::Stream*) {
    std::memcpy(seen.data(), buf, kCount * 8);
    return Status::Ok();
  });
  if (st.ok()) st = runtime::streamSynchronize(other);
  if (!st.ok()) return fail(r, "event after a posted call", st);
  if (seen[kCount - 1] != n * (n + 1) / 2) {
    std::printf("rank %d: through the event: %lld, expected %d\n", r,
                static_cast<long long>(seen[kCount - 1]), n * (n + 1) / 2);
    return 5;
  }
  // A large call reads a posted call's output.
  for (std::size_t i = 0; i < kCount; ++i) v[i] = r + 1;
  st = comm->allReduce(buf, big, kCount, DataType::kInt64, ReduceOp::kSum, s);
  if (st.ok()) st = comm->allReduce(big, big, kBig, DataType::kInt64, ReduceOp::kSum, s);
  if (st.ok()) st = runtime::streamSynchronize(s);
  if (!st.ok()) return fail(r, "large call after a posted one", st);
  if (static_cast<std::int64_t*>(big)[kCount - 1] != n * n * (n + 1) / 2) {
    std::printf("rank %d: large call read %lld, expected %d\n", r,
                static_cast<long long>(static_cast<std::int64_t*>(big)[kCount - 1]), n * n * (n + 1) / 2);
    return 5;
  }
  // Polling the stream completes posted calls too.
  for (std::size_t i = 0; i < kCount; ++i) v[i] = r + 1;
  st = comm->allReduce(buf, buf, kCount, DataType::kInt64, ReduceOp::kSum, s);
  if (!st.ok()) return fail(r, "allreduce before polling", st);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((st = runtime::streamQuery(s)).code() == ErrorCode::kNotReady &&
         std::chrono::steady_clock::now() < until) {
  }
  if (!st.ok()) return fail(r, "polling the stream", st);
  if (v[0] != n * (n + 1) / 2) {
    std::printf("rank %d: after polling: %lld\n", r, static_cast<long long>(v[0]));
    return 5;
  }
  // Destroyed with a posted call pending: the call completes first.
  for (std::size_t i = 0; i < kCount; ++i) v[i] = r + 1;
  st = comm->allReduce(buf, buf, kCount, DataType::kInt64, ReduceOp::kSum, s);
  if (!st.ok()) return fail(r, "allreduce before destroy", st);
  (void)Communicator::destroy(std::move(comm), false);
  if (v[0] != n * (n + 1) / 2) {
    std::printf("rank %d: after destroy: %lld\n", r, static_cast<long long>(v[0]));
    return 5;
  }
  std::printf("rank %d: posted OK\n", r);
  return 0;
}

int postFail(Communicator& comm) {
  const int r = comm.rank();
  const std::string kind = std::getenv("POSTFAIL") != nullptr ? std::getenv("POSTFAIL") : "";
  runtime::Stream* s = nullptr;
  void* buf = nullptr;
  if (!runtime::streamCreate(&s).ok() || !runtime::deviceMalloc(&buf, 4 << 20).ok()) return 2;
  // A few good calls first: the failure comes with earlier calls in the ring.
  for (int k = 0; k < 3; ++k) {
    Status st = comm.allReduce(buf, buf, 16, DataType::kFloat32, ReduceOp::kSum, s);
    if (!st.ok()) return fail(r, "first calls", st);
  }
  if (kind == "dead" && r == 1) {
    std::printf("rank %d: exiting\n", r);
    std::fflush(stdout);
    std::_Exit(0);
  }
  std::size_t count = 16;
  if (r == 1 && kind == "mismatch") count = 17;
  if (r != 1 && kind == "crossed") count = 1 << 20;  // a large call: rank 1's is posted
  Status st = comm.allReduce(buf, buf, count, DataType::kFloat32, ReduceOp::kSum, s);
  if (st.ok()) st = runtime::streamSynchronize(s);
  std::printf("rank %d: %s\n", r, st.ok() ? "no error" : st.toString().c_str());
  std::fflush(stdout);
  return st.ok() ? 1 : 7;
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
  if (mode == "hier") return hier(*comm);
  if (mode == "posted") return posted(std::move(comm));
  if (mode == "postfail") return postFail(*comm);
  return mode == "loop" ? loop(*comm) : check(*comm);
}

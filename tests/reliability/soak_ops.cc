#include "reliability/soak_ops.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "collective/datatype.h"
#include "collective/expect.h"

namespace cohort::testing {

namespace {

const char* kKindNames[] = {"allreduce", "allgather", "reducescatter", "broadcast", "reduce",
                            "gather",    "scatter",   "alltoall",      "barrier",   "sendrecv"};

// The algorithms that can run each kind ("" = the built-in choice).
std::vector<const char*> algorithmsFor(SoakKind kind) {
  switch (kind) {
    case SoakKind::kAllReduce:
      return {"", "mesh", "ring", "hd"};
    case SoakKind::kAllGather:
      return {"", "mesh", "ring", "linear"};
    case SoakKind::kReduceScatter:
      return {"", "mesh", "ring", "linear"};
    case SoakKind::kBroadcast:
      return {"", "mesh", "tree", "chain", "linear"};
    case SoakKind::kReduce:
      return {"", "mesh", "tree"};
    case SoakKind::kGather:
    case SoakKind::kScatter:
      return {"", "mesh", "linear"};
    case SoakKind::kAllToAll:
      return {"", "mesh", "pairwise", "linear"};
    case SoakKind::kBarrier:
      return {"", "mesh", "dissemination"};
    case SoakKind::kSendRecv:
      return {""};
  }
  return {""};
}

// Device memory for one operation (at least one byte), freed on scope exit.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) {
    ok_ = runtime::deviceMalloc(&p_, std::max<std::size_t>(bytes, 1)).ok();
  }
  ~DeviceBuffer() {
    if (p_ != nullptr) (void)runtime::deviceFree(p_);
  }
  bool ok() const { return ok_; }
  char* get() const { return static_cast<char*>(p_); }

 private:
  void* p_ = nullptr;
  bool ok_ = false;
};

// One rank's view of one operation.
struct Run {
  const SoakOp& op;
  Communicator& comm;
  runtime::Stream* stream;
  int r, n;
  std::size_t e, count, all;  // element size, count, count * n
  const SoakHooks& hooks;

  double value(int rank, std::size_t i) const { return inputValue(op.op, rank, i); }
  void fill(char* at, std::size_t elems, int rank) const {
    for (std::size_t i = 0; i < elems; ++i) encode(op.type, value(rank, i), at + i * e);
  }
  double tolerance() const {
    if (op.op != ReduceOp::kAvg) return 0;
    return op.type == DataType::kFloat16 || op.type == DataType::kBFloat16 ? 1e-2 : 1e-6;
  }
  void issuing() const {
    if (hooks.beforeIssue) hooks.beforeIssue();
  }
  std::string finish(Status s) const {
    if (s.ok() && hooks.beforeSync) hooks.beforeSync();
    if (s.ok()) s = runtime::streamSynchronize(stream);
    if (hooks.afterSync) hooks.afterSync();
    return s.ok() ? "" : s.toString();
  }
};

std::string reduction(const Run& x) {
  const bool scatter = x.op.kind == SoakKind::kReduceScatter;
  DeviceBuffer in(x.all * x.e), out(x.all * x.e);
  if (!in.ok() || !out.ok()) return "device memory";
  const std::size_t inElems = scatter ? x.all : x.count;
  char* src = x.op.inPlace ? out.get() : in.get();
  x.fill(src, inElems, x.r);
  char* dst = scatter && x.op.inPlace ? out.get() + x.r * x.count * x.e : out.get();
  x.issuing();
  Status s;
  if (x.op.kind == SoakKind::kAllReduce) {
    s = x.comm.allReduce(src, dst, x.count, x.op.type, x.op.op, x.stream);
  } else if (scatter) {
    s = x.comm.reduceScatter(src, dst, x.count, x.op.type, x.op.op, x.stream);
  } else {
    s = x.comm.reduce(src, dst, x.count, x.op.type, x.op.op, x.op.root, x.stream);
  }
  std::string bad = x.finish(s);
  if (!bad.empty() || (x.op.kind == SoakKind::kReduce && x.r != x.op.root)) return bad;
  const std::size_t first = scatter ? static_cast<std::size_t>(x.r) * x.count : 0;
  return compare(
      x.op.type, dst, x.count,
      [&](std::size_t i) { return expectedReduce(x.op.op, x.n, first + i); }, x.tolerance());
}

std::string gathering(const Run& x) {
  const bool a2a = x.op.kind == SoakKind::kAllToAll;
  DeviceBuffer in(x.all * x.e), out(x.all * x.e);
  if (!in.ok() || !out.ok()) return "device memory";
  const bool inPlace = x.op.inPlace && x.op.kind == SoakKind::kAllGather;
  char* src = inPlace ? out.get() + x.r * x.count * x.e : in.get();
  x.fill(src, a2a ? x.all : x.count, x.r);
  x.issuing();
  Status s = x.op.kind == SoakKind::kAllGather
                 ? x.comm.allGather(src, out.get(), x.count, x.op.type, x.stream)
             : a2a ? x.comm.allToAll(src, out.get(), x.count, x.op.type, x.stream)
                   : x.comm.gather(src, out.get(), x.count, x.op.type, x.op.root, x.stream);
  std::string bad = x.finish(s);
  if (!bad.empty() || x.count == 0 || (x.op.kind == SoakKind::kGather && x.r != x.op.root)) {
    return bad;
  }
  return compare(x.op.type, out.get(), x.all, [&](std::size_t i) {
    const int from = static_cast<int>(i / x.count);
    const std::size_t at =
        a2a ? static_cast<std::size_t>(x.r) * x.count + i % x.count : i % x.count;
    return x.value(from, at);
  });
}

std::string distribution(const Run& x) {
  const bool bcast = x.op.kind == SoakKind::kBroadcast;
  DeviceBuffer in(x.all * x.e), out(x.count * x.e);
  if (!in.ok() || !out.ok()) return "device memory";
  const int root = x.op.root;
  if (x.r == root) x.fill(bcast ? out.get() : in.get(), bcast ? x.count : x.all, root);
  x.issuing();
  Status s = bcast ? x.comm.broadcast(out.get(), x.count, x.op.type, root, x.stream)
                   : x.comm.scatter(in.get(), out.get(), x.count, x.op.type, root, x.stream);
  std::string bad = x.finish(s);
  if (!bad.empty()) return bad;
  const std::size_t first = bcast ? 0 : static_cast<std::size_t>(x.r) * x.count;
  return compare(x.op.type, out.get(), x.count,
                 [&](std::size_t i) { return x.value(root, first + i); });
}

// A ring exchange: send to the next rank, receive from the previous, in a group.
std::string exchange(const Run& x) {
  DeviceBuffer in(x.count * x.e), out(x.count * x.e);
  if (!in.ok() || !out.ok()) return "device memory";
  x.fill(in.get(), x.count, x.r);
  const int next = (x.r + 1) % x.n, prev = (x.r + x.n - 1) % x.n;
  x.issuing();
  Status s = Communicator::groupStart();
  if (s.ok()) s = x.comm.send(in.get(), x.count, x.op.type, next, x.stream);
  if (s.ok()) s = x.comm.recv(out.get(), x.count, x.op.type, prev, x.stream);
  const Status ended = Communicator::groupEnd();
  std::string bad = x.finish(s.ok() ? ended : s);
  if (!bad.empty()) return bad;
  return compare(x.op.type, out.get(), x.count, [&](std::size_t i) { return x.value(prev, i); });
}

}  // namespace

const char* soakKindName(SoakKind kind) { return kKindNames[static_cast<int>(kind)]; }

std::string SoakOp::describe() const {
  return std::string(soakKindName(kind)) + " " + std::to_string(count) + " x " +
         dataTypeName(type) + " " + reduceOpName(op) + (inPlace ? " in-place" : "") + " root " +
         std::to_string(root) + (algorithm.empty() ? "" : " [" + algorithm + "]");
}

std::vector<SoakOp> makeSoakOps(std::size_t n, std::uint32_t seed, int ranks) {
  std::mt19937 rng(seed);
  auto pick = [&](int below) { return static_cast<int>(rng() % static_cast<unsigned>(below)); };
  std::vector<SoakOp> ops(n);
  for (SoakOp& o : ops) {
    o.kind = static_cast<SoakKind>(pick(kSoakKinds));
    o.type = static_cast<DataType>(pick(kDataTypeCount));
    o.op = static_cast<ReduceOp>(pick(collective::isFloat(o.type) ? kReduceOpCount : kReduceOpCount - 1));
    // Sizes spread over six orders of magnitude: 0, a few, ..., 128 Ki elements.
    o.count = pick(10) == 0 ? 0 : (std::size_t{1} << pick(18)) + static_cast<std::size_t>(pick(7));
    if (o.kind == SoakKind::kAllToAll || o.kind == SoakKind::kGather ||
        o.kind == SoakKind::kScatter || o.kind == SoakKind::kReduceScatter) {
      o.count /= static_cast<std::size_t>(ranks);  // these move count x ranks
    }
    o.root = pick(ranks);
    o.inPlace = pick(2) == 0;
    const auto algos = algorithmsFor(o.kind);
    const char* algo = algos[static_cast<std::size_t>(pick(static_cast<int>(algos.size())))];
    if (*algo != '\0') o.algorithm = std::string(soakKindName(o.kind)) + "=" + algo;
  }
  return ops;
}

std::string runSoakOp(const SoakOp& op, Communicator& comm, runtime::Stream* stream,
                      const SoakHooks& hooks) {
  const Status set = comm.setAlgorithm(op.algorithm);
  if (!set.ok()) return "setAlgorithm: " + set.toString();
  const int n = comm.size();
  const Run x{op,       comm,
              stream,   comm.rank(),
              n,        dataTypeSize(op.type),
              op.count, op.count * static_cast<std::size_t>(n),
              hooks};
  switch (op.kind) {
    case SoakKind::kAllReduce:
    case SoakKind::kReduceScatter:
    case SoakKind::kReduce:
      return reduction(x);
    case SoakKind::kAllGather:
    case SoakKind::kGather:
    case SoakKind::kAllToAll:
      return gathering(x);
    case SoakKind::kBroadcast:
    case SoakKind::kScatter:
      return distribution(x);
    case SoakKind::kSendRecv:
      return exchange(x);
    case SoakKind::kBarrier:
      x.issuing();
      return x.finish(comm.barrier(stream));
  }
  return "unknown kind";
}

}  // namespace cohort::testing

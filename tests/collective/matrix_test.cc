// Every collective x type x op x rank count (1, 2, 3, 4, 5, 8) x count (0, 1, 7,
// 1023), ranks as threads, every element checked against a closed form. Plus a
// few large counts, in-place variants and every algorithm forced at least once.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <numeric>

#include "collective/datatype.h"
#include "collective/expect.h"
#include "collective/rank_pool.h"
#include "test_util.h"

namespace cohort::testing {
namespace {

enum class C { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kGather, kScatter,
               kAllToAll, kAllGatherV, kReduceScatterV, kAllToAllV, kSendRecv, kBarrier };
const char* kNames[] = {"allreduce", "allgather", "reducescatter", "broadcast", "reduce",
                        "gather", "scatter", "alltoall", "allgatherv", "reducescatterv",
                        "alltoallv", "sendrecv", "barrier"};

struct Case {
  C coll;
  DataType type;
  ReduceOp op;
  std::size_t count;
  bool inPlace = false;
  int root = 0;
};

std::string describe(const Case& c, int n) {
  return std::string(kNames[static_cast<int>(c.coll)]) + " n=" + std::to_string(n) + " " +
         dataTypeName(c.type) + " " + reduceOpName(c.op) + " count=" + std::to_string(c.count) +
         (c.inPlace ? " in-place" : "") + " root=" + std::to_string(c.root);
}

// V-variant layouts: rank q contributes count + q elements; receive areas have
// one-element gaps that must stay untouched.
std::size_t vCount(std::size_t count, int q) { return count + static_cast<std::size_t>(q); }
std::size_t vDispl(std::size_t count, int q, std::size_t gap) {
  std::size_t d = 0;
  for (int p = 0; p < q; ++p) d += vCount(count, p) + gap;
  return d;
}
// alltoallv: rank s sends count + (s + d) % 3 elements to rank d.
std::size_t a2aCount(std::size_t count, int s, int d) { return count + static_cast<std::size_t>((s + d) % 3); }

class Buffers {
 public:
  Buffers(DataType t, std::size_t inElems, std::size_t outElems) : type_(t) {
    const std::size_t e = dataTypeSize(t);
    ok_ = runtime::deviceMalloc(&in_, std::max<std::size_t>(1, inElems * e)).ok() &&
          runtime::deviceMalloc(&out_, std::max<std::size_t>(1, outElems * e)).ok();
    if (ok_) std::memset(out_, 0xA5, std::max<std::size_t>(1, outElems * e));  // poison
  }
  ~Buffers() {
    if (in_ != nullptr) (void)runtime::deviceFree(in_);
    if (out_ != nullptr) (void)runtime::deviceFree(out_);
  }
  bool ok() const { return ok_; }
  char* in() { return static_cast<char*>(in_); }
  char* out() { return static_cast<char*>(out_); }
  void fill(char* at, std::size_t n, const std::function<double(std::size_t)>& v) {
    const std::size_t e = dataTypeSize(type_);
    for (std::size_t i = 0; i < n; ++i) encode(type_, v(i), at + i * e);
  }

 private:
  DataType type_;
  void* in_ = nullptr;
  void* out_ = nullptr;
  bool ok_ = false;
};

const std::uint8_t kPoison = 0xA5;
bool untouched(const char* p, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) {
    if (static_cast<std::uint8_t>(p[i]) != kPoison) return false;
  }
  return true;
}

std::string runRank(RankPool& pool, const Case& c, int r) {
  const int n = pool.size();
  const auto N = static_cast<std::size_t>(n);
  const std::size_t e = dataTypeSize(c.type), count = c.count;
  Communicator& comm = pool.comm(r);
  runtime::Stream* s = pool.stream(r);
  const ReduceOp op = c.op;
  auto v = [&](int rank, std::size_t i) { return inputValue(op, rank, i); };
  const double tol = op == ReduceOp::kAvg ? (c.type == DataType::kFloat16 || c.type == DataType::kBFloat16 ? 1e-2 : 1e-6) : 0;
  Status st;
  std::string bad;
  switch (c.coll) {
    case C::kAllReduce: {
      Buffers b(c.type, count, count);
      if (!b.ok()) return "alloc";
      char* in = c.inPlace ? b.out() : b.in();
      b.fill(in, count, [&](std::size_t i) { return v(r, i); });
      st = comm.allReduce(in, b.out(), count, c.type, op, s);
      if (st.ok()) st = runtime::streamSynchronize(s);
      if (st.ok()) bad = compare(c.type, b.out(), count, [&](std::size_t i) { return expectedReduce(op, n, i); }, tol);
      break;
    }
    case C::kReduceScatter: {
      Buffers b(c.type, N * count, N * count);
      if (!b.ok()) return "alloc";
      char* in = c.inPlace ? b.out() : b.in();
      b.fill(in, N * count, [&](std::size_t i) { return v(r, i); });
      char* out = c.inPlace ? b.out() + r * count * e : b.out();
      st = comm.reduceScatter(in, out, count, c.type, op, s);
      if (st.ok()) st = runtime::streamSynchronize(s);
      if (st.ok()) {
        bad = compare(c.type, out, count, [&](std::size_t i) {
          return expectedReduce(op, n, static_cast<std::size_t>(r) * count + i); }, tol);
      }
      break;
    }
    case C::kAllGather: {
      Buffers b(c.type, count, N * count);
      if (!b.ok()) return "alloc";
      char* in = c.inPlace ? b.out() + r * count * e : b.in();
      b.fill(in, count, [&](std::size_t i) { return v(r, i); });
      st = comm.allGather(in, b.out(), count, c.type, s);
      if (st.ok()) st = runtime::streamSynchronize(s);
      if (st.ok()) bad = compare(c.type, b.out(), N * count, [&](std::size_t i) { return v(static_cast<int>(i / std::max<std::size_t>(count, 1)), i % std::max<std::size_t>(count, 1)); });
      break;
    }
    case C::kBroadcast: {
      Buffers b(c.type, 0, count);
      if (!b.ok()) return "alloc";
      if (r == c.root) b.fill(b.out(), count, [&](std::size_t i) { return v(c.root, i); });
      st = comm.broadcast(b.out(), count, c.type, c.root, s);
      if (st.ok()) st = runtime::streamSynchronize(s);
      if (st.ok()) bad = compare(c.type, b.out(), count, [&](std::size_t i) { return v(c.root, i); });
      break;
    }
    case C::kReduce: {
      Buffers b(c.type, count, count);
      if (!b.ok()) return "alloc";
      char* in = c.inPlace && r == c.root ? b.out() : b.in();
      b.fill(in, count, [&](std::size_t i) { return v(r, i); });
      st = comm.reduce(in, b.out(), count, c.type, op, c.root, s);
      if (st.ok()) st = runtime::streamSynchronize(s);
      if (st.ok() && r == c.root) bad = compare(c.type, b.out(), count, [&](std::size_t i) { return expectedReduce(op, n, i); }, tol);
      if (st.ok() && r != c.root && !c.inPlace && !untouched(b.out(), count * e)) bad = "non-root recvbuf was written";
      break;
    }
    case C::kGather: {
      Buffers b(c.type, count, N * count);
      if (!b.ok()) return "alloc";
      b.fill(b.in(), count, [&](std::size_t i) { return v(r, i); });
      st = comm.gather(b.in(), b.out(), count, c.type, c.root, s);
      if (st.ok()) st = runtime::streamSynchronize(s);
      if (st.ok() && r == c.root) bad = compare(c.type, b.out(), N * count, [&](std::size_t i) { return v(static_cast<int>(i / count), i % count); });
      break;
    }
    case C::kScatter: {
      Buffers b(c.type, N * count, count);
      if (!b.ok()) return "alloc";
      if (r == c.root) b.fill(b.in(), N * count, [&](std::size_t i) { return v(c.root, i); });
      st = comm.scatter(b.in(), b.out(), count, c.type, c.root, s);
      if (st.ok()) st = runtime::streamSynchronize(s);
      if (st.ok()) bad = compare(c.type, b.out(), count, [&](std::size_t i) { return v(c.root, static_cast<std::size_t>(r) * count + i); });
      break;
    }
    case C::kAllToAll: {
      Buffers b(c.type, N * count, N * count);
      if (!b.ok()) return "alloc";
      b.fill(b.in(), N * count, [&](std::size_t i) { return v(r, i); });
      st = comm.allToAll(b.in(), b.out(), count, c.type, s);
      if (st.ok()) st = runtime::streamSynchronize(s);
      if (st.ok()) bad = compare(c.type, b.out(), N * count, [&](std::size_t i) {
        return v(static_cast<int>(i / count), static_cast<std::size_t>(r) * count + i % count); });
      break;
    }
    case C::kAllGatherV: {
      std::vector<std::size_t> counts, displs;
      for (int q = 0; q < n; ++q) {
        counts.push_back(vCount(count, q));
        displs.push_back(vDispl(count, q, 1));
      }
      const std::size_t total = vDispl(count, n, 1);
      Buffers b(c.type, counts[static_cast<std::size_t>(r)], total);
      if (!b.ok()) return "alloc";
      b.fill(b.in(), counts[static_cast<std::size_t>(r)], [&](std::size_t i) { return v(r, i); });
      st = comm.allGatherV(b.in(), counts[static_cast<std::size_t>(r)], b.out(), counts, displs, c.type, s);
      if (st.ok()) st = runtime::streamSynchronize(s);
      for (int q = 0; st.ok() && bad.empty() && q < n; ++q) {
        const auto qq = static_cast<std::size_t>(q);
        bad = compare(c.type, b.out() + displs[qq] * e, counts[qq], [&](std::size_t i) { return v(q, i); });
        if (bad.empty() && !untouched(b.out() + (displs[qq] + counts[qq]) * e, e)) bad = "a gap was written";
      }
      break;
    }
    case C::kReduceScatterV: {
      std::vector<std::size_t> counts, displs;
      for (int q = 0; q < n; ++q) {
        counts.push_back(vCount(count, q));
        displs.push_back(vDispl(count, q, 0));
      }
      const std::size_t total = vDispl(count, n, 0);
      const std::size_t mine = counts[static_cast<std::size_t>(r)];
      Buffers b(c.type, total, mine + 1);
      if (!b.ok()) return "alloc";
      b.fill(b.in(), total, [&](std::size_t i) { return v(r, i); });
      st = comm.reduceScatterV(b.in(), counts, displs, b.out(), mine, c.type, op, s);
      if (st.ok()) st = runtime::streamSynchronize(s);
      if (st.ok()) bad = compare(c.type, b.out(), mine, [&](std::size_t i) {
        return expectedReduce(op, n, displs[static_cast<std::size_t>(r)] + i); }, tol);
      if (st.ok() && bad.empty() && !untouched(b.out() + mine * e, e)) bad = "wrote past recvCount";
      break;
    }
    case C::kAllToAllV: {
      std::vector<std::size_t> sc, sd, rc, rd;
      std::size_t so = 0, ro = 0;
      for (int q = 0; q < n; ++q) {
        sc.push_back(a2aCount(count, r, q));
        sd.push_back(so);
        so += sc.back();
        rc.push_back(a2aCount(count, q, r));
        rd.push_back(ro);
        ro += rc.back();
      }
      Buffers b(c.type, so, ro);
      if (!b.ok()) return "alloc";
      b.fill(b.in(), so, [&](std::size_t i) { return v(r, i); });
      st = comm.allToAllV(b.in(), sc, sd, b.out(), rc, rd, c.type, s);
      if (st.ok()) st = runtime::streamSynchronize(s);
      for (int q = 0; st.ok() && bad.empty() && q < n; ++q) {
        // Sender q's displacement for rank r.
        std::size_t qd = 0;
        for (int p = 0; p < r; ++p) qd += a2aCount(count, q, p);
        bad = compare(c.type, b.out() + rd[static_cast<std::size_t>(q)] * e, rc[static_cast<std::size_t>(q)],
                      [&](std::size_t i) { return v(q, qd + i); });
      }
      break;
    }
    case C::kSendRecv: {
      Buffers b(c.type, count, count);
      if (!b.ok()) return "alloc";
      b.fill(b.in(), count, [&](std::size_t i) { return v(r, i); });
      if (n == 1) return "";
      const int next = (r + 1) % n, prev = (r + n - 1) % n;
      st = comm.batchSendRecv({{true, b.in(), count, c.type, next}, {false, b.out(), count, c.type, prev}}, s);
      if (st.ok()) st = runtime::streamSynchronize(s);
      if (st.ok()) bad = compare(c.type, b.out(), count, [&](std::size_t i) { return v(prev, i); });
      break;
    }
    case C::kBarrier:
      st = comm.barrier(s);
      if (st.ok()) st = runtime::streamSynchronize(s);
      break;
  }
  if (!st.ok()) return st.toString();
  return bad;
}

std::string runCase(RankPool& pool, const Case& c) {
  const auto results = pool.run([&](int r) { return runRank(pool, c, r); });
  std::string out;
  for (std::size_t r = 0; r < results.size(); ++r) {
    if (!results[r].empty()) out += "\n  rank " + std::to_string(r) + ": " + results[r];
  }
  return out.empty() ? "" : describe(c, pool.size()) + out;
}

bool reduces(C c) {
  return c == C::kAllReduce || c == C::kReduceScatter || c == C::kReduce || c == C::kReduceScatterV;
}

struct Param {
  C coll;
  int n;
};

class MatrixTest : public ::testing::TestWithParam<Param> {};

// Sanitized builds take every stride-th case (COHORT_TEST_MATRIX_STRIDE, set by
// tests/collective/CMakeLists.txt there), shifted per collective and rank count: every
// type and op still runs for every collective and rank count, and every forced
// algorithm and large case on some types, in a fraction of the time (the matrix was
// 424 s of a 686 s AddressSanitizer suite). The main build runs all.
int caseStride() {
  const char* v = std::getenv("COHORT_TEST_MATRIX_STRIDE");
  const int stride = v != nullptr ? std::atoi(v) : 1;
  return stride > 1 ? stride : 1;
}

TEST_P(MatrixTest, EveryTypeOpAndCount) {
  const Param p = GetParam();
  RankPool& pool = RankPool::shared(p.n);
  ASSERT_OK(pool.initStatus());
  const int stride = caseStride();
  int index = static_cast<int>(p.coll) + p.n;  // the shift
  int cases = 0;
  for (int t = 0; t < kDataTypeCount; ++t) {
    const auto type = static_cast<DataType>(t);
    for (int o = 0; o < kReduceOpCount; ++o) {
      const auto op = static_cast<ReduceOp>(o);
      if (!reduces(p.coll) && op != ReduceOp::kSum) continue;
      if (op == ReduceOp::kAvg && !collective::isFloat(type)) continue;
      for (std::size_t count : {0u, 1u, 7u, 1023u}) {
        if (index++ % stride != 0) continue;
        Case c{p.coll, type, op, count};
        c.root = p.n > 1 ? (count % static_cast<std::size_t>(p.n)) : 0;
        const std::string failure = runCase(pool, c);
        ASSERT_TRUE(failure.empty()) << failure;
        ++cases;
      }
    }
  }
  EXPECT_GT(cases, 0);
}

TEST_P(MatrixTest, InPlace) {
  const Param p = GetParam();
  if (p.coll != C::kAllReduce && p.coll != C::kAllGather && p.coll != C::kReduceScatter &&
      p.coll != C::kReduce) {
    GTEST_SKIP() << "no in-place form";
  }
  RankPool& pool = RankPool::shared(p.n);
  ASSERT_OK(pool.initStatus());
  for (std::size_t count : {1u, 1023u, 100003u}) {
    Case c{p.coll, DataType::kFloat32, ReduceOp::kSum, count, true, p.n - 1};
    const std::string failure = runCase(pool, c);
    ASSERT_TRUE(failure.empty()) << failure;
  }
}

std::vector<Param> params() {
  std::vector<Param> out;
  for (int c = 0; c < 13; ++c) {
    for (int n : {1, 2, 3, 4, 5, 8}) out.push_back({static_cast<C>(c), n});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, MatrixTest, ::testing::ValuesIn(params()),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return std::string(kNames[static_cast<int>(info.param.coll)]) + "_n" +
                                  std::to_string(info.param.n);
                         });

// 1 Mi + 3 elements: fp32/bf16 sum and int32 max on 2, 3 and 8 ranks.
TEST(LargeTest, OneMebiPlusThree) {
  const int stride = caseStride();
  int index = 0;
  for (int n : {2, 3, 8}) {
    RankPool& pool = RankPool::shared(n);
    ASSERT_OK(pool.initStatus());
    for (auto [type, op] : {std::pair{DataType::kFloat32, ReduceOp::kSum},
                            std::pair{DataType::kBFloat16, ReduceOp::kSum},
                            std::pair{DataType::kInt32, ReduceOp::kMax}}) {
      for (C coll : {C::kAllReduce, C::kReduceScatter, C::kAllGather, C::kBroadcast}) {
        if (index++ % stride != 0) continue;
        Case c{coll, type, op, (1u << 20) + 3};
        c.root = n - 1;
        const std::string failure = runCase(pool, c);
        ASSERT_TRUE(failure.empty()) << failure;
      }
    }
  }
}

// Every algorithm forced on at least one case (the schedules over shm links).
TEST(AlgorithmTest, EveryAlgorithmForced) {
  const struct { const char* spec; C coll; } kForced[] = {
      {"allreduce=ring", C::kAllReduce},          {"allreduce=hd", C::kAllReduce},
      {"allreduce=mesh", C::kAllReduce},          {"allgather=ring", C::kAllGather},
      {"reducescatter=ring", C::kReduceScatter},  {"broadcast=tree", C::kBroadcast},
      {"broadcast=chain", C::kBroadcast},         {"reduce=tree", C::kReduce},
      {"gather=linear", C::kGather},              {"scatter=linear", C::kScatter},
      {"alltoall=pairwise", C::kAllToAll},        {"barrier=dissemination", C::kBarrier},
      {"allgather=linear", C::kAllGather},        {"alltoall=linear", C::kAllToAll},
      {"broadcast=linear", C::kBroadcast},        {"reducescatter=linear", C::kReduceScatter},
  };
  const int stride = caseStride();
  int index = 0;
  for (int n : {2, 3, 5, 8}) {
    RankPool& pool = RankPool::shared(n);
    ASSERT_OK(pool.initStatus());
    for (const auto& f : kForced) {
      auto set = pool.run([&](int r) {
        Status s = pool.comm(r).setAlgorithm(f.spec);
        return s.ok() ? "" : s.toString();
      });
      for (const auto& e : set) ASSERT_TRUE(e.empty()) << e;
      for (std::size_t count : {1u, 1023u, 300001u}) {
        for (auto type : {DataType::kFloat32, DataType::kInt8, DataType::kFloat16}) {
          if (index++ % stride != 0) continue;  // 9 cases a spec: 3 of them at stride 3
          Case c{f.coll, type, ReduceOp::kSum, count};
          c.root = 1 % n;
          const std::string failure = runCase(pool, c);
          ASSERT_TRUE(failure.empty()) << f.spec << ": " << failure;
        }
      }
      // The choice was really made.
      const std::string choice = pool.comm(0).lastChoice();
      const std::string algo = std::string(f.spec).substr(std::string(f.spec).find('=') + 1);
      EXPECT_NE(choice.find("=" + algo), std::string::npos) << f.spec << " ran as " << choice;
    }
    pool.run([&](int r) { return pool.comm(r).setAlgorithm("").ok() ? "" : "reset"; });
  }
}

}  // namespace
}  // namespace cohort::testing

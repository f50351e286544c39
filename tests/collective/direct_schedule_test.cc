// The direct (mesh) algorithms as data: every rank's shared schedule runs through
// the executor (executeShared) against a group whose members' buffers are plain
// vectors and whose barriers are the points where the test moves every rank on,
// one round at a time. Results are checked element by element against closed
// forms, for 1-8 ranks, counts that do not divide, chunks smaller than a block,
// in place and not, streamed or not.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "collective/datatype.h"
#include "collective/direct.h"
#include "collective/executor.h"
#include "collective/steps.h"
#include "kernels/reduce.h"

namespace cohort::collective {
namespace {

struct Rank {
  std::vector<char> in, out, scratch;
  bool inPlace = false;  // `in` unused: the input lies in `out`, at inOffset
  std::size_t inOffset = 0;
  const char* input() const { return inPlace ? out.data() + inOffset : in.data(); }
};

// Members' buffers without any mapping; the barriers are the test's rounds.
class VectorGroup final : public SharedGroup {
 public:
  explicit VectorGroup(const std::vector<Rank>& ranks) {
    for (const Rank& r : ranks) {
      in_.push_back(r.input());
      out_.push_back(const_cast<char*>(r.out.data()));
    }
  }
  Status signal(const OpDesc&, const char*, bool first, const ExecBuffers&, Deadline,
                const std::atomic<bool>&) override {
    ++signals;
    firstSignals += first;
    return Status::Ok();
  }
  Status wait(const OpDesc&, const char*, bool first, const Schedule&, Deadline,
              const std::atomic<bool>&) override {
    firstWaits += first;
    return Status::Ok();
  }
  const char* const* inputs() const override { return in_.data(); }
  char* const* outputs() const override { return out_.data(); }
  int signals = 0;
  int firstSignals = 0;  // each call publishes itself once,
  int firstWaits = 0;    // and checks the others once

 private:
  std::vector<const char*> in_;  // by member
  std::vector<char*> out_;
};

// Rank r's input element k: small integers, exact in every type used here.
int valueOf(int r, std::size_t k) { return (r + 1) * static_cast<int>(k % 7 + 1); }

template <typename T>
T elem(const std::vector<char>& v, std::size_t k) {
  T x;
  std::memcpy(&x, v.data() + k * sizeof(T), sizeof(T));
  return x;
}

struct Case {
  Coll coll;
  int n;
  std::size_t count;
  int root = 0;
  bool inPlace = false;
  bool streaming = false;
  ReduceOp op = ReduceOp::kSum;
  bool hierarchical = false;
};

std::string name(const Case& c) {
  return std::string(collName(c.coll)) + " n=" + std::to_string(c.n) +
         " count=" + std::to_string(c.count) + " root=" + std::to_string(c.root) +
         (c.inPlace ? " in place" : "") + (c.streaming ? " streaming" : "") +
         (c.op == ReduceOp::kAvg ? " avg" : "") + (c.hierarchical ? " hierarchical" : "");
}

// Runs case `c` on float32 (int32 gives the same data movement); returns the ranks.
std::vector<Rank> run(const Case& c, const Tuning& tuning, std::vector<Schedule>* out = nullptr) {
  using T = float;
  OpDesc op;
  op.coll = c.coll;
  op.count = c.count;
  op.type = DataType::kFloat32;
  op.op = c.op;
  op.root = c.root;
  std::vector<Rank> ranks(static_cast<std::size_t>(c.n));
  const auto nn = static_cast<std::size_t>(c.n);
  for (int r = 0; r < c.n; ++r) {
    Rank& k = ranks[static_cast<std::size_t>(r)];
    const std::size_t inCount =
        c.coll == Coll::kReduceScatter || c.coll == Coll::kScatter || c.coll == Coll::kAllToAll
            ? nn * c.count
        : c.coll == Coll::kBarrier ? 0
                                   : c.count;
    const std::size_t outCount =
        c.coll == Coll::kAllGather || c.coll == Coll::kGather || c.coll == Coll::kAllToAll
            ? nn * c.count
        : c.coll == Coll::kBarrier ? 0
                                   : c.count;
    k.in.resize(inCount * sizeof(T));
    k.out.assign(outCount * sizeof(T), 0);
    for (std::size_t e = 0; e < inCount; ++e) {
      const T v = static_cast<T>(valueOf(r, e));
      std::memcpy(k.in.data() + e * sizeof(T), &v, sizeof(T));
    }
    if (c.coll == Coll::kBroadcast) k.in = r == c.root ? k.in : std::vector<char>(k.out.size());
    if (c.coll == Coll::kBroadcast) k.out = k.in;  // one buffer
    if (c.inPlace) {
      k.inPlace = true;
      if (c.coll == Coll::kAllGather) {
        k.inOffset = static_cast<std::size_t>(r) * c.count * sizeof(T);
        std::memcpy(k.out.data() + k.inOffset, k.in.data(), k.in.size());
      } else {
        k.out = k.in;
      }
    }
  }
  std::vector<Schedule> scheds;
  for (int r = 0; r < c.n; ++r) {
    DirectShape shape;
    shape.coll = c.coll;
    shape.count = c.count;
    shape.elem = sizeof(T);
    shape.root = c.root;
    shape.average = c.op == ReduceOp::kAvg && !c.hierarchical;
    shape.overInput = c.inPlace;
    shape.streaming = c.streaming;
    shape.hierarchical = c.hierarchical;
    scheds.push_back(directSchedule(r, c.n, shape, tuning));
    EXPECT_TRUE(scheds.back().shared);
    ranks[static_cast<std::size_t>(r)].scratch.assign(scheds.back().scratchBytes + 64, 0);
  }
  VectorGroup group(ranks);
  const auto& red = kernels::reductionFor(op.type, op.op);
  const std::atomic<bool> abort{false};
  const std::size_t rounds = scheds[0].rounds.size();
  for (std::size_t k = 0; k < rounds; ++k) {
    for (int r = 0; r < c.n; ++r) {
      Rank& me = ranks[static_cast<std::size_t>(r)];
      EXPECT_EQ(scheds[static_cast<std::size_t>(r)].rounds.size(), rounds) << name(c);
      // A rank's own input, output and scratch (the steps name members).
      const ExecBuffers b{me.input(), me.out.data(), me.scratch.data(), &group};
      const Status s = executeShared(scheds[static_cast<std::size_t>(r)], b, red, op, c.n,
                                     Deadline::never(), abort, k, k + 1);
      EXPECT_TRUE(s.ok()) << name(c) << ": " << s.toString();
    }
  }
  // Each rank's call published itself once and checked the others once.
  EXPECT_EQ(group.firstSignals, c.n) << name(c);
  EXPECT_EQ(group.firstWaits, c.n) << name(c);
  if (out != nullptr) *out = scheds;
  return ranks;
}

// The closed form of rank r's output element k.
double expected(const Case& c, int r, std::size_t k) {
  const std::size_t count = c.count;
  double sum = 0;
  switch (c.coll) {
    case Coll::kAllReduce:
    case Coll::kReduce:
      for (int j = 0; j < c.n; ++j) sum += valueOf(j, k);
      return c.op == ReduceOp::kAvg ? static_cast<double>(static_cast<float>(sum) / c.n) : sum;
    case Coll::kReduceScatter:
      for (int j = 0; j < c.n; ++j) sum += valueOf(j, static_cast<std::size_t>(r) * count + k);
      return c.op == ReduceOp::kAvg ? static_cast<double>(static_cast<float>(sum) / c.n) : sum;
    case Coll::kAllGather:
    case Coll::kGather:
      return valueOf(static_cast<int>(k / count), k % count);
    case Coll::kBroadcast:
      return valueOf(c.root, k);
    case Coll::kScatter:
      return valueOf(c.root, static_cast<std::size_t>(r) * count + k);
    case Coll::kAllToAll:
      return valueOf(static_cast<int>(k / count), static_cast<std::size_t>(r) * count + k % count);
    default:
      return 0;
  }
}

void check(const Case& c, const Tuning& tuning) {
  const std::vector<Rank> ranks = run(c, tuning);
  for (int r = 0; r < c.n; ++r) {
    const bool writes = !((c.coll == Coll::kReduce || c.coll == Coll::kGather) && r != c.root);
    if (!writes) continue;
    const auto& out = ranks[static_cast<std::size_t>(r)].out;
    for (std::size_t k = 0; k < out.size() / sizeof(float); ++k) {
      const double want = expected(c, r, k);
      const float got = elem<float>(out, k);
      if (static_cast<double>(got) != want) {
        ADD_FAILURE() << name(c) << ": rank " << r << " element " << k << " is " << got
                      << ", expected " << want;
        return;
      }
    }
  }
}

// Chunks far smaller than a block, so that every builder's chunk loop runs.
Tuning smallChunks() {
  Tuning t;
  t.meshChunkBytes = 64;
  t.meshPairChunkBytes = 32;
  t.meshIntoChunkBytes = 48;
  return t;
}

TEST(DirectSchedule, EveryCollectiveMatchesItsClosedForm) {
  const Tuning tuning = smallChunks();
  for (Coll coll : {Coll::kAllReduce, Coll::kReduceScatter, Coll::kReduce, Coll::kAllGather,
                    Coll::kBroadcast, Coll::kGather, Coll::kScatter, Coll::kAllToAll}) {
    for (int n : {1, 2, 3, 4, 5, 8}) {
      for (std::size_t count :
           {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{61}, std::size_t{1000}}) {
        for (int root : {0, n - 1}) {
          for (bool streaming : {false, true}) {
            check({coll, n, count, root, false, streaming}, tuning);
          }
        }
      }
    }
  }
}

TEST(DirectSchedule, InPlaceOnEveryRank) {
  const Tuning tuning = smallChunks();
  for (Coll coll : {Coll::kAllReduce, Coll::kAllGather}) {
    for (int n : {2, 3, 5, 8}) {
      for (std::size_t count : {std::size_t{1}, std::size_t{61}, std::size_t{1000}}) {
        for (bool streaming : {false, true}) {
          check({coll, n, count, 0, true, streaming}, tuning);
        }
      }
    }
  }
}

TEST(DirectSchedule, AveragesDivideOnceBySize) {
  for (int n : {2, 3, 5}) {
    for (std::size_t count : {std::size_t{7}, std::size_t{1000}}) {
      check({Coll::kAllReduce, n, count, 0, false, false, ReduceOp::kAvg}, smallChunks());
      check({Coll::kReduceScatter, n, count, 0, false, false, ReduceOp::kAvg}, smallChunks());
    }
  }
}

TEST(DirectSchedule, HierarchicalNodePartLeavesTheNodeSumEverywhere) {
  for (int n : {2, 3, 4, 7}) {
    for (std::size_t count : {std::size_t{5}, std::size_t{1000}}) {
      for (bool inPlace : {false, true}) {
        Case c{Coll::kAllReduce, n, count, 0, inPlace};
        c.hierarchical = true;
        check(c, smallChunks());
      }
    }
  }
}

TEST(DirectSchedule, NamesTheMembersBuffersItsFirstWaitMaps) {
  auto kinds = [](Coll coll) {
    std::vector<Schedule> scheds;
    run({coll, 3, 4, 1}, Tuning{}, &scheds);
    return std::to_string(scheds[0].memberInputs) + std::to_string(scheds[0].memberOutputs);
  };
  EXPECT_EQ(kinds(Coll::kAllReduce), "11");
  EXPECT_EQ(kinds(Coll::kBroadcast), "01");  // the root's output into the others'
  EXPECT_EQ(kinds(Coll::kBarrier), "00");
}

// A rank that signals twice before it first waits (it arrives at a barrier that
// others wait for alone, then at the next) publishes its call once: a second
// publication would rewrite its slot while the others read it.
TEST(DirectSchedule, OnlyTheFirstSignalPublishesTheCall) {
  Schedule s;
  s.shared = true;
  s.round() = {steps::signal("arrival"), steps::signal("completion"), steps::wait("completion")};
  std::vector<Rank> ranks(1);
  VectorGroup group(ranks);
  const std::atomic<bool> abort{false};
  OpDesc op;
  const ExecBuffers b{nullptr, nullptr, nullptr, &group};
  const auto& red = kernels::reductionFor(DataType::kFloat32, ReduceOp::kSum);
  ASSERT_TRUE(executeShared(s, b, red, op, 1, Deadline::never(), abort).ok());
  EXPECT_EQ(group.signals, 2);
  EXPECT_EQ(group.firstSignals, 1);
  EXPECT_EQ(group.firstWaits, 1);
}

TEST(DirectSchedule, BarrierIsOneSignalAndWait) {
  std::vector<Schedule> scheds;
  run({Coll::kBarrier, 3, 0}, Tuning{}, &scheds);
  EXPECT_EQ(scheds[0].toString(), "direct\nr0: signal arrival\nr0: wait arrival\n");
}

TEST(DirectSchedule, PrintsPutsAndGetsWithTheMember) {
  std::vector<Schedule> scheds;
  // Two ranks, 4 floats: rank 1 reduces elements 2-3 into its output and puts them into rank 0's.
  run({Coll::kAllReduce, 2, 4}, Tuning{}, &scheds);
  EXPECT_EQ(scheds[1].toString(),
            "direct\n"
            "r0: signal arrival\n"
            "r0: wait arrival\n"
            "r1: combine 8B m0.in+8, m1.in+8 -> m1.out+8\n"
            "r1: copy 8B m1.out+8 -> m0.out+8\n"
            "r2: signal completion\n"
            "r2: wait completion\n");
  EXPECT_FALSE(scheds[1].streaming);
}

}  // namespace
}  // namespace cohort::collective

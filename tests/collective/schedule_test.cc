// Algorithms checked as data: every rank's schedule runs in a simulator (message
// queues, no I/O) and the results are compared with closed forms, for rank counts
// 1..9 and awkward counts; a schedule that would deadlock or mismatch sizes fails.
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <functional>
#include <map>

#include "collective/datatype.h"
#include "collective/op.h"
#include "collective/schedule.h"
#include "kernels/reduce.h"

namespace cohort::collective {
namespace {

using Msg = std::vector<char>;

struct RankState {
  std::vector<char> in, out, scratch;
  std::size_t round = 0;
  bool posted = false;
};

char* at(RankState& s, const Range& r) {
  auto& v = r.buf == Buf::kInput ? s.in : r.buf == Buf::kOutput ? s.out : s.scratch;
  return v.data() + r.offset;
}

// Runs all schedules to completion with int32 sum; returns "" or what went wrong.
std::string simulate(const std::vector<Schedule>& scheds, std::vector<RankState>& st) {
  const int n = static_cast<int>(scheds.size());
  std::map<std::pair<int, int>, std::deque<Msg>> queues;  // (from, to)
  const auto& red = kernels::reductionFor(DataType::kInt32, ReduceOp::kSum);
  for (int r = 0; r < n; ++r) st[r].scratch.assign(scheds[r].scratchBytes + 64, 0);
  bool progress = true;
  while (progress) {
    progress = false;
    for (int r = 0; r < n; ++r) {
      RankState& s = st[r];
      if (s.round >= scheds[r].rounds.size()) continue;
      const auto& round = scheds[r].rounds[s.round];
      if (!s.posted) {
        for (const Step& step : round) {
          if (step.bytes == 0) continue;
          if (step.op == Step::Op::kCopy) std::memmove(at(s, step.dst), at(s, step.src), step.bytes);
          if (step.op == Step::Op::kReduce) red.fn(at(s, step.dst), at(s, step.dst), at(s, step.src), step.bytes, nullptr);
        }
        for (const Step& step : round) {
          if (step.op == Step::Op::kSend) queues[{r, step.peer}].emplace_back(at(s, step.src), at(s, step.src) + step.bytes);
        }
        s.posted = true;
        progress = true;
      }
      // All receives of the round must be available (in per-peer order).
      std::map<int, std::size_t> need;
      for (const Step& step : round) {
        if (step.op == Step::Op::kRecv || step.op == Step::Op::kRecvReduce) ++need[step.peer];
      }
      bool ready = true;
      for (auto [peer, k] : need) ready = ready && queues[{peer, r}].size() >= k;
      if (!ready) continue;
      for (const Step& step : round) {
        if (step.op != Step::Op::kRecv && step.op != Step::Op::kRecvReduce) continue;
        Msg m = std::move(queues[{step.peer, r}].front());
        queues[{step.peer, r}].pop_front();
        if (m.size() != step.bytes) {
          return "rank " + std::to_string(r) + " round " + std::to_string(s.round) + ": got " +
                 std::to_string(m.size()) + " bytes from " + std::to_string(step.peer) + ", expected " + std::to_string(step.bytes);
        }
        if (m.empty()) continue;
        if (step.op == Step::Op::kRecv) std::memcpy(at(s, step.dst), m.data(), m.size());
        else red.fn(at(s, step.dst), at(s, step.src), m.data(), m.size(), nullptr);
      }
      ++s.round;
      s.posted = false;
      progress = true;
    }
  }
  for (int r = 0; r < n; ++r) {
    if (st[r].round < scheds[r].rounds.size()) return "deadlock: rank " + std::to_string(r) + " stuck in round " + std::to_string(st[r].round);
  }
  for (const auto& [key, q] : queues) {
    if (!q.empty()) return "unconsumed message " + std::to_string(key.first) + "->" + std::to_string(key.second);
  }
  return "";
}

std::int32_t val(int r, std::size_t i) { return static_cast<std::int32_t>(r * 1000 + i % 997); }
std::vector<char> ints(std::size_t n, const std::function<std::int32_t(std::size_t)>& f) {
  std::vector<char> b(n * 4);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int32_t v = f(i);
    std::memcpy(b.data() + 4 * i, &v, 4);
  }
  return b;
}
std::int32_t intAt(const std::vector<char>& b, std::size_t i) {
  std::int32_t v;
  std::memcpy(&v, b.data() + 4 * i, 4);
  return v;
}

const std::size_t kCounts[] = {0, 1, 2, 7, 13, 1000, 1023};

TEST(ScheduleTest, AllReduceRingAndHalvingDoubling) {
  for (int algo = 0; algo < 4; ++algo) {
    for (int n = 1; n <= 9; ++n) {
      for (std::size_t count : kCounts) {
        for (bool inPlace : {false, true}) {
          std::vector<Schedule> sc;
          std::vector<RankState> st(n);
          for (int r = 0; r < n; ++r) {
            // algo 3: the ring pipelined in chunks of 3 elements (12 bytes).
            sc.push_back(algo == 0   ? ringAllReduce(r, n, count, 4, inPlace)
                         : algo == 1 ? halvingDoublingAllReduce(r, n, count, 4, inPlace)
                         : algo == 2 ? recursiveDoublingAllReduce(r, n, count, 4, inPlace)
                                     : ringAllReduce(r, n, count, 4, inPlace, 12));
            st[r].in = ints(count, [&](std::size_t i) { return val(r, i); });
            st[r].out = inPlace ? st[r].in : std::vector<char>(count * 4, 0x5a);
            if (inPlace) st[r].in = st[r].out;  // same contents; the schedule reads "in" only where in == out
          }
          ASSERT_EQ(simulate(sc, st), "") << sc[0].algorithm << " n=" << n << " count=" << count;
          for (int r = 0; r < n; ++r) {
            for (std::size_t i = 0; i < count; ++i) {
              std::int32_t want = 0;
              for (int q = 0; q < n; ++q) want += val(q, i);
              ASSERT_EQ(intAt(st[r].out, i), want) << sc[0].algorithm << " n=" << n << " count=" << count << " rank " << r << " i " << i;
            }
          }
        }
      }
    }
  }
}

TEST(ScheduleTest, AllGatherReduceScatterAllToAll) {
  for (int n = 1; n <= 9; ++n) {
    for (std::size_t count : kCounts) {
      for (const bool linear : {false, true}) {
        std::vector<Schedule> ag, rs, a2a;
        std::vector<RankState> sa(n), sr(n), st(n);
        for (int r = 0; r < n; ++r) {
          ag.push_back(linear ? linearAllGather(r, n, count, 4, false)
                              : ringAllGather(r, n, count, 4, false));
          sa[r].in = ints(count, [&](std::size_t i) { return val(r, i); });
          sa[r].out.assign(n * count * 4, 0);
          rs.push_back(linear ? linearReduceScatter(r, n, count, 4)
                              : ringReduceScatter(r, n, count, 4));
          sr[r].in = ints(n * count, [&](std::size_t i) { return val(r, i); });
          sr[r].out.assign(count * 4, 0);
          a2a.push_back(linear ? linearAllToAll(r, n, count, 4) : pairwiseAllToAll(r, n, count, 4));
          st[r].in = ints(n * count, [&](std::size_t i) { return val(r, i); });
          st[r].out.assign(n * count * 4, 0);
        }
        ASSERT_EQ(simulate(ag, sa), "") << "allgather n=" << n;
        ASSERT_EQ(simulate(rs, sr), "") << "reducescatter n=" << n;
        ASSERT_EQ(simulate(a2a, st), "") << "alltoall n=" << n;
        for (int r = 0; r < n; ++r) {
          for (std::size_t i = 0; i < n * count; ++i) {
            ASSERT_EQ(intAt(sa[r].out, i), val(static_cast<int>(i / count), i % count));
            ASSERT_EQ(intAt(st[r].out, i), val(static_cast<int>(i / count), r * count + i % count));
          }
          for (std::size_t i = 0; i < count; ++i) {
            std::int32_t want = 0;
            for (int q = 0; q < n; ++q) want += val(q, r * count + i);
            ASSERT_EQ(intAt(sr[r].out, i), want) << "reducescatter n=" << n << " rank " << r;
          }
        }
      }
    }
  }
}

// In place, the linear allgather sends the rank's block from where it already
// sits in the output and copies nothing.
TEST(ScheduleTest, LinearAllGatherInPlace) {
  for (int n = 1; n <= 9; ++n) {
    for (std::size_t count : kCounts) {
      std::vector<Schedule> ag;
      std::vector<RankState> sa(n);
      for (int r = 0; r < n; ++r) {
        ag.push_back(linearAllGather(r, n, count, 4, true));
        for (const Step& s : ag.back().rounds.empty() ? std::vector<Step>{} : ag.back().rounds[0]) {
          ASSERT_NE(s.op, Step::Op::kCopy) << "n=" << n;
        }
        sa[r].in = ints(count, [&](std::size_t i) { return val(r, i); });
        sa[r].out.assign(n * count * 4, 0);
        std::copy(sa[r].in.begin(), sa[r].in.end(), sa[r].out.begin() + r * count * 4);
      }
      ASSERT_EQ(simulate(ag, sa), "") << "allgather n=" << n;
      for (int r = 0; r < n; ++r) {
        for (std::size_t i = 0; i < n * count; ++i) {
          ASSERT_EQ(intAt(sa[r].out, i), val(static_cast<int>(i / count), i % count)) << "n=" << n;
        }
      }
    }
  }
}

// COHORT_BUFFSIZE: the ring reduce-scatter goes round in pieces, its scratch
// bounded by two pieces, and still sums every element.
TEST(ScheduleTest, ReduceScatterInPiecesKeepsScratchWithinTwoPieces) {
  for (int n : {2, 3, 5}) {
    for (std::size_t count : {1u, 7u, 1023u}) {
      for (std::size_t pieceBytes : {4u, 12u, 100u, 4096u}) {
        std::vector<Schedule> rs;
        std::vector<RankState> st(n);
        for (int r = 0; r < n; ++r) {
          rs.push_back(ringReduceScatter(r, n, count, 4, pieceBytes));
          EXPECT_LE(rs.back().scratchBytes, 2 * std::max<std::size_t>(4, pieceBytes / 4 * 4));
          st[r].in = ints(n * count, [&](std::size_t i) { return val(r, i); });
          st[r].out.assign(count * 4, 0);
        }
        ASSERT_EQ(simulate(rs, st), "") << "n=" << n << " piece=" << pieceBytes;
        for (int r = 0; r < n; ++r) {
          for (std::size_t i = 0; i < count; ++i) {
            std::int32_t want = 0;
            for (int q = 0; q < n; ++q) want += val(q, r * count + i);
            ASSERT_EQ(intAt(st[r].out, i), want)
                << "n=" << n << " count=" << count << " piece=" << pieceBytes << " rank " << r;
          }
        }
      }
    }
  }
}

TEST(ScheduleTest, RootedCollectivesFromEveryRoot) {
  for (int n = 1; n <= 9; ++n) {
    for (int root = 0; root < n; ++root) {
      for (std::size_t count : {0u, 1u, 7u, 1023u}) {
        std::vector<Schedule> tb, cb, lb, tr, g, s;
        std::vector<RankState> stb(n), scb(n), slb(n), str(n), sg(n), ss(n);
        for (int r = 0; r < n; ++r) {
          tb.push_back(treeBroadcast(r, n, root, count, 4));
          cb.push_back(chainBroadcast(r, n, root, count, 4, 64));
          lb.push_back(linearBroadcast(r, n, root, count, 4));
          for (auto* st : {&stb, &scb, &slb}) {
            (*st)[r].out = r == root ? ints(count, [&](std::size_t i) { return val(root, i); }) : std::vector<char>(count * 4, 0);
            (*st)[r].in = (*st)[r].out;
          }
          tr.push_back(treeReduce(r, n, root, count, 4, false));
          str[r].in = ints(count, [&](std::size_t i) { return val(r, i); });
          str[r].out.assign(count * 4, 0);
          g.push_back(linearGather(r, n, root, count, 4));
          sg[r].in = ints(count, [&](std::size_t i) { return val(r, i); });
          sg[r].out.assign(n * count * 4, 0);
          s.push_back(linearScatter(r, n, root, count, 4));
          ss[r].in = ints(n * count, [&](std::size_t i) { return val(root, i); });
          ss[r].out.assign(count * 4, 0);
        }
        ASSERT_EQ(simulate(tb, stb), "");
        ASSERT_EQ(simulate(cb, scb), "");
        ASSERT_EQ(simulate(lb, slb), "");
        ASSERT_EQ(simulate(tr, str), "");
        ASSERT_EQ(simulate(g, sg), "");
        ASSERT_EQ(simulate(s, ss), "");
        for (int r = 0; r < n; ++r) {
          for (std::size_t i = 0; i < count; ++i) {
            ASSERT_EQ(intAt(stb[r].out, i), val(root, i)) << "tree bcast n=" << n << " root " << root;
            ASSERT_EQ(intAt(scb[r].out, i), val(root, i)) << "chain bcast n=" << n << " root " << root;
            ASSERT_EQ(intAt(slb[r].out, i), val(root, i)) << "linear bcast n=" << n << " root " << root;
            ASSERT_EQ(intAt(ss[r].out, i), val(root, r * count + i));
          }
        }
        for (std::size_t i = 0; i < count; ++i) {
          std::int32_t want = 0;
          for (int q = 0; q < n; ++q) want += val(q, i);
          ASSERT_EQ(intAt(str[root].out, i), want) << "tree reduce n=" << n << " root " << root;
        }
        for (std::size_t i = 0; i < n * count; ++i) ASSERT_EQ(intAt(sg[root].out, i), val(static_cast<int>(i / count), i % count));
      }
    }
  }
}

TEST(ScheduleTest, BarrierAndPrinting) {
  for (int n = 1; n <= 9; ++n) {
    std::vector<Schedule> b;
    std::vector<RankState> st(n);
    for (int r = 0; r < n; ++r) b.push_back(disseminationBarrier(r, n));
    ASSERT_EQ(simulate(b, st), "");
  }
  const std::string text = ringAllReduce(0, 2, 8, 4, false).toString();
  EXPECT_EQ(text,
            "ring\n"
            "r0: send 16B in+0 peer 1\n"
            "r0: recvreduce 16B in+16 -> out+16 peer 1\n"
            "r1: send 16B out+16 peer 1\n"
            "r1: recv 16B -> out+0 peer 1\n");
}

TEST(ScheduleTest, BlocksCoverTheRangeExactly) {
  for (std::size_t total : {0u, 1u, 5u, 8u, 1023u}) {
    for (int parts = 1; parts <= 9; ++parts) {
      std::size_t next = 0;
      for (int i = 0; i < parts; ++i) {
        const Block b = blockOf(total, parts, i);
        EXPECT_EQ(b.offset, next);
        next += b.count;
      }
      EXPECT_EQ(next, total);
    }
  }
}

// An operation's description (in every error and log line) shows only the fields the
// operation has: no reduce op for a broadcast, no root for an allreduce.
TEST(OpDescribe, ShowsOnlyTheFieldsTheOperationHas) {
  OpDesc op;
  op.seq = 4;
  op.count = 8;
  op.type = DataType::kFloat32;
  op.op = ReduceOp::kMax;
  op.root = 2;
  op.coll = Coll::kBroadcast;
  EXPECT_EQ(op.describe(), "broadcast #4 (8 x float, root 2)");
  op.coll = Coll::kAllReduce;
  EXPECT_EQ(op.describe(), "allreduce #4 (8 x float, max)");
  op.coll = Coll::kReduce;
  EXPECT_EQ(op.describe(), "reduce #4 (8 x float, max, root 2)");
  op.coll = Coll::kAllGather;
  EXPECT_EQ(op.describe(), "allgather #4 (8 x float)");
  op.coll = Coll::kBarrier;
  EXPECT_EQ(op.describe(), "barrier #4");
  op.coll = Coll::kSendRecv;
  int buf = 0;
  op.items = {SendRecvItem{true, &buf, 3, DataType::kInt32, 1},
              SendRecvItem{false, &buf, 5, DataType::kInt8, 0}};
  EXPECT_EQ(op.describe(), "sendrecv (send 3 x int32 to rank 1, recv 5 x int8 from rank 0)");
}

}  // namespace
}  // namespace cohort::collective

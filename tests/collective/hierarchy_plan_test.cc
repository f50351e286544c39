// The hierarchical plans checked as data: every rank's plan runs in a simulator
// where a node part or a cross part is the collective's definition over its
// group (the schedules themselves are schedule_test's), and the results are
// compared with closed forms for several node shapes, counts and roots. A plan
// that would deadlock, mismatch its group or touch memory out of bounds fails.
#include "collective/hierarchy_plan.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace cohort::collective {
namespace {

using Kind = HierPart::Kind;

constexpr float kUnwritten = -7.0f;

struct RankSim {
  HierPlan plan;
  std::vector<float> in, out, staging;
  std::size_t pc = 0;
  std::size_t slice = 0;  // the open node allreduce's block, in elements of the output
  bool done() const { return pc >= plan.parts.size(); }
  const HierPart& part() const { return plan.parts[pc]; }
};

class World {
 public:
  World(Coll coll, int nodes, int local, std::size_t count, int root, bool average)
      : coll_(coll), nodes_(nodes), local_(local), count_(count) {
    const int size = nodes * local;
    ranks_.resize(static_cast<std::size_t>(size));
    for (int r = 0; r < size; ++r) {
      HierShape s;
      s.coll = coll;
      s.count = count;
      s.elem = sizeof(float);
      s.average = average;
      s.rank = r;
      s.size = size;
      s.localRank = r % local;
      s.localSize = local;
      s.crossRank = r / local;
      s.nodes = nodes;
      s.root = root;
      s.rootLocal = root % local;
      s.rootNode = root / local;
      RankSim& k = rank(r);
      Tuning tuning;
      tuning.crossHalvingDoublingMax = 8;  // both cross allreduces, by size
      k.plan = hierarchicalPlan(s, tuning, 1 << 20);
      const std::size_t perRank = coll == Coll::kReduceScatter ? count * size : count;
      const std::size_t outCount = coll == Coll::kAllGather ? count * size : count;
      k.in.assign(perRank, 0);
      for (std::size_t i = 0; i < perRank; ++i) k.in[i] = value(r, i);
      k.out.assign(outCount, kUnwritten);
      if (coll == Coll::kBroadcast && r == root) k.out = k.in;
      EXPECT_EQ(k.plan.stagingBytes % sizeof(float), 0u);
      k.staging.assign(k.plan.stagingBytes / sizeof(float), kUnwritten);
    }
  }

  static float value(int r, std::size_t i) { return static_cast<float>(r * 1000 + i + 1); }
  RankSim& rank(int r) { return ranks_[static_cast<std::size_t>(r)]; }
  int size() const { return nodes_ * local_; }

  /// Runs every plan to its end; "" or what went wrong.
  std::string run() {
    for (bool progress = true; progress;) {
      progress = false;
      for (int r = 0; r < size() && error_.empty(); ++r) {
        RankSim& k = rank(r);
        if (k.done()) continue;
        const Kind kind = k.part().kind;
        if (kind == Kind::kMove || kind == Kind::kAverage) {
          local(r);
          progress = true;
        } else if (kind == Kind::kCross) {
          progress = together(crossGroup(r), true) || progress;
        } else {
          progress = together(nodeGroup(r), false) || progress;
        }
      }
      if (!error_.empty()) return error_;
    }
    for (int r = 0; r < size(); ++r) {
      if (!rank(r).done()) return fmt::format("rank {} is stuck at part {}", r, rank(r).pc);
    }
    return error_;
  }

 private:
  std::vector<int> nodeGroup(int r) const {
    std::vector<int> g;
    for (int j = 0; j < local_; ++j) g.push_back(r / local_ * local_ + j);
    return g;
  }
  std::vector<int> crossGroup(int r) const {
    std::vector<int> g;
    for (int m = 0; m < nodes_; ++m) g.push_back(m * local_ + r % local_);
    return g;
  }

  /// `n` elements at `ref` of rank r; null (and an error) when out of bounds.
  float* at(int r, const HierRef& ref, std::size_t n) {
    RankSim& k = rank(r);
    std::vector<float>* v = nullptr;
    std::size_t base = 0;
    switch (ref.buf) {
      case HierBuf::kInput:
        v = &k.in;
        break;
      case HierBuf::kOutput:
        v = &k.out;
        break;
      case HierBuf::kStaging:
        v = &k.staging;
        break;
      case HierBuf::kSlice:
        v = &k.out;
        base = k.slice;
        break;
      case HierBuf::kNone:
        break;
    }
    const std::size_t first = base + ref.offset / sizeof(float);
    if (v == nullptr || ref.offset % sizeof(float) != 0 || first + n > v->size()) {
      if (error_.empty()) {
        error_ = fmt::format("rank {} part {} reaches past its buffer ({} elements at {})", r, k.pc,
                             n, ref.offset);
      }
      return nullptr;
    }
    return v->data() + first;
  }

  void local(int r) {
    RankSim& k = rank(r);
    const HierPart& p = k.part();
    if (p.kind == Kind::kMove) {
      const float* src = at(r, p.in, p.bytes / sizeof(float));
      float* dst = at(r, p.out, p.bytes / sizeof(float));
      if (src != nullptr && dst != nullptr) std::copy(src, src + p.bytes / sizeof(float), dst);
    } else if (float* d = at(r, p.out, p.count)) {
      for (std::size_t i = 0; i < p.count; ++i) d[i] /= static_cast<float>(size());
    }
    ++k.pc;
  }

  /// Runs the part at which every rank of `g` stands, if they all do; whether it ran.
  bool together(const std::vector<int>& g, bool crossPart) {
    for (int r : g) {
      if (rank(r).done()) return false;
    }
    const HierPart& p0 = rank(g[0]).part();
    for (int r : g) {
      const HierPart& p = rank(r).part();
      if ((p.kind == Kind::kCross) != crossPart) return false;
      if (p.kind != p0.kind || p.coll != p0.coll || p.count != p0.count || p.root != p0.root ||
          p.stride != p0.stride) {
        error_ = fmt::format("ranks {} and {} meet with different parts", g[0], r);
        return false;
      }
    }
    const auto m = g.size();
    const std::size_t c = p0.count;
    // Every member's values first: outputs may lie over inputs.
    std::vector<std::vector<float>> ins(m);
    for (std::size_t j = 0; j < m; ++j) {
      const HierPart& p = rank(g[j]).part();
      // A broadcast reads the root's buffer, a strided allgather reads below.
      if (p.kind == Kind::kNodeClose || p.coll == Coll::kBroadcast ||
          (p.coll == Coll::kAllGather && p.stride > 0)) {
        continue;
      }
      const std::size_t n = p.coll == Coll::kReduceScatter ? c * m : c;
      if (const float* src = at(g[j], p.in, n)) ins[j].assign(src, src + n);
    }
    if (!error_.empty()) return false;
    auto sumAt = [&](std::size_t from, std::size_t i) {
      float s = 0;
      for (std::size_t k = 0; k < m; ++k) s += ins[k][from + i];
      return s;
    };
    for (std::size_t j = 0; j < m; ++j) {
      const int r = g[j];
      const HierPart& p = rank(r).part();
      switch (p.kind == Kind::kNodeClose ? Coll::kBarrier : p.coll) {
        case Coll::kAllReduce:
          if (p.kind == Kind::kNodeOpen) {
            const Block b = blockOf(c, static_cast<int>(m), static_cast<int>(j));
            rank(r).slice = b.offset;
            if (float* o = at(r, p.out, c)) {
              for (std::size_t i = 0; i < b.count; ++i) o[b.offset + i] = sumAt(b.offset, i);
            }
          } else if (float* o = at(r, p.out, c)) {
            for (std::size_t i = 0; i < c; ++i) o[i] = sumAt(0, i);
          }
          break;
        case Coll::kBroadcast: {
          const float* src = at(g[static_cast<std::size_t>(p.root)], p.in, c);
          float* o = at(r, p.out, c);
          if (src != nullptr && o != nullptr && o != src) std::copy(src, src + c, o);
          break;
        }
        case Coll::kReduce:
          if (static_cast<int>(j) == p.root) {
            if (float* o = at(r, p.out, c)) {
              for (std::size_t i = 0; i < c; ++i) o[i] = sumAt(0, i);
            }
          }
          break;
        case Coll::kReduceScatter:
          if (float* o = at(r, p.out, c)) {
            for (std::size_t i = 0; i < c; ++i) o[i] = sumAt(j * c, i);
          }
          break;
        case Coll::kAllGather:
          if (p.stride == 0) {
            if (float* o = at(r, p.out, c * m)) {
              for (std::size_t b = 0; b < m; ++b)
                std::copy(ins[b].begin(), ins[b].end(), o + b * c);
            }
          }
          break;
        default:
          break;
      }
    }
    if (p0.coll == Coll::kAllGather && p0.stride > 0) {
      // In place, blocks one stride apart: member b's own block is at its b-th place.
      const std::size_t s = p0.stride / sizeof(float);
      for (std::size_t b = 0; b < m; ++b) {
        const float* src = at(g[b], rank(g[b]).part().in, b * s + c);
        for (std::size_t j = 0; j < m && src != nullptr; ++j) {
          if (float* o = at(g[j], rank(g[j]).part().out, b * s + c)) {
            std::copy(src + b * s, src + b * s + c, o + b * s);
          }
        }
      }
    }
    if (p0.kind == Kind::kNodeClose) {
      for (std::size_t j = 0; j < m; ++j) {
        const Block b = blockOf(count_, static_cast<int>(m), static_cast<int>(j));
        const float* src = rank(g[j]).out.data() + b.offset;
        for (int r : g) std::copy(src, src + b.count, rank(r).out.data() + b.offset);
      }
    }
    for (int r : g) ++rank(r).pc;
    return true;
  }

  Coll coll_;
  int nodes_, local_;
  std::size_t count_;
  std::vector<RankSim> ranks_;
  std::string error_;
};

// Runs one case and checks every element of every rank's output.
void check(Coll coll, int nodes, int local, std::size_t count, int root, bool average) {
  World w(coll, nodes, local, count, root, average);
  const int n = w.size();
  const std::string what = fmt::format("{} {}x{} count {} root {}{}", collName(coll), nodes, local,
                                       count, root, average ? " avg" : "");
  ASSERT_EQ(w.run(), "") << what << "\n" << w.rank(0).plan.toString();
  auto sum = [&](std::size_t i) {
    float s = 0;
    for (int r = 0; r < n; ++r) s += World::value(r, i);
    return average ? s / static_cast<float>(n) : s;
  };
  for (int r = 0; r < n; ++r) {
    const std::vector<float>& out = w.rank(r).out;
    for (std::size_t i = 0; i < out.size(); ++i) {
      float want = kUnwritten;
      switch (coll) {
        case Coll::kAllReduce:
          want = sum(i);
          break;
        case Coll::kBroadcast:
          want = World::value(root, i);
          break;
        case Coll::kReduce:
          want = r == root ? sum(i) : kUnwritten;
          break;
        case Coll::kAllGather:
          want = World::value(static_cast<int>(i / count), i % count);
          break;
        case Coll::kReduceScatter:
          want = sum(static_cast<std::size_t>(r) * count + i);
          break;
        default:
          break;
      }
      ASSERT_EQ(out[i], want) << what << ": rank " << r << " element " << i << "\n"
                              << w.rank(r).plan.toString();
    }
  }
}

TEST(HierarchyPlan, EveryCollectiveGivesItsDefinition) {
  for (int nodes : {2, 3}) {
    for (int local : {1, 2, 3}) {
      for (std::size_t count : {std::size_t{1}, std::size_t{5}, std::size_t{13}}) {
        for (bool average : {false, true}) {
          check(Coll::kAllReduce, nodes, local, count, 0, average);
          check(Coll::kReduceScatter, nodes, local, count, 0, average);
          for (int root = 0; root < nodes * local; ++root) {
            check(Coll::kReduce, nodes, local, count, root, average);
          }
        }
        check(Coll::kAllGather, nodes, local, count, 0, false);
        for (int root = 0; root < nodes * local; ++root) {
          check(Coll::kBroadcast, nodes, local, count, root, false);
        }
      }
    }
  }
}

TEST(HierarchyPlan, PrintsItsParts) {
  HierShape s;
  s.coll = Coll::kAllReduce;
  s.count = 10;
  s.elem = 4;
  s.average = true;
  s.rank = 3;
  s.size = 4;
  s.localRank = 1;
  s.localSize = 2;
  s.crossRank = 1;
  s.nodes = 2;
  EXPECT_EQ(hierarchicalPlan(s, Tuning{}, 1 << 20).toString(),
            "node open allreduce 10 in+0 -> out+0\n"
            "cross allreduce 5 slice+0 -> slice+0 (halving-doubling)\n"
            "average 5 slice+0\n"
            "node close\n");
  s.coll = Coll::kReduce;
  s.root = 0;
  s.rootLocal = 0;
  s.rootNode = 0;
  s.rank = 2;
  s.localRank = 0;
  EXPECT_EQ(hierarchicalPlan(s, Tuning{}, 1 << 20).toString(),
            "node reduce 10 in+0 -> staging+0 root 0\n"
            "cross reduce 10 staging+0 -> staging+0 root 0 (tree)\n"
            "staging 40B\n");
  s.coll = Coll::kBarrier;
  EXPECT_TRUE(hierarchicalPlan(s, Tuning{}, 1 << 20).parts.empty());
}

}  // namespace
}  // namespace cohort::collective

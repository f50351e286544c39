// The one-round ("linear") schedules, the pairwise alltoall and the
// dissemination barrier: pure rank arithmetic, no I/O.
#include "collective/schedule.h"
#include "collective/steps.h"

namespace cohort::collective {

using namespace steps;

namespace {

// One round from the root to every other rank: a non-root receives `bytes`
// into its output at 0; the root sends peer i the bytes of `src` at at(i).
template <typename At>
void rootToEveryPeer(std::vector<Step>* round, int rank, int size, int root, std::size_t bytes,
                     Buf src, At at) {
  if (rank != root) {
    round->push_back(recv(root, Buf::kOutput, 0, bytes));
    return;
  }
  for (int i = 0; i < size; ++i) {
    if (i != root) round->push_back(send(i, src, at(i), bytes));
  }
}

// One round in which this rank sends `bytes` of its input to every peer, read
// at from(i) for peer i, and receives as much from each into into(i). The
// linear schedules below start with it: one message's latency instead of the
// ring's size - 1 rounds; what they do locally comes after, so the first round
// writes nothing before the argument check.
template <typename From, typename Into>
void exchangeWithEveryPeer(Schedule* s, int rank, int size, std::size_t bytes, From from,
                           Into into) {
  auto& round = s->round();
  for (int i = 0; i < size; ++i) {
    if (i == rank) continue;
    round.push_back(send(i, Buf::kInput, from(i), bytes));
    const Range to = into(i);
    round.push_back(recv(i, to.buf, to.offset, bytes));
  }
}

}  // namespace

Schedule linearGather(int rank, int size, int root, std::size_t count, std::size_t elem) {
  Schedule s;
  s.algorithm = "linear";
  const std::size_t bytes = count * elem;
  auto& round = s.round();
  if (rank != root) {
    round.push_back(send(root, Buf::kInput, 0, bytes));
    return s;
  }
  round.push_back(copy({Buf::kInput, 0}, {Buf::kOutput, static_cast<std::size_t>(root) * bytes}, bytes));
  for (int i = 0; i < size; ++i) {
    if (i != root) round.push_back(recv(i, Buf::kOutput, static_cast<std::size_t>(i) * bytes, bytes));
  }
  return s;
}

Schedule linearScatter(int rank, int size, int root, std::size_t count, std::size_t elem) {
  Schedule s;
  s.algorithm = "linear";
  const std::size_t bytes = count * elem;
  auto& round = s.round();
  auto at = [&](int i) { return static_cast<std::size_t>(i) * bytes; };
  if (rank == root) round.push_back(copy({Buf::kInput, at(root)}, {Buf::kOutput, 0}, bytes));
  rootToEveryPeer(&round, rank, size, root, bytes, Buf::kInput, at);
  return s;
}

Schedule linearAllGather(int rank, int size, std::size_t count, std::size_t elem, bool inPlace) {
  Schedule s;
  s.algorithm = "linear";
  const std::size_t bytes = count * elem;
  exchangeWithEveryPeer(&s, rank, size, bytes, [](int) { return std::size_t{0}; }, [&](int i) {
    return Range{Buf::kOutput, static_cast<std::size_t>(i) * bytes};
  });
  const auto r = static_cast<std::size_t>(rank);
  if (!inPlace) s.round().push_back(copy({Buf::kInput, 0}, {Buf::kOutput, r * bytes}, bytes));
  return s;
}

Schedule linearAllToAll(int rank, int size, std::size_t count, std::size_t elem) {
  Schedule s;
  s.algorithm = "linear";
  const std::size_t bytes = count * elem;
  auto at = [&](int i) { return static_cast<std::size_t>(i) * bytes; };
  exchangeWithEveryPeer(&s, rank, size, bytes, at,
                        [&](int i) { return Range{Buf::kOutput, at(i)}; });
  const auto r = static_cast<std::size_t>(rank);
  s.round().push_back(copy({Buf::kInput, r * bytes}, {Buf::kOutput, r * bytes}, bytes));
  return s;
}

// The root sends to every rank in one round (one message's latency instead of
// the tree's log2(size)).
Schedule linearBroadcast(int rank, int size, int root, std::size_t count, std::size_t elem) {
  Schedule s;
  s.algorithm = "linear";
  rootToEveryPeer(&s.round(), rank, size, root, count * elem, Buf::kOutput,
                  [](int) { return std::size_t{0}; });
  return s;
}

// Every block goes to its owner in one round and lands in scratch (peer by
// peer); the owner then adds them to its own in rank order.
Schedule linearReduceScatter(int rank, int size, std::size_t count, std::size_t elem) {
  Schedule s;
  s.algorithm = "linear";
  const std::size_t bytes = count * elem;
  const auto r = static_cast<std::size_t>(rank);
  s.scratchBytes = static_cast<std::size_t>(size - 1) * bytes;
  auto slot = [&](int i) { return static_cast<std::size_t>(i < rank ? i : i - 1) * bytes; };
  exchangeWithEveryPeer(&s, rank, size, bytes,
                        [&](int i) { return static_cast<std::size_t>(i) * bytes; },
                        [&](int i) { return Range{Buf::kScratch, slot(i)}; });
  auto& sum = s.round();
  sum.push_back(copy({Buf::kInput, r * bytes}, {Buf::kOutput, 0}, bytes));
  for (int i = 0; i < size; ++i) {
    if (i != rank) sum.push_back(reduceLocal({Buf::kScratch, slot(i)}, {Buf::kOutput, 0}, bytes));
  }
  return s;
}

Schedule pairwiseAllToAll(int rank, int size, std::size_t count, std::size_t elem) {
  Schedule s;
  s.algorithm = "pairwise";
  const std::size_t bytes = count * elem;
  const auto r = static_cast<std::size_t>(rank);
  s.round().push_back(copy({Buf::kInput, r * bytes}, {Buf::kOutput, r * bytes}, bytes));
  for (int step = 1; step < size; ++step) {
    const int to = mod(rank + step, size), from = mod(rank - step, size);
    auto& round = s.round();
    round.push_back(send(to, Buf::kInput, static_cast<std::size_t>(to) * bytes, bytes));
    round.push_back(recv(from, Buf::kOutput, static_cast<std::size_t>(from) * bytes, bytes));
  }
  return s;
}

Schedule disseminationBarrier(int rank, int size) {
  Schedule s;
  s.algorithm = "dissemination";
  for (int k = 1; k < size; k *= 2) {
    auto& round = s.round();
    round.push_back(send(mod(rank + k, size), Buf::kOutput, 0, 0));
    round.push_back(recv(mod(rank - k, size), Buf::kOutput, 0, 0));
  }
  return s;
}

}  // namespace cohort::collective

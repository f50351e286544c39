// The direct (mesh) schedule builders: which share of the data each rank takes,
// in which chunks, and which members' buffers it reads and writes. The executor
// runs them (executor_shared.cc); the mesh provides the barriers and the
// mapped buffers.
#include <algorithm>

#include "collective/direct.h"
#include "collective/steps.h"

namespace cohort::collective {

using namespace steps;

namespace {

Range in(int member, std::size_t offset) { return {Buf::kInput, offset, member}; }
Range out(int member, std::size_t offset) { return {Buf::kOutput, offset, member}; }

// Chunks of at most `chunk` bytes (whole elements) over [0, bytes): f(done, len).
template <typename F>
void chunked(std::size_t bytes, std::size_t chunk, F&& f) {
  for (std::size_t done = 0; done < bytes; done += chunk) f(done, std::min(chunk, bytes - done));
}

// The reduction of [offset, offset + bytes) of every member's input, in rank
// order (every rank computes bit-identical results), chunk by chunk into
// `into` (a member's output at `offset`, which may lie over input 0 or 1 only,
// element for element) or, without, into a scratch chunk; each finished chunk
// goes to sink(round, done, at, len), `at` where it lies.
template <typename Sink>
void reduceChunks(Schedule* s, int size, const DirectShape& shape, const Tuning& tuning,
                  std::size_t offset, std::size_t bytes, const Range* into, Sink&& sink) {
  const std::size_t block = into != nullptr ? tuning.meshIntoChunkBytes
                            : size == 2     ? tuning.meshPairChunkBytes
                                            : tuning.meshChunkBytes;
  const std::size_t chunk = std::max(block / shape.elem, std::size_t{1}) * shape.elem;
  if (into == nullptr) s->scratchBytes = std::max(s->scratchBytes, std::min(chunk, bytes));
  auto& round = s->round();
  chunked(bytes, chunk, [&](std::size_t done, std::size_t len) {
    const Range at = into != nullptr ? Range{into->buf, into->offset + done, into->member}
                                     : Range{Buf::kScratch, 0};
    if (size == 1) {
      round.push_back(copy(in(0, offset + done), at, len));
    } else {
      round.push_back(combine(in(0, offset + done), in(1, offset + done), at, len));
      for (int j = 2; j < size; ++j) round.push_back(reduceLocal(in(j, offset + done), at, len));
    }
    if (shape.average) round.push_back(average(at, len));
    sink(round, done, at, len);
  });
}

// A put of `len` bytes at `at` to every member's output at `offset` but `skip`'s.
void putToEvery(std::vector<Step>& round, int size, Range at, std::size_t offset, std::size_t len,
                int skip) {
  for (int j = 0; j < size; ++j) {
    if (j != skip) round.push_back(copy(at, out(j, offset), len));
  }
}

void work(Schedule* s, int rank, int size, const DirectShape& shape, const Tuning& tuning) {
  const std::size_t e = shape.elem, b = shape.count * e;
  const auto me = static_cast<std::size_t>(rank);
  const Block mine = blockOf(shape.count, size, rank);
  switch (shape.coll) {
    case Coll::kAllReduce: {
      if (shape.hierarchical) {
        const std::size_t start = mine.offset * e;
        const Range into = out(rank, start);
        const bool direct = !shape.overInput || rank < 2;
        reduceChunks(s, size, shape, tuning, start, mine.count * e, direct ? &into : nullptr,
                     [&](std::vector<Step>& round, std::size_t done, Range at, std::size_t len) {
                       if (!direct) round.push_back(copy(at, out(rank, start + done), len));
                     });
        putToEvery(s->round(), size, into, start, mine.count * e, rank);
        break;
      }
      // Reduced in this rank's output, or (when it lies over this rank's input,
      // which a later member's reduction reads) in member 0's, unless the
      // outputs are streamed (a streaming store needs a source that is not one).
      const std::size_t start = mine.offset * e;
      const int target = !shape.overInput || rank < 2 ? rank : 0;
      const Range into = out(target, start);
      reduceChunks(s, size, shape, tuning, start, mine.count * e, shape.streaming ? nullptr : &into,
                   [&](std::vector<Step>& round, std::size_t done, Range at, std::size_t len) {
                     putToEvery(round, size, at, start + done, len, shape.streaming ? -1 : target);
                   });
      break;
    }
    case Coll::kReduceScatter: {
      const Range into = out(rank, 0);
      const bool direct = !shape.streaming && (!shape.overInput || rank < 2);
      reduceChunks(s, size, shape, tuning, me * b, b, direct ? &into : nullptr,
                   [&](std::vector<Step>& round, std::size_t done, Range at, std::size_t len) {
                     if (!direct) round.push_back(copy(at, out(rank, done), len));
                   });
      break;
    }
    case Coll::kReduce: {
      // Whether the root's output lies over its input is not known here: a root
      // past the first two reduces through scratch.
      const std::size_t start = mine.offset * e;
      const Range into = out(shape.root, start);
      const bool direct = shape.root < 2;
      reduceChunks(s, size, shape, tuning, start, mine.count * e, direct ? &into : nullptr,
                   [&](std::vector<Step>& round, std::size_t done, Range at, std::size_t len) {
                     if (!direct) round.push_back(copy(at, out(shape.root, start + done), len));
                   });
      break;
    }
    case Coll::kAllGather: {
      // Chunk by chunk, so that each is read from memory once and from cache for
      // the other members.
      auto& round = s->round();
      chunked(b, tuning.meshIntoChunkBytes, [&](std::size_t done, std::size_t len) {
        putToEvery(round, size, in(rank, done), me * b + done, len, shape.overInput ? rank : -1);
      });
      break;
    }
    case Coll::kBroadcast: {
      // Every rank (the root too) copies its block of the root's buffer into
      // every other output: all share the work, and the root's buffer is read once.
      const std::size_t start = mine.offset * e;
      auto& round = s->round();
      chunked(mine.count * e, tuning.meshIntoChunkBytes, [&](std::size_t done, std::size_t len) {
        putToEvery(round, size, out(shape.root, start + done), start + done, len, shape.root);
      });
      break;
    }
    case Coll::kGather:
      s->round().push_back(copy(in(rank, 0), out(shape.root, me * b), b));
      break;
    case Coll::kScatter:
      s->round().push_back(copy(in(shape.root, me * b), out(rank, 0), b));
      break;
    case Coll::kAllToAll: {
      auto& round = s->round();
      for (int j = 0; j < size; ++j) {
        round.push_back(copy(in(rank, static_cast<std::size_t>(j) * b), out(j, me * b), b));
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace

Schedule directSchedule(int rank, int size, const DirectShape& shape, const Tuning& tuning) {
  Schedule s;
  s.algorithm = "direct";
  s.shared = true;
  // A reduce's copies stay in cache for the root, which reads the result next.
  s.streaming = shape.streaming && !shape.hierarchical && shape.coll != Coll::kReduce &&
                shape.coll != Coll::kGather && shape.coll != Coll::kScatter;
  s.round() = {signal("arrival"), wait("arrival")};
  if (shape.coll == Coll::kBarrier) return s;
  work(&s, rank, size, shape, tuning);
  s.round() = {signal("completion"), wait("completion")};
  for (const auto& round : s.rounds) {
    for (const Step& step : round) {
      for (const Range* r : {&step.src, &step.src2, &step.dst}) {
        if (r->member < 0) continue;
        s.memberInputs = s.memberInputs || r->buf == Buf::kInput;
        s.memberOutputs = s.memberOutputs || r->buf == Buf::kOutput;
      }
    }
  }
  return s;
}

}  // namespace cohort::collective

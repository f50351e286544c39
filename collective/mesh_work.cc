// The mesh's data movement: each rank's share of a collective (Mesh::work), read
// from and written to its peers' mapped buffers in cache-sized blocks, and a posted
// call's output made from the members' slots (Mesh::reducePosted). The
// synchronisation around them is in mesh.cc, mesh_sync.cc and mesh_posted.cc.
#include <algorithm>
#include <cstring>

#include "collective/mesh.h"
#include "collective/schedule.h"
#include "kernels/copy.h"
#include "kernels/reduce.h"

namespace cohort::collective {

// Non-temporal stores once the operation's buffers on all ranks together (the
// bytes it touches) outgrow the last-level cache; below that, the outputs stay
// in cache.
bool Mesh::streams(const OpDesc& op) const {
  // A broadcast has one buffer per rank.
  const std::size_t in = op.coll == Coll::kBroadcast ? 0 : op.inputBytes(n_);
  return (in + op.outputBytes(n_)) * static_cast<std::size_t>(n_) >= tuning_.meshStreamingBytes;
}

static void copyOut(char* dst, const char* src, std::size_t bytes, bool streaming) {
  if (streaming) {
    kernels::streamCopy(dst, src, bytes);
  } else {
    std::memcpy(dst, src, bytes);
  }
}

// Copies `src` to dst(j) for every member j (nullptr: skip) block by block, so
// that each block is read from memory once and from L1 for the others.
template <typename Dst>
static void copyToEvery(int n, const char* src, std::size_t bytes, bool streaming,
                        std::size_t block, Dst&& dst) {
  for (std::size_t done = 0; done < bytes; done += block) {
    const std::size_t len = std::min(block, bytes - done);
    for (std::size_t j = 0; j < static_cast<std::size_t>(n); ++j) {
      char* d = dst(j);
      if (d != nullptr) copyOut(d + done, src + done, len, streaming);
    }
  }
}

// out = in[0] (op) in[1] (op) ... over [offset, offset + bytes), in cache-sized
// blocks, always in rank order: every rank computes bit-identical results.
static void reduceAll(const std::vector<const char*>& in, std::size_t offset, std::size_t bytes,
                      const kernels::Reduction& red, char* out) {
  if (in.size() == 1) {
    std::memmove(out, in[0] + offset, bytes);
    return;
  }
  red.fn(out, in[0] + offset, in[1] + offset, bytes, red.context);
  for (std::size_t j = 2; j < in.size(); ++j) red.fn(out, out, in[j] + offset, bytes, red.context);
}

// Reduces [offset, offset + bytes) of every input through a cache-sized block and
// hands each finished block to `sink(offsetInRange, data, len)`. The inputs are
// read before any output is written, so in-place operations are safe. With
// `into` (which may overlap in[0] or in[1] only, element for element) the
// blocks are reduced there instead of in a scratch block, and `data` points
// into it: one pass less over the result.
template <typename Sink>
static void reduceBlocks(const OpDesc& op, int n, const Tuning& tuning,
                         const std::vector<const char*>& in, std::size_t offset, std::size_t bytes,
                         char* into, Sink&& sink) {
  static thread_local std::vector<char> acc;
  const std::size_t e = dataTypeSize(op.type);
  const std::size_t block = into != nullptr  ? tuning.meshIntoChunkBytes
                            : in.size() == 2 ? tuning.meshPairChunkBytes
                                             : tuning.meshChunkBytes;
  const std::size_t chunk = block / e * e;
  if (into == nullptr && acc.size() < chunk) acc.resize(chunk);
  const auto& red = kernels::reductionFor(op.type, op.op);
  for (std::size_t done = 0; done < bytes; done += chunk) {
    const std::size_t len = std::min(chunk, bytes - done);
    char* out = into != nullptr ? into + done : acc.data();
    reduceAll(in, offset + done, len, red, out);
    if (op.op == ReduceOp::kAvg) kernels::finishAverage(out, len / e, op.type, n);
    sink(done, out, len);
  }
}

// Where reduceBlocks may reduce [offset, ...) in place: the first of `outs`
// (each an output at `offset`) that overlaps no input past the first two, or
// nullptr (then it goes through a scratch block). Only while the outputs stay
// in cache: streaming stores need a source that is not an output.
static char* reduceTarget(const std::vector<const char*>& in, std::size_t offset,
                          std::initializer_list<char*> outs, bool streaming) {
  if (streaming) return nullptr;
  for (char* o : outs) {
    if (o == nullptr) continue;
    bool clear = true;
    for (std::size_t k = 2; k < in.size() && clear; ++k) clear = o != in[k] + offset;
    if (clear) return o;
  }
  return nullptr;
}

void Mesh::work(const OpDesc& op, const Views& v) {
  const std::size_t e = dataTypeSize(op.type);
  const std::size_t b = op.count * e;
  const auto me = static_cast<std::size_t>(me_);
  const bool streaming = streams(op);
  switch (op.coll) {
    case Coll::kAllReduce: {
      const Block mine = blockOf(op.count, n_, me_);
      const std::size_t start = mine.offset * e;
      char* into = reduceTarget(v.in, start, {v.out[me] + start, v.out[0] + start}, streaming);
      reduceBlocks(op, n_, tuning_, v.in, start, mine.count * e, into,
                   [&](std::size_t off, const char* data, std::size_t len) {
                     for (char* o : v.out) {
                       if (o + start + off != data) copyOut(o + start + off, data, len, streaming);
                     }
                   });
      break;
    }
    case Coll::kReduceScatter: {
      char* into = reduceTarget(v.in, me * b, {v.out[me]}, streaming);
      reduceBlocks(op, n_, tuning_, v.in, me * b, b, into,
                   [&](std::size_t off, const char* data, std::size_t len) {
                     if (v.out[me] + off != data) copyOut(v.out[me] + off, data, len, streaming);
                   });
      break;
    }
    case Coll::kReduce: {
      const Block mine = blockOf(op.count, n_, me_);
      char* dst = v.out[static_cast<std::size_t>(op.root)] + mine.offset * e;
      reduceBlocks(op, n_, tuning_, v.in, mine.offset * e, mine.count * e,
                   reduceTarget(v.in, mine.offset * e, {dst}, false),
                   [&](std::size_t off, const char* data, std::size_t len) {
                     if (dst + off != data) std::memcpy(dst + off, data, len);
                   });
      break;
    }
    case Coll::kAllGather:
      copyToEvery(n_, v.in[me], b, streaming, tuning_.meshIntoChunkBytes,
                  [&](std::size_t j) -> char* {
                    char* o = v.out[j] + me * b;
                    return o == v.in[me] ? nullptr : o;  // in place
                  });
      break;
    case Coll::kBroadcast: {
      // Every rank (the root too) copies its block of the root's buffer into
      // every other output: all ranks share the work, and the root's buffer
      // is read once.
      const Block mine = blockOf(op.count, n_, me_);
      const char* src = v.in[static_cast<std::size_t>(op.root)] + mine.offset * e;
      copyToEvery(n_, src, mine.count * e, streaming, tuning_.meshIntoChunkBytes,
                  [&](std::size_t j) -> char* {
                    return static_cast<int>(j) == op.root ? nullptr : v.out[j] + mine.offset * e;
                  });
      break;
    }
    case Coll::kGather:
      std::memmove(v.out[static_cast<std::size_t>(op.root)] + me * b, v.in[me], b);
      break;
    case Coll::kScatter:
      std::memcpy(v.out[me], v.in[static_cast<std::size_t>(op.root)] + me * b, b);
      break;
    case Coll::kAllToAll:
      for (std::size_t j = 0; j < v.out.size(); ++j) {
        copyOut(v.out[j] + me * b, v.in[me] + j * b, b, streaming);
      }
      break;
    default:
      break;
  }
  kernels::streamFence();  // streaming stores are visible before the completion barrier
}

// The hierarchical allreduce's node-local step: [offset, offset + bytes) of every
// member's input, reduced into `slice`.
void Mesh::reduceBlock(const OpDesc& op, const Views& v, std::size_t offset, std::size_t bytes,
                       char* slice) {
  reduceBlocks(op, n_, tuning_, v.in, offset, bytes, reduceTarget(v.in, offset, {slice}, false),
               [&](std::size_t off, const char* data, std::size_t len) {
                 if (slice + off != data) std::memcpy(slice + off, data, len);
               });
}

void Mesh::reducePosted(const OpDesc& op, std::uint64_t call) {
  const std::size_t e = dataTypeSize(op.type);
  const std::size_t b = op.count * e;
  const std::size_t i = (call - 1) % kPostSlots;
  const auto me = static_cast<std::size_t>(me_);
  std::vector<const char*>& staged = views_->staged;
  staged.resize(static_cast<std::size_t>(n_));
  for (std::size_t j = 0; j < staged.size(); ++j) {
    staged[j] = reinterpret_cast<const char*>(region(static_cast<int>(j)).post[i].data);
  }
  // Offsets in staged[me] are the input's (only its own block is read there).
  if (!posted_[i].ownBlockPosted) staged[me] = static_cast<const char*>(op.input);
  const auto& red = kernels::reductionFor(op.type, op.op);
  switch (op.coll) {
    case Coll::kAllReduce:
      reduceAll(staged, 0, b, red, static_cast<char*>(op.output));
      if (op.op == ReduceOp::kAvg) kernels::finishAverage(op.output, op.count, op.type, n_);
      break;
    case Coll::kReduceScatter:
      reduceAll(staged, me * b, b, red, static_cast<char*>(op.output));
      if (op.op == ReduceOp::kAvg) kernels::finishAverage(op.output, op.count, op.type, n_);
      break;
    case Coll::kAllGather:
      for (std::size_t j = 0; j < staged.size(); ++j) {
        std::memcpy(static_cast<char*>(op.output) + j * b, staged[j], b);
      }
      break;
    case Coll::kAllToAll:
      for (std::size_t j = 0; j < staged.size(); ++j) {
        std::memcpy(static_cast<char*>(op.output) + j * b, staged[j] + me * b, b);
      }
      break;
    default:
      break;
  }
}

}  // namespace cohort::collective

#include "collective/mesh.h"

#include <algorithm>
#include <cstring>

#include "collective/op_history.h"
#include "collective/schedule.h"
#include "common/error.h"
#include "common/trace.h"
#include "kernels/copy.h"
#include "kernels/reduce.h"

namespace cohort::collective {

using transport::shm::ControlBlock;
using transport::shm::kStagingBytes;
using transport::shm::OpSlot;
using transport::shm::SegmentRef;

// Kept by the mesh between operations so that a call allocates nothing.
struct Mesh::Views {
  std::vector<const char*> in;
  std::vector<char*> out;
  std::vector<const char*> staged;  // the members' post slots (reducePosted())
};

Mesh::Mesh(transport::shm::ShmTransport* shm, std::vector<const transport::shm::ShmPeer*> members,
           int me, const Tuning& tuning, std::function<Status(std::size_t, void**)> scratch)
    : shm_(shm),
      members_(std::move(members)),
      me_(me),
      n_(static_cast<int>(members_.size())),
      scratch_(std::move(scratch)),
      waitPolicy_(WaitPolicy::forPeersFromConfig(n_)),
      tuning_(tuning),
      views_(std::make_unique<Views>()) {
  // A staged call's data goes through a post slot or an eager slot.
  COHORT_CHECK(tuning_.meshStagedBytes <= kStagingBytes &&
               tuning_.meshStagedBytes <= transport::shm::kEagerBytes);
}

Mesh::~Mesh() { leave(transport::shm::Departure::kDestroyed); }

bool Mesh::supports(Coll c) {
  switch (c) {
    case Coll::kAllReduce: case Coll::kAllGather: case Coll::kReduceScatter:
    case Coll::kBroadcast: case Coll::kReduce: case Coll::kGather: case Coll::kScatter:
    case Coll::kAllToAll: case Coll::kBarrier:
      return true;
    default:
      return false;
  }
}

Status Mesh::publish(const OpDesc& op, const void* in, const void* out, Deadline deadline,
                     const std::atomic<bool>& aborted, Views* views) {
  COHORT_RETURN_IF_ERROR(settle(op, deadline, aborted));
  const std::size_t slot = slot_;
  OpSlot& mine = members_[static_cast<std::size_t>(me_)]->block->op[slot];
  auto ref = [&](const void* p, SegmentRef* r) {
    if (p == nullptr) {
      *r = SegmentRef{kNoBuffer, 0, 0};
      return Status::Ok();
    }
    return shm_->refOf(p, r);
  };
  if (views != nullptr) {
    COHORT_RETURN_IF_ERROR(ref(in, &mine.input));
    COHORT_RETURN_IF_ERROR(ref(out, &mine.output));
  }
  const auto fp = announce(op);
  COHORT_RETURN_IF_ERROR(barrier(op, "arrival", deadline, aborted));
  COHORT_RETURN_IF_ERROR(sameCalls(slot, fp, op));
  if (views == nullptr) return Status::Ok();
  views->in.assign(static_cast<std::size_t>(n_), nullptr);
  views->out.assign(static_cast<std::size_t>(n_), nullptr);
  for (int j = 0; j < n_; ++j) {
    const auto* m = members_[static_cast<std::size_t>(j)];
    const OpSlot& theirs = m->block->op[slot];
    if (theirs.input.device != kNoBuffer) views->in[static_cast<std::size_t>(j)] = static_cast<const char*>(m->translate(theirs.input));
    if (theirs.output.device != kNoBuffer) views->out[static_cast<std::size_t>(j)] = static_cast<char*>(m->translate(theirs.output));
  }
  return Status::Ok();
}

std::array<std::uint64_t, 4> Mesh::announce(const OpDesc& op) {
  OpSlot& mine = members_[static_cast<std::size_t>(me_)]->block->op[slot_];
  const auto fp = op.fingerprint();
  storeFingerprint(mine.fingerprint, fp);
  mine.seq.store(op.seq, std::memory_order_release);
  return fp;
}

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

Status Mesh::hostFallback(const OpDesc& op, std::size_t inB, std::size_t outB, const void** in,
                          void** out) {
  // Buffers outside every segment cannot be mapped by peers: go through scratch.
  transport::shm::SegmentRef r;
  const bool inOk = *in == nullptr || shm_->refOf(*in, &r).ok();
  const bool outOk = *out == nullptr || shm_->refOf(*out, &r).ok();
  if (inOk && outOk) return Status::Ok();
  void* area = nullptr;
  COHORT_RETURN_IF_ERROR(scratch_(inB + outB + 128, &area));
  char* base = static_cast<char*>(area);
  if (!inOk) {
    std::memcpy(base, *in, inB);
    if (*in == *out) *out = base;
    *in = base;
  }
  if (!outOk && *out != *in) *out = base + (inB + 63) / 64 * 64;
  return Status::Ok();
}

Status Mesh::large(const OpDesc& op, Deadline deadline, const std::atomic<bool>& aborted) {
  const std::size_t inB = op.inputBytes(n_), outB = op.outputBytes(n_);
  const void* in = op.input;
  void* out = op.output;
  if (op.coll == Coll::kBroadcast) in = out;  // one buffer
  COHORT_RETURN_IF_ERROR(hostFallback(op, inB, outB, &in, &out));
  Views& v = *views_;
  COHORT_RETURN_IF_ERROR(publish(op, in, out, deadline, aborted, &v));
  {
    trace::Span span("mesh", "work");
    work(op, v);
  }
  COHORT_RETURN_IF_ERROR(barrier(op, "completion", deadline, aborted));
  if (out != op.output && op.output != nullptr) std::memcpy(op.output, out, outB);
  return Status::Ok();
}

Status Mesh::hierarchicalAllReduce(const OpDesc& op, int worldSize,
                                   const std::function<Status(char*, std::size_t)>& inter,
                                   Deadline deadline, const std::atomic<bool>& aborted) {
  COHORT_RETURN_IF_ERROR(complete(kAllPosted, true, aborted));
  slot_ = calls_++ % 2;
  const std::size_t e = dataTypeSize(op.type);
  const std::size_t bytes = op.count * e;
  const void* in = op.input;
  void* out = op.output;
  COHORT_RETURN_IF_ERROR(hostFallback(op, bytes, bytes, &in, &out));
  Views& v = *views_;
  COHORT_RETURN_IF_ERROR(publish(op, in, out, deadline, aborted, &v));
  OpDesc local = op;
  if (local.op == ReduceOp::kAvg) local.op = ReduceOp::kSum;  // divided by the world size below
  const Block mine = blockOf(op.count, n_, me_);
  char* slice = v.out[static_cast<std::size_t>(me_)] + mine.offset * e;
  reduceBlocks(local, n_, tuning_, v.in, mine.offset * e, mine.count * e,
               reduceTarget(v.in, mine.offset * e, {slice}, false),
               [&](std::size_t off, const char* data, std::size_t len) {
                 if (slice + off != data) std::memcpy(slice + off, data, len);
               });
  Status s = inter(slice, mine.count);
  if (s.ok()) {
    if (op.op == ReduceOp::kAvg) kernels::finishAverage(slice, mine.count, op.type, worldSize);
    for (std::size_t j = 0; j < v.out.size(); ++j) {
      if (static_cast<int>(j) != me_) std::memcpy(v.out[j] + mine.offset * e, slice, mine.count * e);
    }
  }
  // Everyone passes the completion barrier, even after a failure, so that the
  // node's barrier counts stay aligned; the failure is returned afterwards.
  Status done = barrier(op, "completion", deadline, aborted);
  depart();
  if (!s.ok()) return s;
  COHORT_RETURN_IF_ERROR(done);
  if (out != op.output) std::memcpy(op.output, out, bytes);
  return Status::Ok();
}

bool Mesh::posts(const OpDesc& op) const {
  switch (op.coll) {
    case Coll::kAllReduce: case Coll::kReduceScatter: case Coll::kAllGather: case Coll::kAllToAll:
      return staged(op);
    default:
      return false;
  }
}

bool Mesh::ownBlockPosted(const OpDesc& op) const {
  if (op.coll != Coll::kAllToAll && op.coll != Coll::kReduceScatter) return true;
  // An output over the input (a reduce-scatter in place) would be read after
  // it was written: the slot keeps the block.
  const auto* in = static_cast<const char*>(op.input);
  const auto* out = static_cast<const char*>(op.output);
  return in < out + op.outputBytes(n_) && out < in + op.inputBytes(n_);
}

void Mesh::reducePosted(const OpDesc& op, std::uint64_t call) {
  const std::size_t e = dataTypeSize(op.type);
  const std::size_t b = op.count * e;
  const std::size_t i = (call - 1) % transport::shm::kPostSlots;
  const auto me = static_cast<std::size_t>(me_);
  std::vector<const char*>& staged = views_->staged;
  staged.resize(static_cast<std::size_t>(n_));
  for (std::size_t j = 0; j < staged.size(); ++j) {
    staged[j] = reinterpret_cast<const char*>(members_[j]->block->post[i].data);
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

Status Mesh::run(const OpDesc& op, Deadline deadline, const std::atomic<bool>& aborted) {
  Status s = runOnce(op, deadline, aborted);
  depart();
  return s;
}

Status Mesh::runOnce(const OpDesc& op, Deadline deadline, const std::atomic<bool>& aborted) {
  if (posts(op)) {
    std::uint64_t call = 0;
    COHORT_RETURN_IF_ERROR(post(op, deadline, aborted, &call));
    return complete(call, true, aborted);
  }
  // Later calls see the posted ones' outputs (they may read them).
  COHORT_RETURN_IF_ERROR(complete(kAllPosted, true, aborted));
  slot_ = calls_++ % 2;
  if (op.coll == Coll::kBarrier) return publish(op, nullptr, nullptr, deadline, aborted, nullptr);
  if (op.coll == Coll::kBroadcast && staged(op)) {
    return eagerBroadcast(op, deadline, aborted);
  }
  if (pulls(op)) return pulledBroadcast(op, deadline, aborted);
  return large(op, deadline, aborted);
}

// On a crowded node a barrier that everyone waits for costs more processor
// hand-offs than the copies of a broadcast cost: then the ranks copy the root's
// whole buffer themselves, waiting for the root only, while the root's buffer,
// read by every rank, stays in the last-level cache.
bool Mesh::pulls(const OpDesc& op) const {
  if (op.coll != Coll::kBroadcast || streams(op)) return false;
  return tuning_.meshPulledBroadcastMax > 0 &&
         op.count * dataTypeSize(op.type) <= tuning_.meshPulledBroadcastMax;
}

bool Mesh::staged(const OpDesc& op) const {
  const std::size_t b = op.count * dataTypeSize(op.type);
  const std::size_t n = static_cast<std::size_t>(n_);
  // What a rank reads from its peers' slots; an allreduce counts its size
  // once (its direct path reads that much from its peers too).
  std::size_t read = b * n;
  bool reduces = false;
  switch (op.coll) {
    case Coll::kAllReduce: read = b; reduces = true; break;
    case Coll::kReduceScatter: reduces = true; break;
    case Coll::kAllGather: case Coll::kAllToAll: break;
    case Coll::kBroadcast: read = b; break;
    default: return false;
  }
  const std::size_t limit = tuning_.meshStagedBytes;
  return read <= (reduces ? limit / 2 : limit);
}

}  // namespace cohort::collective

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

using transport::shm::SegmentRef;

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
  // The communicator asked the transport for regions this large.
  COHORT_CHECK(members_[static_cast<std::size_t>(me_)]->block->regionBytes >= sizeof(MeshRegion));
  // A staged call's data goes through a post slot or an eager slot.
  COHORT_CHECK(tuning_.meshStagedBytes <= kStagingBytes && tuning_.meshStagedBytes <= kEagerBytes);
  // input(j)/output(j) answer for every member, also before any call published buffers.
  views_->in.assign(static_cast<std::size_t>(n_), nullptr);
  views_->out.assign(static_cast<std::size_t>(n_), nullptr);
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

Status Mesh::signal(const OpDesc& op, const char* phase, bool first, const ExecBuffers& own,
                    Deadline deadline, const std::atomic<bool>& aborted) {
  if (first) {
    COHORT_RETURN_IF_ERROR(settle(op, deadline, aborted));
    OpSlot& mine = region(me_).op[slot_];
    // A barrier publishes no buffers (and leaves the slot's references alone).
    if (own.input != nullptr || own.output != nullptr) {
      // The buffers went through hostFallback, which found their references.
      COHORT_CHECK(own.input == refs_.in && own.output == refs_.out);
      mine.input = refs_.inRef;
      mine.output = refs_.outRef;
    }
    fingerprint_ = announce(op);
  }
  target_ = arrive();
  return Status::Ok();
}

Status Mesh::wait(const OpDesc& op, const char* phase, bool first, const Schedule& schedule,
                  Deadline deadline, const std::atomic<bool>& aborted) {
  {
    trace::Span span("mesh", phase);
    COHORT_RETURN_IF_ERROR(waitForAll(op, phase, target_, deadline, aborted));
  }
  if (!first) return Status::Ok();
  COHORT_RETURN_IF_ERROR(sameCalls(slot_, fingerprint_, op));
  // A schedule that names no member's buffer (a barrier) maps none.
  if (!(schedule.memberInputs || schedule.memberOutputs)) return Status::Ok();
  Views& v = *views_;
  v.in.assign(static_cast<std::size_t>(n_), nullptr);
  v.out.assign(static_cast<std::size_t>(n_), nullptr);
  for (int j = 0; j < n_; ++j) {
    const auto* m = members_[static_cast<std::size_t>(j)];
    const OpSlot& theirs = region(j).op[slot_];
    const auto k = static_cast<std::size_t>(j);
    if (schedule.memberInputs && theirs.input.device != kNoBuffer) {
      v.in[k] = static_cast<const char*>(m->translate(theirs.input));
    }
    if (schedule.memberOutputs && theirs.output.device != kNoBuffer) {
      v.out[k] = static_cast<char*>(m->translate(theirs.output));
    }
  }
  return Status::Ok();
}

std::array<std::uint64_t, 4> Mesh::announce(const OpDesc& op) {
  OpSlot& mine = region(me_).op[slot_];
  const auto fp = op.fingerprint();
  storeFingerprint(mine.fingerprint, fp);
  mine.seq.store(op.seq, std::memory_order_release);
  return fp;
}

Status Mesh::hostFallback(const OpDesc& op, std::size_t inB, std::size_t outB, const void** in,
                          void** out) {
  // Buffers outside every segment cannot be mapped by peers: go through scratch.
  // The references found are kept for this call's first signal (refs_).
  SegmentRef inRef{kNoBuffer, 0, 0}, outRef{kNoBuffer, 0, 0};
  const bool inOk = *in == nullptr || shm_->refOf(*in, &inRef).ok();
  const bool same = *out == *in;
  const bool outOk = *out == nullptr || (same ? inOk : shm_->refOf(*out, &outRef).ok());
  if (!inOk || !outOk) {
    void* area = nullptr;
    COHORT_RETURN_IF_ERROR(scratch_(inB + outB + 128, &area));
    char* base = static_cast<char*>(area);
    if (!inOk) {
      std::memcpy(base, *in, inB);
      if (same) *out = base;
      *in = base;
      COHORT_RETURN_IF_ERROR(shm_->refOf(base, &inRef));
    }
    if (!outOk && *out != *in) {
      *out = base + (inB + 63) / 64 * 64;
      COHORT_RETURN_IF_ERROR(shm_->refOf(*out, &outRef));
    }
  }
  if (*out == *in) outRef = inRef;
  refs_ = OwnRefs{*in, *out, inRef, outRef};
  return Status::Ok();
}

const Schedule& Mesh::scheduleFor(const DirectShape& shape) {
  if (!haveSchedule_ || !(shape == shape_)) {
    schedule_ = directSchedule(me_, n_, shape, tuning_);
    shape_ = shape;
    haveSchedule_ = true;
    if (scratchChunk_.size() < schedule_.scratchBytes) scratchChunk_.resize(schedule_.scratchBytes);
  }
  return schedule_;
}

// The reduction of a collective that reduces; any valid one for the others
// (their schedules have no reducing steps).
static const kernels::Reduction& reductionOf(const OpDesc& op) {
  switch (op.coll) {
    case Coll::kAllReduce: case Coll::kReduceScatter: case Coll::kReduce:
      return kernels::reductionFor(op.type, op.op);
    default:
      return kernels::reductionFor(DataType::kFloat32, ReduceOp::kSum);
  }
}

Status Mesh::direct(const OpDesc& op, Deadline deadline, const std::atomic<bool>& aborted) {
  const std::size_t inB = op.inputBytes(n_), outB = op.outputBytes(n_);
  const void* in = op.input;
  void* out = op.output;
  if (op.coll == Coll::kBroadcast) in = out;  // one buffer
  COHORT_RETURN_IF_ERROR(hostFallback(op, inB, outB, &in, &out));
  DirectShape shape;
  shape.coll = op.coll;
  shape.count = op.count;
  shape.elem = op.coll == Coll::kBarrier ? 1 : dataTypeSize(op.type);
  shape.root = op.root;
  shape.average = op.op == ReduceOp::kAvg;
  const auto* i = static_cast<const char*>(in);
  const auto* o = static_cast<const char*>(out);
  const std::size_t b = op.count * shape.elem, me = static_cast<std::size_t>(me_);
  switch (op.coll) {
    case Coll::kAllReduce: shape.overInput = i == o; break;
    case Coll::kReduceScatter: shape.overInput = i != nullptr && o == i + me * b; break;
    case Coll::kAllGather: shape.overInput = o != nullptr && i == o + me * b; break;
    default: break;
  }
  shape.streaming = streams(op);
  const Schedule& sched = scheduleFor(shape);
  const ExecBuffers buffers{i, const_cast<char*>(o), scratchChunk_.data(), this};
  COHORT_RETURN_IF_ERROR(
      executeShared(sched, buffers, reductionOf(op), op, n_, deadline, aborted));
  if (out != op.output && op.output != nullptr) std::memcpy(op.output, out, outB);
  return Status::Ok();
}

Status Mesh::hierarchicalAllReduce(const OpDesc& op,
                                   const std::function<Status(char*, std::size_t)>& inter,
                                   Deadline deadline, const std::atomic<bool>& aborted) {
  COHORT_RETURN_IF_ERROR(complete(kAllPosted, true, aborted));
  slot_ = calls_++ % 2;
  const std::size_t e = dataTypeSize(op.type);
  const std::size_t bytes = op.count * e;
  const void* in = op.input;
  void* out = op.output;
  COHORT_RETURN_IF_ERROR(hostFallback(op, bytes, bytes, &in, &out));
  DirectShape shape;
  shape.count = op.count;
  shape.elem = e;
  shape.overInput = in == out;
  shape.hierarchical = true;  // averages are sums here (inter() divides)
  const Schedule& sched = scheduleFor(shape);
  const ExecBuffers buffers{static_cast<const char*>(in), static_cast<char*>(out),
                            scratchChunk_.data(), this};
  const auto& red = kernels::reductionFor(op.type, op.op);
  // Rounds: 0 arrival, 1 this rank's block reduced over the node, 2 that block
  // put to the others, 3 completion.
  COHORT_RETURN_IF_ERROR(executeShared(sched, buffers, red, op, n_, deadline, aborted, 0, 2));
  const Block mine = blockOf(op.count, n_, me_);
  char* slice = static_cast<char*>(out) + mine.offset * e;
  Status s = inter(slice, mine.count);
  // After a failure this rank passes no further barrier: its arrival there would
  // count as its arrival at the round it skipped (one counter), and the others
  // would return their own input for its block as the result. It leaves the
  // mesh instead (concludeOp: its note first, so that they can name the cause),
  // which fails their waits.
  if (!s.ok()) return s;
  s = executeShared(sched, buffers, red, op, n_, deadline, aborted, 2);
  depart();
  if (!s.ok()) return s;
  if (out != op.output) std::memcpy(op.output, out, bytes);
  return Status::Ok();
}

// Non-temporal stores once the operation's buffers on all ranks together (the
// bytes it touches) outgrow the last-level cache; below that, the outputs stay
// in cache.
bool Mesh::streams(const OpDesc& op) const {
  // A broadcast has one buffer per rank.
  const std::size_t in = op.coll == Coll::kBroadcast ? 0 : op.inputBytes(n_);
  return (in + op.outputBytes(n_)) * static_cast<std::size_t>(n_) >= tuning_.meshStreamingBytes;
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
  if (op.coll == Coll::kBroadcast && staged(op)) {
    return eagerBroadcast(op, deadline, aborted);
  }
  if (pulls(op)) return pulledBroadcast(op, deadline, aborted);
  return direct(op, deadline, aborted);
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

// The mesh's posted calls: each rank copies its input into the next slot of its
// own ring and goes on; a call completes when every member posted it. And the
// check that finds a member that made another call where a posted call waits.
#include <algorithm>
#include <cstring>
#include <mutex>

#include "collective/mesh.h"
#include "collective/mesh_wait.h"
#include "common/error.h"
#include "kernels/reduce.h"

namespace cohort::collective {

namespace {

// out = in[0] (op) in[1] (op) ... over [offset, offset + bytes), in cache-sized
// blocks, always in rank order: every rank computes bit-identical results.
void reduceAll(const std::vector<const char*>& in, std::size_t offset, std::size_t bytes,
                      const kernels::Reduction& red, char* out) {
  if (in.size() == 1) {
    std::memmove(out, in[0] + offset, bytes);
    return;
  }
  red.fn(out, in[0] + offset, in[1] + offset, bytes, red.context);
  for (std::size_t j = 2; j < in.size(); ++j) red.fn(out, out, in[j] + offset, bytes, red.context);
}

}  // namespace

Status Mesh::failPosted(Status s) {
  // The others learn at their next wait for this rank; a failure caused by a
  // peer they find themselves (naming it, not this rank).
  if (s.code() != ErrorCode::kRemoteError) leave();
  postFailure_ = s;
  return s;
}

// A posted call needs nobody else to post: a rank copies its input into the
// next slot of its ring, completes whatever calls every member has posted by
// now, and goes on. It waits only when it comes back to a slot that a member
// has not read yet (the call kPostSlots ago has not completed there); then its
// own oldest call completes first, so that two ranks waiting for each other's
// slots always find the other's inputs there. Completing as soon as the inputs
// are there lets the others run up to kPostSlots calls ahead.
Status Mesh::post(const OpDesc& op, Deadline deadline, const std::atomic<bool>& aborted,
                  std::uint64_t* call) {
  std::lock_guard<std::mutex> lock(postMu_);
  if (!postFailure_.ok()) return postFailure_;
  constexpr std::uint64_t kSlots = kPostSlots;
  // An input that an earlier call not completed yet writes (calls chained in
  // place): that call completes first.
  if (readsPendingOutputLocked(op)) {
    COHORT_RETURN_IF_ERROR(completeLocked(posts_, true, aborted));
  }
  const std::uint64_t c = posts_ + 1;
  if (c > kSlots && everyoneFinished_ < c - kSlots) {
    COHORT_RETURN_IF_ERROR(completeLocked(c - kSlots, true, aborted));
    auto finished = [&](int j) { return region(j).finished.load(std::memory_order_acquire); };
    auto done = [&](int j) { return finished(j) >= c - kSlots; };
    auto all = [&] {
      std::uint64_t fewest = ~std::uint64_t(0);
      for (int j = 0; j < n_; ++j) fewest = std::min(fewest, finished(j));
      everyoneFinished_ = fewest;
      return fewest >= c - kSlots;
    };
    if (!all()) {
      Status s = waitFor(op, "a free post slot", deadline, aborted, all, /*posted=*/true,
                         [&](int j) { return !done(j); });
      if (!s.ok()) return failPosted(std::move(s));
    }
  }
  postLocked(op, deadline, call);
  Status s = completeLocked(c, false, aborted);
  return s.code() == ErrorCode::kNotReady ? Status::Ok() : s;
}

void Mesh::postLocked(const OpDesc& op, Deadline deadline, std::uint64_t* call) {
  const std::uint64_t c = posts_ + 1;
  const std::size_t i = (c - 1) % kPostSlots;
  const auto* in = static_cast<const char*>(op.input);
  PostSlot& slot = region(me_).post[i];
  const bool ownPosted = op.input == nullptr || ownBlockPosted(op);
  if (op.input != nullptr) {
    // Everything, or everything but this rank's own block [skip, skip + b).
    const std::size_t all = op.inputBytes(n_);
    const std::size_t b = ownPosted ? 0 : op.count * dataTypeSize(op.type);
    const std::size_t skip = ownPosted ? all : static_cast<std::size_t>(me_) * b;
    std::memcpy(slot.data, in, skip);
    std::memcpy(slot.data + skip + b, in + skip + b, all - skip - b);
  }
  const auto fp = op.fingerprint();
  storeFingerprint(slot.fingerprint, fp);
  slot.call.store(c, std::memory_order_release);
  region(0).sharedWake.notifyIfSleeping();  // members waiting for this input
  Posted& p = posted_[i];
  p.op.assign(op);
  p.fingerprint = fp;
  p.ownBlockPosted = ownPosted;
  p.deadline = deadline;
  const auto* out = static_cast<const char*>(op.output);
  if (completedPosts_ == posts_) pendingLo_ = pendingHi_ = out;
  pendingLo_ = std::min(pendingLo_, out);
  pendingHi_ = std::max(pendingHi_, out + op.outputBytes(n_));
  posts_ = c;
  *call = c;
}

bool Mesh::readsPendingOutputLocked(const OpDesc& op) const {
  const auto* in = static_cast<const char*>(op.input);
  return completedPosts_ < posts_ && in != nullptr && in < pendingHi_ &&
         pendingLo_ < in + op.inputBytes(n_);
}

bool Mesh::postWaitsLocked(const OpDesc& op) {
  if (!postFailure_.ok() || readsPendingOutputLocked(op)) return true;
  const std::uint64_t c = posts_ + 1;
  constexpr std::uint64_t kSlots = kPostSlots;
  if (c <= kSlots || everyoneFinished_ >= c - kSlots) return false;
  std::uint64_t fewest = ~std::uint64_t(0);
  for (int j = 0; j < n_; ++j) {
    fewest = std::min(fewest, region(j).finished.load(std::memory_order_acquire));
  }
  everyoneFinished_ = fewest;
  return fewest < c - kSlots;
}

bool Mesh::postIfFree(const OpDesc& op, Deadline deadline, std::uint64_t* call, bool tryLock) {
  std::unique_lock<std::mutex> lock(postMu_, std::defer_lock);
  if (tryLock) {
    if (!lock.try_lock()) return false;
  } else {
    lock.lock();
  }
  if (postWaitsLocked(op)) return false;
  postLocked(op, deadline, call);
  return true;
}

Status Mesh::awaitFreeSlot(const OpDesc& op, Deadline deadline,
                           const std::atomic<bool>& aborted) {
  std::uint64_t c = 0, pending = 0;
  {
    std::lock_guard<std::mutex> lock(postMu_);
    if (!postFailure_.ok()) return postFailure_;
    if (!postWaitsLocked(op)) return Status::Ok();
    if (readsPendingOutputLocked(op)) pending = posts_;
    c = posts_ + 1;
  }
  if (pending > 0) return completeWaiting(pending, aborted);
  const std::uint64_t slotCall = c - kPostSlots;  // the call that last used the slot
  auto finished = [&](int j) {
    return region(j).finished.load(std::memory_order_acquire) >= slotCall;
  };
  auto all = [&] {
    for (int j = 0; j < n_; ++j) if (!finished(j)) return false;
    return true;
  };
  Status s = waitFor(op, "a free post slot", deadline, aborted, all, /*posted=*/true,
                     [&](int j) { return !finished(j); });
  if (s.ok()) return s;
  std::lock_guard<std::mutex> lock(postMu_);
  if (!postFailure_.ok()) return postFailure_;
  return postWaitsLocked(op) ? failPosted(std::move(s)) : Status::Ok();
}

Status Mesh::complete(std::uint64_t call, bool wait, const std::atomic<bool>& aborted) {
  std::lock_guard<std::mutex> lock(postMu_);
  return completeLocked(call, wait, aborted);
}

Status Mesh::tryComplete(std::uint64_t call, std::uint64_t* through) {
  *through = 0;
  std::unique_lock<std::mutex> lock(postMu_, std::try_to_lock);
  if (!lock.owns_lock()) return Status(ErrorCode::kNotReady, "");
  static const std::atomic<bool> kNotAborted{false};  // it does not wait
  Status s = completeLocked(call, false, kNotAborted);
  *through = completedPosts_;
  return s;
}

Status Mesh::completeWaiting(std::uint64_t call, const std::atomic<bool>& aborted) {
  for (;;) {
    std::uint64_t c = 0;
    std::size_t i = 0;
    OpDesc op;
    Deadline deadline = Deadline::never();
    {
      std::lock_guard<std::mutex> lock(postMu_);
      Status s = completeLocked(call, false, aborted);
      if (s.code() != ErrorCode::kNotReady) return s;
      c = completedPosts_ + 1;
      i = (c - 1) % kPostSlots;
      op.assign(posted_[i].op);
      deadline = posted_[i].deadline;
    }
    // Without the lock another thread may complete call c (and post into its slot
    // again): then this rank's finished count shows it.
    auto posted = [&](int j) {
      return region(j).post[i].call.load(std::memory_order_acquire) == c;
    };
    auto ready = [&] {
      if (region(me_).finished.load(std::memory_order_acquire) >= c) return true;
      for (int j = 0; j < n_; ++j) if (!posted(j)) return false;
      return true;
    };
    Status s = waitFor(op, "the members' posted inputs", deadline, aborted, ready,
                       /*posted=*/true, [&](int j) { return !posted(j); });
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(postMu_);
      if (!postFailure_.ok()) return postFailure_;
      if (completedPosts_ < c) return failPosted(std::move(s));
    }
  }
}

Status Mesh::completeLocked(std::uint64_t call, bool wait, const std::atomic<bool>& aborted) {
  constexpr std::uint64_t kSlots = kPostSlots;
  call = std::min(call, posts_);
  while (completedPosts_ < call) {
    if (!postFailure_.ok()) return postFailure_;
    const std::uint64_t c = completedPosts_ + 1;
    const std::size_t i = (c - 1) % kSlots;
    const OpDesc& op = posted_[i].op;
    // Nobody posts call c + kSlots before this rank completed c.
    auto posted = [&](int j) {
      return region(j).post[i].call.load(std::memory_order_acquire) == c;
    };
    auto all = [&] {
      for (int j = 0; j < n_; ++j) if (!posted(j)) return false;
      return true;
    };
    Status s = Status::Ok();
    if (!all()) {
      if (!wait) return Status(ErrorCode::kNotReady, "");
      s = waitFor(op, "the members' posted inputs", posted_[i].deadline, aborted, all,
                  /*posted=*/true, [&](int j) { return !posted(j); });
    }
    const auto& fp = posted_[i].fingerprint;
    for (int j = 0; j < n_ && s.ok(); ++j) {
      const std::uint64_t* theirs = region(j).post[i].fingerprint;
      if (!std::equal(fp.begin(), fp.end(), theirs)) s = mismatch(j, fp, theirs, op, false);
    }
    if (!s.ok()) return failPosted(std::move(s));
    reducePosted(op, c);
    if constexpr (kProtocolChecks) {
      checkPostSlotKept(members_, i, c, members_[static_cast<std::size_t>(me_)]->rank);
    }
    completedPosts_ = c;
    region(me_).finished.store(c, std::memory_order_release);
    region(0).sharedWake.notifyIfSleeping();  // members waiting for a free slot
  }
  return Status::Ok();
}

// Posted calls and the others wait for different things: a rank that posted a
// call waits for the others' posts, one that did not (a larger or another
// collective) for their arrival at a barrier. Neither comes, so each looks for
// this call's sequence number where the other kind of call leaves it.
Status Mesh::crossedCall(const OpDesc& op, bool posted) const {
  const auto fp = op.fingerprint();
  std::array<std::uint64_t, 4> found{};
  bool differs = false;
  auto look = [&](const std::uint64_t* slot) {
    const auto theirs = loadFingerprint(slot);
    if ((theirs[0] >> 8) == op.seq && theirs != fp) {
      found = theirs;
      differs = true;
    }
  };
  for (int j = 0; j < n_ && !differs; ++j) {
    if (j == me_) continue;
    const MeshRegion& b = region(j);
    if (posted) {
      for (const OpSlot& o : b.op) look(o.fingerprint);
      for (const auto& e : b.eagerFingerprint) look(e);
    } else {
      for (const auto& p : b.post) look(p.fingerprint);
    }
    if (differs) {
      return mismatchError(members_[static_cast<std::size_t>(me_)]->rank,
                           members_[static_cast<std::size_t>(j)]->rank, fingerprintDiff(fp, found),
                           op.describe());
    }
  }
  return Status::Ok();
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

// The calls queued on streams, and the tasks that run them: the run-ahead of
// posted calls, the swept calls the caller progresses (comm_ops.cc has the
// launch they serve), the calls whose tasks never ran.
#include <fmt/format.h>

#include <algorithm>

#include "collective/comm_impl.h"
#include "collective/staging.h"
#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "common/trace.h"

namespace cohort {

using collective::Algo;
using collective::Coll;
using collective::OpDesc;

bool Communicator::Impl::postable(const OpDesc& op) const {
  if (mesh_ == nullptr || size == 1 || op.coll == Coll::kSendRecv || !mesh_->posts(op)) {
    return false;
  }
  Algo algo = Algo::kAuto;
  if (!collective::selectAlgorithm(op, topo_, overrides_, &algo).ok() || algo != Algo::kMesh) {
    return false;
  }
  const collective::StagingPlan plan =
      collective::planStaging(op, algo, size, Config::global().buffSize, topo_.tuning);
  return plan.algo == Algo::kMesh && plan.pieceCount == 0;
}

// A call's task posts the calls queued right behind it while its peers have
// not all posted its own: then a rank that got ahead runs up to the mesh's
// ring of calls ahead of the slowest, instead of handing its processor over at
// every call (what a queue of small calls between more ranks than processors
// costs most).
bool Communicator::Impl::postAhead() {
  // The call is found by its place in the queue: only this worker removes calls
  // (from the front), and the caller's pushes may move them in memory, so its
  // description is copied under the lock.
  std::size_t index = 0;
  std::uint64_t historyId = 0;
  OpDesc op;
  {
    std::lock_guard<std::mutex> lock(queuedMu_);
    for (std::size_t i = 1; i < queued_.size(); ++i) {
      Queued& q = queued_[i];
      if (q.posted) continue;
      if (!q.follows) return false;
      index = i;
      historyId = q.historyId;
      op.assign(q.op);
      break;
    }
  }
  if (index == 0 || aborted_.load() || !postable(op)) return false;
  const Deadline deadline = execDeadline();
  std::uint64_t call = 0;
  if (!mesh_->postIfFree(op, deadline, &call)) return false;
  history_->started(historyId, op, noteChoice(op, Algo::kMesh, 0));
  std::lock_guard<std::mutex> lock(queuedMu_);
  Queued& next = queued_[index];
  next.posted = true;
  next.call = call;
  next.deadline = deadline;
  return true;
}

bool Communicator::Impl::sweepable(const Queued& q, runtime::Stream* stream,
                                   const runtime::StreamDescription& state, bool* chained,
                                   bool* lastPending) {
  // A failed stream would skip the call's task; a stopped one would hold it.
  if (aborted_.load() || state.failed || state.stopped || !postable(q.op)) return false;
  // On the last call's stream (and not a new one at a destroyed one's address).
  *chained = launch_.onlyOurTasks && stream == launch_.lastStream &&
             state.device == launch_.last.device && state.id == launch_.last.streamId;
  {
    std::lock_guard<std::mutex> lock(queuedMu_);
    if (unswept_ > 0 || (!*chained && !queued_.empty())) return false;
  }
  if (*chained) {
    // Nothing was queued on the stream since the last call's task: nothing of
    // the program's can still write the call's input.
    *lastPending = state.completed < state.enqueued;  // the last call's task has not ended
    return state.enqueued == launch_.last.taskIndex + 1;
  }
  // Idle: likewise.
  return state.completed == state.enqueued;
}

void Communicator::Impl::startSwept(Queued& q, Deadline deadline) {
  q.posted = true;
  q.deadline = deadline;
  sweptPosted_ = std::max(sweptPosted_, q.ticket);
  std::lock_guard<std::mutex> lock(startMu_);
  history_->started(q.historyId, q.op, noteChoice(q.op, Algo::kMesh, 0));
}

std::string Communicator::Impl::sweptChoice(const OpDesc& op) {
  std::lock_guard<std::mutex> lock(startMu_);
  return noteChoice(op, Algo::kMesh, 0);
}

std::size_t Communicator::Impl::indexAfter(std::uint64_t ticket) const {
  const std::uint64_t front = queued_.empty() ? 0 : queued_.front().ticket;
  return ticket >= front ? static_cast<std::size_t>(ticket + 1 - front) : 0;
}

bool Communicator::Impl::postSweptLocked(bool tryLock) {
  for (std::size_t i = indexAfter(sweptPosted_); i < queued_.size(); ++i) {
    Queued& e = queued_[i];
    // Not past a call of its own task: what the stream runs before that task
    // (a kernel) may still write its input.
    if (!e.swept) return false;
    if (e.posted) {  // posted by the caller before it had its ticket
      sweptPosted_ = e.ticket;
      continue;
    }
    const Deadline deadline = execDeadline();
    if (aborted_.load() || !mesh_->postIfFree(e.op, deadline, &e.call, tryLock)) return false;
    startSwept(e, deadline);
  }
  return true;
}

bool Communicator::Impl::progressFromCaller(Queued& q) {
  {
    // Calls post in call order: q only behind every queued one.
    std::lock_guard<std::mutex> lock(queuedMu_);
    const Deadline deadline = execDeadline();
    if (postSweptLocked(/*tryLock=*/true) && mesh_->postIfFree(q.op, deadline, &q.call)) {
      startSwept(q, deadline);
    }
  }
  // Every call posted: a failure is left to the task (sweep() reports it).
  std::uint64_t through = 0;
  (void)mesh_->tryComplete(~std::uint64_t(0), &through);
  if (through == 0) return false;
  // The queued calls this completed: concluded here, once (sweep() skips them).
  std::size_t n = 0;
  {
    std::lock_guard<std::mutex> lock(queuedMu_);
    for (std::size_t i = indexAfter(sweptDone_); i < queued_.size(); ++i) {
      Queued& e = queued_[i];
      if (!e.posted || e.call > through) break;
      e.done = true;
      sweptDone_ = e.ticket;
      if (callerDone_.size() == n) callerDone_.emplace_back();
      Queued& d = callerDone_[n++];
      d.op.assign(e.op);
      d.historyId = e.historyId;
      d.deadline = e.deadline;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const Queued& d = callerDone_[i];
    (void)concludeOp(d.op, d.historyId, Status::Ok(), d.deadline);
  }
  return q.posted && q.call <= through;
}

Status Communicator::Impl::sweep(std::uint64_t ticket) {
  Status first;
  bool own = true;  // the queue's front is this task's own call
  OpDesc op;
  for (;;) {
    std::uint64_t call = 0, historyId = 0;
    Deadline deadline = Deadline::never();
    bool posted = false;
    {
      std::lock_guard<std::mutex> lock(queuedMu_);
      if (!own && (queued_.empty() || !queued_.front().attached)) {
        if (sweepTicket_ == ticket) sweepTicket_ = 0;  // later calls need a task of their own
        break;
      }
      own = false;
      Queued& f = queued_.front();
      if (f.done) {
        queued_.pop_front();
        continue;
      }
      // Everything queued whose slot is free, before waiting for the first: a
      // rank ahead runs up to the ring ahead instead of handing its processor
      // over at every call.
      (void)postSweptLocked(/*tryLock=*/false);
      posted = f.posted;
      call = f.call;
      historyId = f.historyId;
      deadline = f.posted ? f.deadline : execDeadline();
      op.assign(f.op);
    }
    Status s;
    if (!posted) {
      // Its slot is not free yet: wait for the members to read it, then post
      // (above, again), unless that failed.
      s = aborted_.load() ? makeError(ErrorCode::kAborted, "{}: aborted", op.describe())
                          : mesh_->awaitFreeSlot(op, deadline, aborted_);
      if (s.ok()) {
        own = true;  // the same call again
        continue;
      }
    } else {
      collective::OpHistory::RunScope scope(history_.get(), historyId);
      trace::Span span("collective", trace::enabled() ? op.describe() : std::string());
      s = mesh_->completeWaiting(call, aborted_);
      if (span.on()) span.arg("algorithm", sweptChoice(op) + " (posted)");
    }
    bool concluded = false;
    {
      std::lock_guard<std::mutex> lock(queuedMu_);
      concluded = queued_.front().done;
      queued_.front().done = true;
      sweptDone_ = std::max(sweptDone_, queued_.front().ticket);
    }
    s = concluded ? Status::Ok() : concludeOp(op, historyId, std::move(s), deadline);
    {
      std::lock_guard<std::mutex> lock(queuedMu_);
      queued_.pop_front();
    }
    if (!s.ok() && first.ok()) first = std::move(s);
  }
  return first;
}

void Communicator::Impl::endSkipped(std::vector<Queued> skipped) {
  for (Queued& q : skipped) {
    if (q.done) continue;  // the caller completed and concluded it
    // A posted call completes all the same, or the members' rings would stop.
    if (q.posted) (void)mesh_->complete(q.call, true, aborted_);
    history_->finished(q.historyId,
                       makeError(ErrorCode::kAborted, "{}: its stream skipped its task (the "
                                 "stream failed or was aborted)", q.op.describe()));
  }
}

Status Communicator::Impl::runQueued(std::uint64_t ticket) {
  log::RankScope logAs(rank);  // the stream's worker
  Queued me;
  {
    std::vector<Queued> skipped;
    {
      std::lock_guard<std::mutex> lock(queuedMu_);
      while (!queued_.empty() && queued_.front().ticket < ticket) {
        if (!queued_.front().swept) --unswept_;
        skipped.push_back(std::move(queued_.front()));
        queued_.pop_front();
      }
      if (queued_.empty() || queued_.front().ticket != ticket) {
        return makeError(ErrorCode::kInternal, "rank {}: call {} is not queued", rank, ticket);
      }
      me = queued_.front();
    }
    endSkipped(std::move(skipped));
  }
  if (me.swept) return sweep(ticket);
  auto leave = [&](Status s) {
    std::lock_guard<std::mutex> lock(queuedMu_);
    queued_.pop_front();
    --unswept_;
    return s;
  };
  if (!me.posted && !postable(me.op)) return leave(runOp(me.op, me.historyId));
  collective::OpHistory::RunScope scope(history_.get(), me.historyId);
  trace::Span span("collective", trace::enabled() ? me.op.describe() : std::string());
  Deadline deadline = me.deadline;
  Status s;
  if (!me.posted) {
    deadline = execDeadline();
    history_->started(me.historyId, me.op, noteChoice(me.op, Algo::kMesh, 0));
    s = aborted_.load() ? makeError(ErrorCode::kAborted, "{}: aborted", me.op.describe())
                        : mesh_->post(me.op, deadline, aborted_, &me.call);
  }
  while (s.ok()) {
    Status done = mesh_->complete(me.call, false, aborted_);
    if (done.code() != ErrorCode::kNotReady) {
      s = std::move(done);
      break;
    }
    if (!postAhead()) {
      s = mesh_->completeWaiting(me.call, aborted_);
      break;
    }
  }
  s = concludeOp(me.op, me.historyId, std::move(s), deadline);
  if (span.on()) {
    span.arg("algorithm", lastChoice + " (posted)");
    if (!s.ok()) span.arg("error", s.toString());
  }
  return leave(std::move(s));
}

}  // namespace cohort

// The executor's other half: schedules among ranks that map each other's
// buffers (Schedule::shared). No messages: each step reads and writes this
// rank's or a member's buffers in place, and the group's barriers (signal,
// wait) order one rank's steps against the others'.
#include <cstring>
#include <optional>

#include "collective/executor.h"
#include "common/error.h"
#include "common/trace.h"
#include "kernels/copy.h"
#include "kernels/reduce.h"

namespace cohort::collective {

namespace {

// Where a range starts: this rank's buffers, or a member's as the group maps it
// (on demand, so that a schedule that reads one member's buffer maps only that).
char* at(const ExecBuffers& b, const Range& r) {
  if (r.member >= 0) {
    return (r.buf == Buf::kInput ? const_cast<char*>(b.group->input(r.member))
                                 : b.group->output(r.member)) +
           r.offset;
  }
  switch (r.buf) {
    case Buf::kInput:
      return const_cast<char*>(b.input) + r.offset;
    case Buf::kOutput:
      return b.output + r.offset;
    case Buf::kScratch:
      return b.scratch + r.offset;
  }
  return nullptr;
}

// What every round of one executeShared() call needs.
struct SharedRun {
  const Schedule& schedule;
  const ExecBuffers& buffers;
  const transport::Reduction& reduction;
  const OpDesc& op;
  int size;
  Deadline deadline;
  const std::atomic<bool>& abort;
  bool first;        // until the call's first wait passed
  bool checkFailed;  // that wait, on one member, found another call
};

// One round's steps in order.
Status runRound(SharedRun& run, const std::vector<Step>& round) {
  const ExecBuffers& buffers = run.buffers;
  const transport::Reduction& reduction = run.reduction;
  auto at = [&](const Range& r) { return collective::at(buffers, r); };
  for (const Step& s : round) {
    switch (s.op) {
      case Step::Op::kSignal:
        // Streaming stores are visible before the others learn of this arrival.
        if (run.schedule.streaming && !run.first) kernels::streamFence();
        COHORT_RETURN_IF_ERROR(buffers.group->signal(run.op, s.phase, run.first, buffers,
                                                     s.peer >= 0, run.deadline, run.abort));
        break;
      case Step::Op::kWait:
        if (Status st =
                buffers.group->wait(run.op, s.phase, run.first, s.peer, run.deadline, run.abort);
            !st.ok()) {
          // A check against one member: the others may wait for this rank alone.
          run.checkFailed = run.first && s.peer >= 0 && st.code() == ErrorCode::kMismatch;
          return st;
        }
        run.first = false;
        break;
      case Step::Op::kCopy: {
        if (s.bytes == 0) break;
        char* dst = at(s.dst);
        const char* src = at(s.src);
        if (dst == src) break;
        if (run.schedule.streaming && s.dst.member >= 0 && s.dst.buf == Buf::kOutput) {
          kernels::streamCopy(dst, src, s.bytes);
        } else {
          std::memmove(dst, src, s.bytes);
        }
        break;
      }
      case Step::Op::kCombine:
        if (s.bytes > 0) reduction.fn(at(s.dst), at(s.src), at(s.src2), s.bytes, reduction.context);
        break;
      case Step::Op::kReduce:
        if (s.bytes > 0) reduction.fn(at(s.dst), at(s.dst), at(s.src), s.bytes, reduction.context);
        break;
      case Step::Op::kAverage:
        if (s.bytes > 0) {
          kernels::finishAverage(at(s.dst), s.bytes / reduction.elementSize, run.op.type, run.size);
        }
        break;
      default:
        return makeError(ErrorCode::kInternal, "{}: a shared schedule's step {} needs a link",
                         run.op.describe(), static_cast<int>(s.op));
    }
  }
  return Status::Ok();
}

// After a failed argument check in round `failed`: this rank's signals after
// that round's wait (within [.., to)), moving no data and waiting for nobody,
// so that a member waiting for one of them (a pulled broadcast's root) finds
// the difference itself instead of timing out. Their own failures are moot.
void signalTheRest(const Schedule& schedule, const ExecBuffers& buffers, const OpDesc& op,
                   std::size_t failed, std::size_t to, Deadline deadline,
                   const std::atomic<bool>& abort) {
  bool pastWait = false;
  for (std::size_t r = failed; r < to && r < schedule.rounds.size(); ++r) {
    for (const Step& s : schedule.rounds[r]) {
      if (r == failed && !pastWait) {
        pastWait = s.op == Step::Op::kWait;
        continue;
      }
      if (s.op == Step::Op::kSignal) {
        (void)buffers.group->signal(op, s.phase, false, buffers, s.peer >= 0, deadline, abort);
      }
    }
  }
}

}  // namespace

Status executeShared(const Schedule& schedule, const ExecBuffers& buffers,
                     const transport::Reduction& reduction, const OpDesc& op, int size,
                     Deadline deadline, const std::atomic<bool>& abort, std::size_t from,
                     std::size_t to) {
  SharedRun run{schedule, buffers, reduction, op, size, deadline, abort, from == 0, false};
  for (std::size_t r = from; r < to && r < schedule.rounds.size(); ++r) {
    const auto& round = schedule.rounds[r];
    const bool sync =
        !round.empty() && (round[0].op == Step::Op::kSignal || round[0].op == Step::Op::kWait);
    if (sync) {
      Status st = runRound(run, round);
      if (run.checkFailed) signalTheRest(schedule, buffers, op, r, to, deadline, abort);
      COHORT_RETURN_IF_ERROR(st);
      continue;
    }
    std::optional<trace::Span> span;  // data moves between the barriers
    if (trace::enabled()) span.emplace("mesh", "work");
    COHORT_RETURN_IF_ERROR(runRound(run, round));
  }
  return Status::Ok();
}

}  // namespace cohort::collective

// The executor's other half: schedules among ranks that map each other's
// buffers (Schedule::shared). No messages: each step reads and writes this
// rank's or a member's buffers in place, and the group's barriers (signal,
// wait) order one rank's steps against the others'.
#include <cstring>
#include <optional>
#include <vector>

#include "collective/executor.h"
#include "common/error.h"
#include "common/trace.h"
#include "kernels/copy.h"
#include "kernels/reduce.h"

namespace cohort::collective {

namespace {

// Where each buffer of this rank and of every member starts: the members'
// are the group's arrays, asked for once per call (after its first wait).
struct Bases {
  const ExecBuffers* own = nullptr;
  const char* const* in = nullptr;  // by member
  char* const* out = nullptr;
  char* at(const Range& r) const {
    if (r.member >= 0) {
      const auto j = static_cast<std::size_t>(r.member);
      return (r.buf == Buf::kInput ? const_cast<char*>(in[j]) : out[j]) + r.offset;
    }
    switch (r.buf) {
      case Buf::kInput:
        return const_cast<char*>(own->input) + r.offset;
      case Buf::kOutput:
        return own->output + r.offset;
      case Buf::kScratch:
        return own->scratch + r.offset;
    }
    return nullptr;
  }
  void map(const SharedGroup& group) {
    in = group.inputs();
    out = group.outputs();
  }
};

// Where a call stands: its first signal publishes it; its first wait checks
// the members' calls and maps their buffers. A schedule may signal more than
// once before it first waits.
struct Progress {
  bool signalled;
  bool waited;
};

// One round's steps in order.
Status runRound(const std::vector<Step>& round, const Schedule& schedule,
                const ExecBuffers& buffers, const transport::Reduction& reduction, const OpDesc& op,
                int size, Deadline deadline, const std::atomic<bool>& abort, Progress* call,
                Bases& bases) {
  auto at = [&](const Range& r) { return bases.at(r); };
  for (const Step& s : round) {
    switch (s.op) {
      case Step::Op::kSignal:
        // Streaming stores are visible before the others learn of this arrival.
        if (schedule.streaming && call->waited) kernels::streamFence();
        COHORT_RETURN_IF_ERROR(
            buffers.group->signal(op, s.phase, !call->signalled, buffers, deadline, abort));
        call->signalled = true;
        break;
      case Step::Op::kWait:
        COHORT_RETURN_IF_ERROR(
            buffers.group->wait(op, s.phase, !call->waited, schedule, deadline, abort));
        if (!call->waited) bases.map(*buffers.group);
        call->waited = true;
        break;
      case Step::Op::kCopy: {
        if (s.bytes == 0) break;
        char* dst = at(s.dst);
        const char* src = at(s.src);
        if (dst == src) break;
        if (schedule.streaming && s.dst.member >= 0 && s.dst.buf == Buf::kOutput) {
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
          kernels::finishAverage(at(s.dst), s.bytes / reduction.elementSize, op.type, size);
        }
        break;
      default:
        return makeError(ErrorCode::kInternal, "{}: a shared schedule's step {} needs a link",
                         op.describe(), static_cast<int>(s.op));
    }
  }
  return Status::Ok();
}

}  // namespace

Status executeShared(const Schedule& schedule, const ExecBuffers& buffers,
                     const transport::Reduction& reduction, const OpDesc& op, int size,
                     Deadline deadline, const std::atomic<bool>& abort, std::size_t from,
                     std::size_t to) {
  Progress call{from > 0, from > 0};
  Bases bases;
  bases.own = &buffers;
  // A part after the first (the caller ran its own work between) maps again.
  if (from > 0) bases.map(*buffers.group);
  for (std::size_t r = from; r < to && r < schedule.rounds.size(); ++r) {
    const auto& round = schedule.rounds[r];
    // Data moves between the barriers: a round that does not begin at one is work.
    std::optional<trace::Span> span;
    if (round.empty() || round[0].op != Step::Op::kSignal) span.emplace("mesh", "work");
    COHORT_RETURN_IF_ERROR(
        runRound(round, schedule, buffers, reduction, op, size, deadline, abort, &call, bases));
  }
  return Status::Ok();
}

}  // namespace cohort::collective

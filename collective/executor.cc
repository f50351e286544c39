#include "collective/executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "collective/argument_check.h"
#include "collective/op_history.h"
#include "common/error.h"
#include "common/trace.h"

namespace cohort::collective {

namespace {

const char* at(const ExecBuffers& b, const Range& r) {
  switch (r.buf) {
    case Buf::kInput: return b.input + r.offset;
    case Buf::kOutput: return b.output + r.offset;
    case Buf::kScratch: return b.scratch + r.offset;
  }
  return nullptr;
}
char* atMut(const ExecBuffers& b, const Range& r) { return const_cast<char*>(at(b, r)); }

}  // namespace

namespace {

// Whether the first round can travel with the argument check: until the check
// passes it must write nothing the caller sees, so its local steps may write
// scratch only, and its receives (held aside, then applied) stay within
// `heldMax` (Tuning::fusedCheckBytes).
bool fusable(const Schedule& schedule, std::size_t heldMax) {
  if (schedule.rounds.empty()) return false;
  std::size_t received = 0;
  for (const Step& s : schedule.rounds[0]) {
    if (s.op == Step::Op::kCopy || s.op == Step::Op::kReduce) {
      if (s.bytes > 0 && s.dst.buf != Buf::kScratch) return false;
    } else if (s.op != Step::Op::kSend) {
      received += s.bytes;
    }
  }
  return received <= heldMax;
}

// The progressive check: each round's fingerprint exchange goes only to the
// peers it meets first, with that round's data, instead of to every peer before
// the first round (one message per partner and round, and no round waits for
// a later partner). It keeps the promise that nothing the caller sees is
// written before every fingerprint matched, so it applies when every round up
// to the last that meets a new peer writes scratch only (that last round's
// receives may be held aside instead), and when each such round both sends to
// and receives from each peer it meets first (it waits for their fingerprint
// anyway: no new dependency), and what it holds aside stays within `heldMax`.
// Returns that last round, or -1.
int progressiveCheckRounds(const Schedule& schedule, std::size_t heldMax) {
  static thread_local std::vector<int> seen;  // no allocation per call
  seen.clear();
  int last = -1;
  for (std::size_t r = 0; r < schedule.rounds.size(); ++r) {
    for (const Step& s : schedule.rounds[r]) {
      if (s.peer >= 0 && std::find(seen.begin(), seen.end(), s.peer) == seen.end()) {
        seen.push_back(s.peer);
        last = static_cast<int>(r);
      }
    }
  }
  if (last < 1) return -1;  // one round or none: the fused first round covers it
  seen.clear();
  std::size_t held = 0;
  for (int r = 0; r <= last; ++r) {
    const auto& round = schedule.rounds[static_cast<std::size_t>(r)];
    for (const Step& s : round) {
      const bool receives = s.op == Step::Op::kRecv || s.op == Step::Op::kRecvReduce;
      const bool local = s.op == Step::Op::kCopy || s.op == Step::Op::kReduce;
      if (s.bytes > 0 && s.dst.buf != Buf::kScratch && (local || (receives && r < last))) return -1;
      if (receives && r == last) held += s.bytes;
      if (s.peer < 0 || std::find(seen.begin(), seen.end(), s.peer) != seen.end()) continue;
      seen.push_back(s.peer);
      bool sends = false, gets = false;
      for (const Step& t : round) {
        if (t.peer != s.peer) continue;
        sends = sends || t.op == Step::Op::kSend;
        gets = gets || t.op == Step::Op::kRecv || t.op == Step::Op::kRecvReduce;
      }
      if (!sends || !gets) return -1;
    }
  }
  return held <= heldMax ? last : -1;
}

// Runs one round's local steps and posts its transfers. With `held`, receives
// land there (in step order) instead of in their destinations.
Status postRound(const std::vector<Step>& round, const ExecBuffers& buffers,
                 const std::vector<transport::Connection*>& conns,
                 const transport::Reduction& reduction, char* held,
                 std::vector<transport::Connection*>* active) {
  for (const Step& s : round) {
    if (s.bytes == 0) continue;
    if (s.op == Step::Op::kCopy) {
      if (at(buffers, s.src) != at(buffers, s.dst)) {
        std::memmove(atMut(buffers, s.dst), at(buffers, s.src), s.bytes);
      }
    } else if (s.op == Step::Op::kReduce) {
      reduction.fn(atMut(buffers, s.dst), at(buffers, s.dst), at(buffers, s.src), s.bytes,
                   reduction.context);
    }
  }
  for (const Step& s : round) {
    if (s.op == Step::Op::kCopy || s.op == Step::Op::kReduce) continue;
    transport::Connection* c = conns[static_cast<std::size_t>(s.peer)];
    Status st;
    if (s.op == Step::Op::kSend) {
      st = c->postSend(at(buffers, s.src), s.bytes);
    } else if (held != nullptr) {
      st = c->postRecv(held, s.bytes);
      held += s.bytes;
    } else if (s.op == Step::Op::kRecv) {
      st = c->postRecv(atMut(buffers, s.dst), s.bytes);
    } else {
      st = c->postRecv(atMut(buffers, s.dst), s.bytes, &reduction, at(buffers, s.src));
    }
    COHORT_RETURN_IF_ERROR(st);
    if (std::find(active->begin(), active->end(), c) == active->end()) active->push_back(c);
  }
  return Status::Ok();
}

// Moves the held receives of a round into their destinations.
void applyHeld(const std::vector<Step>& round, const ExecBuffers& buffers,
               const transport::Reduction& reduction, const char* held) {
  for (const Step& s : round) {
    if (s.bytes == 0) continue;  // nothing held (and maybe no buffer)
    if (s.op == Step::Op::kRecv) {
      std::memcpy(atMut(buffers, s.dst), held, s.bytes);
    } else if (s.op == Step::Op::kRecvReduce) {
      reduction.fn(atMut(buffers, s.dst), at(buffers, s.src), held, s.bytes, reduction.context);
    } else {
      continue;
    }
    held += s.bytes;
  }
}

// Kept by the thread between calls, so that a small operation allocates
// nothing. A failed call may leave a receive posted into tCheck: its
// connection is ended then, and the memory stays valid anyway.
thread_local ArgumentCheck tCheck;
thread_local std::vector<transport::Connection*> tActive;
thread_local std::vector<char> tHeld;

// What every round of one execute() call needs.
struct Run {
  const Schedule& schedule;
  const ExecBuffers& buffers;
  const std::vector<transport::Connection*>& conns;
  const transport::Reduction& reduction;
  const OpDesc& op;
  int rank;
  Deadline deadline;
  const transport::WaitControl& control;
};

// Runs round r together with the argument check: it waits for the fingerprints
// of tActive's connections (posted before) as well as for its transfers, and
// stops as soon as one differs. Its receives are held aside (all of them, or
// those that do not land in scratch) and applied once every fingerprint so far
// matched. A mismatch of sizes fails the transfers too, but each peer's
// fingerprint arrived before its data: the error names the difference.
Status checkedRound(const Run& run, std::size_t r, bool holdAll) {
  const auto& round = run.schedule.rounds[r];
  std::size_t bytes = 0;
  bool hold = holdAll;
  for (const Step& s : round) {
    if (s.op != Step::Op::kRecv && s.op != Step::Op::kRecvReduce) continue;
    bytes += s.bytes;
    hold = hold || (s.bytes > 0 && s.dst.buf != Buf::kScratch);
  }
  if (hold && tHeld.size() < bytes) tHeld.resize(bytes);
  trace::Span span("algorithm", trace::enabled()
                                    ? fmt::format("{} round {} with the fingerprint check",
                                                  run.schedule.algorithm, r)
                                    : std::string());
  const auto label = [&] {
    return fmt::format("{} ({} round {}, with the argument check)", run.op.describe(),
                       run.schedule.algorithm, r);
  };
  Status st = postRound(round, run.buffers, run.conns, run.reduction,
                        hold ? tHeld.data() : nullptr, &tActive);
  Status waited;  // the wait's own failure, which the check may explain
  if (!st.ok()) {
    st = makeError(st.code(), "{}: {}", label(), st.message());
  } else {
    // A peer whose arguments differ may never send its data.
    transport::WaitControl checking = run.control;
    checking.stopEarly = [] { return firstDifference(tCheck) >= 0; };  // this thread's check
    st = waited =
        transport::waitIdle(tActive.data(), tActive.size(), run.deadline, label, checking);
  }
  COHORT_RETURN_IF_ERROR(
      checkResult(tCheck, waited, run.rank, run.op, run.deadline, run.control.abort));
  COHORT_RETURN_IF_ERROR(st);
  if (hold) applyHeld(round, run.buffers, run.reduction, tHeld.data());
  return Status::Ok();
}

}  // namespace

transport::WaitControl waitControl(const std::atomic<bool>* abort, bool crowded,
                                   std::function<Status()> checkPeers) {
  transport::WaitControl control;
  control.abort = abort;
  control.crowded = crowded;
  control.checkPeers = std::move(checkPeers);
  control.onSlow = [](const std::string& what, const std::string& pending) {
    noteWait(fmt::format("{}: waiting for {}", what, pending));
  };
  return control;
}

Status execute(const Schedule& schedule, const ExecBuffers& buffers,
               const std::vector<transport::Connection*>& conns,
               const transport::Reduction& reduction, const OpDesc& op, int rank, Deadline deadline,
               const transport::WaitControl& control, const Tuning& tuning) {
  // Every text naming the operation or a round is made only on a failure or a
  // slow wait (transport::WaitLabel): a small operation's steps take microseconds.
  for (const auto& round : schedule.rounds) {
    for (const Step& s : round) {
      if (s.peer >= 0 && (static_cast<std::size_t>(s.peer) >= conns.size() || conns[s.peer] == nullptr)) {
        return makeError(ErrorCode::kInternal, "{}: no connection to rank {}", op.describe(), s.peer);
      }
    }
  }
  ArgumentCheck& check = tCheck;
  check.peers.clear();
  check.conns.clear();
  check.recvNumber.clear();
  check.sendNumber.clear();
  const Run run{schedule, buffers, conns, reduction, op, rank, deadline, control};
  std::size_t first = 0;
  if (const int last = progressiveCheckRounds(schedule, tuning.fusedCheckBytes); last > 0) {
    check.mine = op.fingerprint();
    for (int r = 0; r <= last; ++r) {
      const std::size_t from = check.peers.size();
      addNewPeers(schedule.rounds[static_cast<std::size_t>(r)], &check);
      // Each fingerprint goes ahead of its round's data on the connection.
      COHORT_RETURN_IF_ERROR(postCheckFrom(from, conns, &check));
      tActive.assign(check.conns.begin() + static_cast<std::ptrdiff_t>(from), check.conns.end());
      COHORT_RETURN_IF_ERROR(checkedRound(run, static_cast<std::size_t>(r), /*holdAll=*/false));
    }
    first = static_cast<std::size_t>(last) + 1;
  } else {
    COHORT_RETURN_IF_ERROR(postCheck(schedule, conns, op, &check));
    if (!check.conns.empty() && fusable(schedule, tuning.fusedCheckBytes)) {
      // The first round goes with the check; its receives are held aside until
      // every fingerprint has matched.
      tActive = check.conns;
      COHORT_RETURN_IF_ERROR(checkedRound(run, 0, /*holdAll=*/true));
      first = 1;
    } else if (!check.conns.empty()) {
      trace::Span span("algorithm", "fingerprint check");
      const auto label = [&] { return op.describe() + " (argument check)"; };
      // A fingerprint that arrived and differs explains a failure better than the
      // transport's error (the peer saw the difference first and ended the link).
      const Status waited =
          transport::waitIdle(check.conns.data(), check.conns.size(), deadline, label, control);
      COHORT_RETURN_IF_ERROR(checkResult(check, waited, rank, op, deadline, control.abort));
      COHORT_RETURN_IF_ERROR(waited);
    }
  }
  std::vector<transport::Connection*>& active = tActive;
  for (std::size_t r = first; r < schedule.rounds.size(); ++r) {
    active.clear();
    const auto& round = schedule.rounds[r];
    trace::Span span("algorithm", trace::enabled() ? fmt::format("{} round {}", schedule.algorithm, r)
                                                   : std::string());
    const auto label = [&] {
      return fmt::format("{} ({} round {})", op.describe(), schedule.algorithm, r);
    };
    Status st = postRound(round, buffers, conns, reduction, nullptr, &active);
    if (!st.ok()) return makeError(st.code(), "{}: {}", label(), st.message());
    if (active.empty()) continue;
    st = transport::waitIdle(active.data(), active.size(), deadline, label, control);
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

}  // namespace cohort::collective

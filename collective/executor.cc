#include "collective/executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "collective/op_history.h"
#include "common/trace.h"
#include "common/error.h"

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

// Exchanges fingerprints with every peer the schedule talks to.
Status checkFingerprints(const Schedule& schedule, const std::vector<transport::Connection*>& conns,
                         const OpDesc& op, int rank, Deadline deadline, const std::string& what,
                         const transport::WaitControl& control) {
  std::vector<int> peers;
  for (const auto& round : schedule.rounds) {
    for (const Step& s : round) {
      if (s.peer >= 0 && std::find(peers.begin(), peers.end(), s.peer) == peers.end()) {
        peers.push_back(s.peer);
      }
    }
  }
  if (peers.empty()) return Status::Ok();
  const std::array<std::uint64_t, 4> mine = op.fingerprint();
  std::vector<std::array<std::uint64_t, 4>> theirs(peers.size());
  std::vector<transport::Connection*> active;
  for (std::size_t i = 0; i < peers.size(); ++i) {
    transport::Connection* c = conns[static_cast<std::size_t>(peers[i])];
    COHORT_RETURN_IF_ERROR(c->postSend(mine.data(), sizeof(mine)));
    COHORT_RETURN_IF_ERROR(c->postRecv(theirs[i].data(), sizeof(mine)));
    active.push_back(c);
  }
  COHORT_RETURN_IF_ERROR(transport::waitIdle(active.data(), active.size(), deadline,
                                             what + " (argument check)", control));
  for (std::size_t i = 0; i < peers.size(); ++i) {
    const std::string diff = fingerprintDiff(mine, theirs[i]);
    if (!diff.empty()) {
      return makeError(ErrorCode::kMismatch,
                       "mismatched collective between rank {} and rank {}: {} (this rank: {})",
                       rank, peers[i], diff, what);
    }
  }
  return Status::Ok();
}

}  // namespace

transport::WaitControl waitControl(const std::atomic<bool>* abort) {
  transport::WaitControl control;
  control.abort = abort;
  control.onSlow = [](const std::string& what, const std::string& pending) {
    noteWait(fmt::format("{}: waiting for {}", what, pending));
  };
  return control;
}

Status execute(const Schedule& schedule, const ExecBuffers& buffers,
               const std::vector<transport::Connection*>& conns,
               const transport::Reduction& reduction, const OpDesc& op, int rank, Deadline deadline,
               const std::atomic<bool>* abort) {
  const std::string what = op.describe();
  const transport::WaitControl control = waitControl(abort);
  for (const auto& round : schedule.rounds) {
    for (const Step& s : round) {
      if (s.peer >= 0 && (static_cast<std::size_t>(s.peer) >= conns.size() || conns[s.peer] == nullptr)) {
        return makeError(ErrorCode::kInternal, "{}: no connection to rank {}", what, s.peer);
      }
    }
  }
  {
    trace::Span span("algorithm", "fingerprint check");
    COHORT_RETURN_IF_ERROR(checkFingerprints(schedule, conns, op, rank, deadline, what, control));
  }
  std::vector<transport::Connection*> active;
  for (std::size_t r = 0; r < schedule.rounds.size(); ++r) {
    active.clear();
    const auto& round = schedule.rounds[r];
    trace::Span span("algorithm", trace::enabled() ? fmt::format("{} round {}", schedule.algorithm, r)
                                                   : std::string());
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
      } else if (s.op == Step::Op::kRecv) {
        st = c->postRecv(atMut(buffers, s.dst), s.bytes);
      } else {
        st = c->postRecv(atMut(buffers, s.dst), s.bytes, &reduction, at(buffers, s.src));
      }
      if (!st.ok()) return makeError(st.code(), "{} ({} round {}): {}", what, schedule.algorithm, r, st.message());
      if (std::find(active.begin(), active.end(), c) == active.end()) active.push_back(c);
    }
    if (active.empty()) continue;
    Status st = transport::waitIdle(active.data(), active.size(), deadline,
                                    fmt::format("{} ({} round {})", what, schedule.algorithm, r),
                                    control);
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

}  // namespace cohort::collective

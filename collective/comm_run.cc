// Running one operation on the communicator's stream: choose the algorithm, then
// the mesh or a schedule over the connections.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>

#include "collective/comm_impl.h"
#include "collective/executor.h"
#include "collective/staging.h"
#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "common/trace.h"
#include "kernels/reduce.h"
#include "runtime/node_registry.h"

namespace cohort {

using collective::Algo;
using collective::Buf;
using collective::Coll;
using collective::OpDesc;
using collective::Schedule;
using collective::Step;

namespace {

Step p2p(Step::Op op, int peer, Buf buf, std::size_t offset, std::size_t bytes) {
  Step s;
  s.op = op;
  s.peer = peer;
  if (op == Step::Op::kSend) s.src = {buf, offset};
  else s.dst = {buf, offset};
  s.bytes = bytes;
  return s;
}

// Variable-size collectives: every pair exchanges directly, one round per
// distance, so reductions happen in a fixed order on every rank.
Schedule vSchedule(const OpDesc& op, int rank, int size) {
  Schedule s;
  s.algorithm = op.coll == Coll::kAllToAllV ? "pairwise" : "linear";
  const std::size_t e = dataTypeSize(op.type);
  const auto r = static_cast<std::size_t>(rank);
  auto& first = s.round();
  switch (op.coll) {
    case Coll::kAllGatherV:
      first.push_back({Step::Op::kCopy, -1, {Buf::kInput, 0}, {Buf::kOutput, op.displs[r] * e},
                       op.counts[r] * e});
      break;
    case Coll::kReduceScatterV:
      first.push_back({Step::Op::kCopy, -1, {Buf::kInput, op.displs[r] * e}, {Buf::kOutput, 0},
                       op.counts[r] * e});
      break;
    case Coll::kAllToAllV:
      first.push_back({Step::Op::kCopy, -1, {Buf::kInput, op.displs[r] * e},
                       {Buf::kOutput, op.displs2[r] * e}, op.counts[r] * e});
      break;
    default:
      break;
  }
  for (int step = 1; step < size; ++step) {
    const auto to = static_cast<std::size_t>((rank + step) % size);
    const auto from = static_cast<std::size_t>((rank - step + size) % size);
    auto& round = s.round();
    switch (op.coll) {
      case Coll::kAllGatherV:
        round.push_back(p2p(Step::Op::kSend, static_cast<int>(to), Buf::kInput, 0, op.counts[r] * e));
        round.push_back(p2p(Step::Op::kRecv, static_cast<int>(from), Buf::kOutput,
                            op.displs[from] * e, op.counts[from] * e));
        break;
      case Coll::kReduceScatterV: {
        round.push_back(p2p(Step::Op::kSend, static_cast<int>(to), Buf::kInput,
                            op.displs[to] * e, op.counts[to] * e));
        Step rr{Step::Op::kRecvReduce, static_cast<int>(from), {Buf::kOutput, 0},
                {Buf::kOutput, 0}, op.counts[r] * e};
        round.push_back(rr);
        break;
      }
      case Coll::kAllToAllV:
        round.push_back(p2p(Step::Op::kSend, static_cast<int>(to), Buf::kInput,
                            op.displs[to] * e, op.counts[to] * e));
        round.push_back(p2p(Step::Op::kRecv, static_cast<int>(from), Buf::kOutput,
                            op.displs2[from] * e, op.counts2[from] * e));
        break;
      default:
        break;
    }
  }
  return s;
}

Schedule buildSchedule(const OpDesc& op, Algo algo, int rank, int size,
                       const collective::Tuning& tuning) {
  const std::size_t e = dataTypeSize(op.type);
  switch (op.coll) {
    case Coll::kAllReduce:
      if (algo != Algo::kHalvingDoubling) {
        return collective::ringAllReduce(rank, size, op.count, e, op.inPlace(),
                                         tuning.ringChunkBytes);
      }
      return op.count * e <= tuning.recursiveDoublingMax
                 ? collective::recursiveDoublingAllReduce(rank, size, op.count, e, op.inPlace())
                 : collective::halvingDoublingAllReduce(rank, size, op.count, e, op.inPlace());
    case Coll::kAllGather: {
      const bool inPlace = static_cast<const char*>(op.input) ==
                           static_cast<const char*>(op.output) + op.count * e * rank;
      return algo == Algo::kLinear ? collective::linearAllGather(rank, size, op.count, e, inPlace)
                                   : collective::ringAllGather(rank, size, op.count, e, inPlace);
    }
    case Coll::kReduceScatter:
      return algo == Algo::kLinear
                 ? collective::linearReduceScatter(rank, size, op.count, e)
                 : collective::ringReduceScatter(rank, size, op.count, e,
                                                 Config::global().buffSize / 2);
    case Coll::kBroadcast:
      if (algo == Algo::kLinear) return collective::linearBroadcast(rank, size, op.root, op.count, e);
      return algo == Algo::kChain ? collective::chainBroadcast(rank, size, op.root, op.count, e,
                                                               tuning.chainChunkBytes)
                                  : collective::treeBroadcast(rank, size, op.root, op.count, e);
    case Coll::kReduce:
      return collective::treeReduce(rank, size, op.root, op.count, e, op.inPlace());
    case Coll::kGather: return collective::linearGather(rank, size, op.root, op.count, e);
    case Coll::kScatter: return collective::linearScatter(rank, size, op.root, op.count, e);
    case Coll::kAllToAll:
      return algo == Algo::kLinear ? collective::linearAllToAll(rank, size, op.count, e)
                                   : collective::pairwiseAllToAll(rank, size, op.count, e);
    case Coll::kBarrier: return collective::disseminationBarrier(rank, size);
    default: return vSchedule(op, rank, size);
  }
}

// One rank: the result is the input (avg of one value is itself).
Status copyAlone(const OpDesc& op) {
  const std::size_t e = dataTypeSize(op.type);
  std::size_t bytes = op.count * e;
  if (op.coll == Coll::kAllToAllV || op.coll == Coll::kAllGatherV ||
      op.coll == Coll::kReduceScatterV) {
    bytes = op.counts.empty() ? 0 : op.counts[0] * e;
  }
  const char* src =
      static_cast<const char*>(op.input) +
      (op.coll == Coll::kAllToAllV || op.coll == Coll::kReduceScatterV ? op.displs[0] * e : 0);
  char* dst = static_cast<char*>(op.output) + (op.coll == Coll::kAllToAllV    ? op.displs2[0] * e
                                               : op.coll == Coll::kAllGatherV ? op.displs[0] * e
                                                                              : 0);
  if (bytes > 0 && op.coll != Coll::kBroadcast && op.coll != Coll::kBarrier && src != dst) {
    std::memmove(dst, src, bytes);
  }
  return Status::Ok();
}

// Peers on this node whose process is stopped (SIGSTOP, a debugger). A timed-out
// wait names the peer this rank waited for, which may itself wait for the stopped
// one: this names the end of the chain, at least on this node.
std::string stoppedPeers(const std::vector<transport::PeerInfo>& peers, int self) {
  std::string text;
  for (const auto& p : peers) {
    if (p.rank == self || p.pid <= 0 || !p.sameNode(peers[static_cast<std::size_t>(self)])) {
      continue;
    }
    std::ifstream in(fmt::format("/proc/{}/stat", p.pid));
    std::string stat;
    std::getline(in, stat);
    const auto close = stat.rfind(')');  // "pid (comm) S ...": the state follows the name
    if (close == std::string::npos || close + 2 >= stat.size()) continue;
    const char state = stat[close + 2];
    if (state == 'T' || state == 't') {
      text +=
          fmt::format("{}rank {} (process {}) is stopped", text.empty() ? "" : ", ", p.rank, p.pid);
    }
  }
  return text.empty() ? "" : "; on this node " + text + " (SIGSTOP or a debugger)";
}

}  // namespace

Status Communicator::Impl::runSendRecv(const OpDesc& op, Deadline deadline) {
  std::vector<transport::Connection*> active;
  for (const auto& it : op.items) {
    transport::Connection* c = connPtrs_[static_cast<std::size_t>(it.peer)];
    const std::size_t bytes = it.count * dataTypeSize(it.type);
    Status s = it.isSend ? c->postSend(it.buffer, bytes) : c->postRecv(it.buffer, bytes);
    if (!s.ok()) return s;
    if (std::find(active.begin(), active.end(), c) == active.end()) active.push_back(c);
  }
  if (active.empty()) return Status::Ok();
  return transport::waitIdle(
      active.data(), active.size(), deadline,
      fmt::format("send/recv with {} peer(s) on rank {}", active.size(), rank),
      waits_);
}

Status Communicator::Impl::runSchedule(const OpDesc& op, Algo algo, Deadline deadline) {
  // A schedule depends on the shape of the call (not on where its buffers are,
  // but on where the input lies from the output: in place or not): a repeated
  // shape reuses the last one, without its allocations.
  const ScheduleKey key{op.counts.empty() && op.items.empty(),
                        op.coll,
                        algo,
                        op.count,
                        op.type,
                        op.root,
                        reinterpret_cast<std::uintptr_t>(op.input) -
                            reinterpret_cast<std::uintptr_t>(op.output),
                        Config::global().buffSize};
  if (!key.cacheable || !(key == scheduleKey_)) {
    schedule_ = buildSchedule(op, algo, rank, size, topo_.tuning);
    scheduleKey_ = key;
  }
  const Schedule& sched = schedule_;
  collective::ExecBuffers bufs;
  bufs.input = static_cast<const char*>(op.input);
  bufs.output = static_cast<char*>(op.output);
  if (op.coll == Coll::kBroadcast) bufs.input = bufs.output;
  if (sched.scratchBytes > 0) {
    void* p = nullptr;
    COHORT_RETURN_IF_ERROR(scratch(sched.scratchBytes, &p));
    bufs.scratch = static_cast<char*>(p);
  }
  const auto& red = kernels::reductionFor(op.type, op.op);
  COHORT_RETURN_IF_ERROR(
      collective::execute(sched, bufs, connPtrs_, red, op, rank, deadline, waits_, topo_.tuning));
  if (op.op == ReduceOp::kAvg) {
    std::size_t count = 0;
    if (op.coll == Coll::kAllReduce || op.coll == Coll::kReduceScatter ||
        op.coll == Coll::kReduceScatterV || (op.coll == Coll::kReduce && rank == op.root)) {
      count = op.count;
    }
    if (count > 0) kernels::finishAverage(op.output, count, op.type, size);
  }
  return Status::Ok();
}

Status Communicator::Impl::runOp(const OpDesc& op, std::uint64_t historyId) {
  log::RankScope logAs(rank);  // the stream's worker
  collective::OpHistory::RunScope scope(history_.get(), historyId);
  trace::Span span("collective", trace::enabled() ? op.describe() : std::string());
  const Deadline deadline = execDeadline();
  operationsRun_.fetch_add(1, std::memory_order_relaxed);
  Status s = aborted_.load() ? makeError(ErrorCode::kAborted, "{}: aborted", op.describe())
                             : runChosen(op, historyId, deadline);
  s = concludeOp(op, historyId, std::move(s), deadline);
  if (span.on()) {
    span.arg("algorithm", lastChoice);
    if (!s.ok()) span.arg("error", s.toString());
  }
  return s;
}

Status Communicator::Impl::concludeOp(const OpDesc& op, std::uint64_t historyId, Status s,
                                      Deadline deadline) {
  if (!s.ok()) {
    // Every error names this rank and the operation (most name it already).
    const std::string what = op.describe();
    const std::string limit =
        s.code() == ErrorCode::kTimeout
            ? fmt::format(
                  " ({}){}",
                  options.execTimeoutMs < 0
                      ? fmt::format("COHORT_EXEC_TIMEOUT is {} s", Config::global().execTimeoutS)
                      : fmt::format("the communicator's exec timeout is {} ms",
                                    options.execTimeoutMs),
                  stoppedPeers(peers_, rank))
            : "";
    s = makeError(s.code(), "rank {}: {}{}{}", rank,
                  s.message().find(what) == std::string::npos ? what + ": " : "", s.message(),
                  limit);
    s = spreadFailure(std::move(s), deadline);
    s = withAgreement(std::move(s), deadline);
  }
  history_->finished(historyId, s);
  if (s.ok()) runtime::registryNoteOp(this, prefix, rank, size, device, op.seq, collName(op.coll));
  if (!s.ok()) logFailure(s);
  return s;
}

const std::string& Communicator::Impl::noteChoice(const OpDesc& op, Algo algo,
                                                  std::size_t pieceCount) {
  // Formatted only when the choice changes: small operations repeat it.
  const std::array<std::size_t, 3> key{static_cast<std::size_t>(op.coll),
                                       static_cast<std::size_t>(algo), pieceCount};
  if (key != lastChoiceKey_ || lastChoice.empty()) {
    std::string choice =
        fmt::format("{}={} {}", collName(op.coll), collective::algoName(algo),
                    algo == Algo::kMesh ? "shm" : (connPtrs_[rank == 0 ? 1 : 0]->kind()));
    if (pieceCount > 0) choice += fmt::format(" in pieces of {}", pieceCount);
    std::lock_guard<std::mutex> lock(choiceMu_);
    lastChoiceKey_ = key;
    lastChoice = std::move(choice);
  }
  return lastChoice;
}

Status Communicator::Impl::runChosen(const OpDesc& op, std::uint64_t historyId,
                                     Deadline deadline) {
  if (op.coll == Coll::kSendRecv) {
    history_->started(historyId, op, "send/recv");
    return runSendRecv(op, deadline);
  }
  if (size == 1) {
    history_->started(historyId, op, "local copy");
    return copyAlone(op);
  }
  Algo algo = Algo::kAuto;
  COHORT_RETURN_IF_ERROR(collective::selectAlgorithm(op, topo_, overrides_, &algo));
  const collective::StagingPlan plan =
      collective::planStaging(op, algo, size, Config::global().buffSize, topo_.tuning);
  algo = plan.algo;
  history_->started(historyId, op, noteChoice(op, algo, plan.pieceCount));
  COHORT_LOG(kInfo, "collective", "{} start: {}", op.describe(), lastChoice);
  Status s = Status::Ok();
  if (plan.pieceCount == 0) {
    s = runAlgorithm(op, algo, deadline);
  } else {
    // Elementwise: piece k of every buffer is an operation of its own.
    const std::size_t e = dataTypeSize(op.type);
    for (std::size_t at = 0; at < op.count && s.ok(); at += plan.pieceCount) {
      OpDesc piece = op;
      piece.count = std::min(plan.pieceCount, op.count - at);
      if (op.input != nullptr) piece.input = static_cast<const char*>(op.input) + at * e;
      if (op.output != nullptr) piece.output = static_cast<char*>(op.output) + at * e;
      s = runAlgorithm(piece, algo, deadline);
    }
  }
  COHORT_LOG(kInfo, "collective", "{} end: {}", op.describe(), s.toString());
  return s;
}

Status Communicator::Impl::runAlgorithm(const OpDesc& op, Algo algo, Deadline deadline) {
  return algo == Algo::kMesh           ? mesh_->run(op, deadline, aborted_)
         : algo == Algo::kHierarchical ? runHierarchical(op, deadline)
                                       : runSchedule(op, algo, deadline);
}

// The first failure of this communicator is logged with its operation history, on
// every rank that sees one: together the logs show who waited for whom.
void Communicator::Impl::logFailure(const Status& failure) {
  if (failureLogged_) return;
  failureLogged_ = true;
  COHORT_LOG(kError, "collective", "{}\n{}", failure.toString(), history_->format());
}

}  // namespace cohort

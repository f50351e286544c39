#include "tools/linkcheck/pair_link.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "common/log.h"
#include "transport/link_report.h"

namespace cohort::linkcheck {

namespace {

using transport::Bytes;

// A link blob: kSetupOk then, per transport, "name\0" + 4-byte length + bytes;
// or kSetupFailed then the error text.
constexpr std::uint8_t kSetupFailed = 0, kSetupOk = 1;

void appendBlob(Bytes* out, const std::string& name, const Bytes& blob) {
  out->insert(out->end(), name.begin(), name.end());
  out->push_back(0);
  const auto n = static_cast<std::uint32_t>(blob.size());
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<std::uint8_t>(n >> (8 * i)));
  out->insert(out->end(), blob.begin(), blob.end());
}

bool findBlob(const Bytes& packed, const std::string& name, Bytes* blob) {
  std::size_t pos = 1;
  while (pos < packed.size()) {
    const auto begin = packed.begin() + static_cast<long>(pos);
    const auto end = std::find(begin, packed.end(), 0);
    if (end == packed.end()) return false;
    const std::string n(begin, end);
    pos = static_cast<std::size_t>(end - packed.begin()) + 1;
    if (pos + 4 > packed.size()) return false;
    std::uint32_t len = 0;
    for (int i = 0; i < 4; ++i) len |= std::uint32_t(packed[pos + i]) << (8 * i);
    pos += 4;
    if (pos + len > packed.size()) return false;
    if (n == name) {
      blob->assign(packed.begin() + static_cast<long>(pos),
                   packed.begin() + static_cast<long>(pos + len));
      return true;
    }
    pos += len;
  }
  return false;
}

bool contains(const std::string& text, const char* needle) {
  return text.find(needle) != std::string::npos;
}

}  // namespace

std::string shortCause(const Status& s, double timeoutS) {
  const std::string& m = s.message();
  if (contains(m, "token mismatch") || contains(m, "refused this rank")) return "token mismatch";
  if (s.code() == ErrorCode::kVersionMismatch) return "version mismatch";
  if (contains(m, "connection refused") || contains(m, "Connection refused")) {
    return "connection refused";
  }
  if (contains(m, "unreachable")) return "network unreachable";
  if (contains(m, "No route to host")) return "no route to host";
  if (s.code() == ErrorCode::kTimeout) return fmt::format("timed out after {:g} s", timeoutS);
  if (contains(m, "reset by the peer")) return "connection reset by the peer";
  if (contains(m, "closed by the peer") || contains(m, "closed its connection")) {
    return "connection closed by the peer";
  }
  if (contains(m, "died")) return "the peer process died";
  return errorString(s.code());
}

bool silentFailure(const Status& s) {
  const std::string& m = s.message();
  return s.code() == ErrorCode::kTimeout || contains(m, "unreachable") ||
         contains(m, "No route to host");
}

PairLink::PairLink(const transport::TransportContext& context, const transport::PeerInfo& peer,
                   double timeoutS)
    : context_(context), peer_(peer), timeoutS_(timeoutS) {
  view_.peer = peer.rank;
}

PairLink::~PairLink() { close(); }

Bytes PairLink::setup() {
  transport::Transports made;
  Status s = transport::makeTransports(context_, &made);
  Bytes out{kSetupOk};
  for (auto& t : made.all) {
    if (!s.ok()) break;
    const std::string why = t->rejectReason(peer_);
    if (!why.empty()) {
      rejections_ += fmt::format("; {}: {}", t->name(), why);
      continue;
    }
    Bytes blob;
    s = t->setup(&blob);
    if (!s.ok()) s = makeError(s.code(), "{} transport set-up failed: {}", t->name(), s.message());
    appendBlob(&out, t->name(), blob);
    transports_.push_back(std::move(t));
  }
  if (s.ok()) return out;
  fail(Stage::kSetup, s, errorString(s.code()));
  const std::string text = fmt::format("rank {}: {}", context_.rank, s.message());
  out.assign(1, kSetupFailed);
  out.insert(out.end(), text.begin(), text.end());
  return out;
}

void PairLink::connect(const Bytes& peerBlob) {
  if (failed()) return;
  if (peerBlob.empty() || peerBlob[0] != kSetupOk) {
    const std::string text(peerBlob.empty() ? peerBlob.end() : peerBlob.begin() + 1,
                           peerBlob.end());
    return fail(Stage::kSetup, Status(ErrorCode::kUnavailable, text),
                fmt::format("rank {} could not set up its end", peer_.rank));
  }
  std::string reasons = rejections_;
  for (auto& t : transports_) {
    Bytes blob;
    if (!findBlob(peerBlob, t->name(), &blob)) {
      reasons += fmt::format("; {}: the peer has no {} transport", t->name(), t->name());
      continue;
    }
    view_.transport = t->name();
    const Status s = t->connect(peer_, blob, &conn_);
    if (!s.ok()) fail(Stage::kConnect, s, shortCause(s, timeoutS_));
    COHORT_LOG(kInfo, "linkcheck", "rank {} -> rank {}: {} {}", context_.rank, peer_.rank,
               t->name(), s.ok() ? "connected" : s.message());
    return;
  }
  fail(Stage::kConnect,
       makeError(ErrorCode::kUnavailable, "no transport found for rank {} -> rank {}{}",
                 context_.rank, peer_.rank, reasons),
       "no transport");
}

bool PairLink::meet(Clock::time_point until, const std::function<bool()>& peerAlive) {
  if (!connected()) return false;
  constexpr auto kSlice = std::chrono::milliseconds(50);
  std::uint64_t mine = 0x6d656574, theirs = 0;  // "meet"
  Status s = conn_->postSend(&mine, sizeof(mine));
  if (s.ok()) s = conn_->postRecv(&theirs, sizeof(theirs));
  const std::string what =
      fmt::format("rank {} waiting for rank {} to probe", context_.rank, peer_.rank);
  const auto start = Clock::now();
  while (s.ok() || s.code() == ErrorCode::kTimeout) {
    transport::Connection* one = conn_.get();
    const auto slice = std::min(until, Clock::now() + kSlice);
    s = transport::waitIdle(&one, 1, Deadline::after(slice - Clock::now()), what);
    if (s.ok()) return true;
    if (s.code() != ErrorCode::kTimeout) break;
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    if (Clock::now() >= until) {
      fail(Stage::kProbe, s,
           "the check's time ran out waiting for the peer (give it a longer "
           "--timeout)",
           false);
      close();
      return false;
    }
    if (!peerAlive()) {
      fail(Stage::kProbe, s,
           fmt::format("rank {} stopped answering: no sign of life for {:g} s", peer_.rank,
                       timeoutS_),
           true);
      COHORT_LOG(kInfo, "linkcheck", "rank {}: rank {} silent after {:.1f} s", context_.rank,
                 peer_.rank, waited);
      close();
      return false;
    }
  }
  fail(Stage::kProbe, s, shortCause(s, timeoutS_));
  close();
  return false;
}

void PairLink::probe(int pings, std::size_t bandwidthBytes, Deadline deadline, bool checkEnds,
                     bool record, int round, int pass) {
  if (!connected()) return;
  transport::LinkResult r;
  const Status s =
      transport::probeLink(*conn_, context_.rank < peer_.rank, pings, bandwidthBytes, deadline, &r);
  if (s.ok()) {
    if (!record) return;
    view_.ok = true;
    view_.samples.push_back({r.rttUs, r.gbps, r.lostShare, round, pass});
    return;
  }
  if (s.code() == ErrorCode::kTimeout && checkEnds) {
    fail(Stage::kProbe, s, "the check's time ran out during a probe (give it a longer --timeout)",
         false);
  } else if (s.code() == ErrorCode::kTimeout) {
    fail(Stage::kProbe, s,
         fmt::format("rank {} stopped answering: no answer within {:g} s", peer_.rank, timeoutS_),
         true);
  } else {
    fail(Stage::kProbe, s, shortCause(s, timeoutS_));
  }
  close();
}

void PairLink::fail(Stage stage, const Status& status, const std::string& cause) {
  fail(stage, status, cause, silentFailure(status));
}

void PairLink::fail(Stage stage, const Status& status, const std::string& cause, bool unreachable) {
  if (failed()) return;
  view_.ok = false;
  view_.stage = stage;
  view_.unreachable = unreachable;
  view_.cause = cause;
  view_.detail = status.message();
}

void PairLink::close() { conn_.reset(); }

}  // namespace cohort::linkcheck

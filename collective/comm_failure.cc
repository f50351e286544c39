// Spreading a failure to every rank of the communicator. A rank that waited for
// a dead or stuck peer knows the cause; its other peers only see it leave
// ("connection closed by the peer") or nothing at all. So on its first failure a
// rank (1) explains a peer's disappearance with the note that peer left in the
// store, (2) leaves its own note there, and (3) ends every connection and leaves
// the node's mesh, so that peers stop waiting at once and, through the notes,
// name the rank that started it all (a chain of notes, one per hop). A tcp
// connection also carries the cause itself when it is between messages: the store
// lives in one rank's process, and the notes go with it when that rank fails and
// exits. Last, (4) the rank joins the survivors' agreement on who failed
// (comm_shrink.cc), and its error names the agreed ranks.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>

#include "collective/comm_impl.h"
#include "common/config.h"
#include "common/log.h"

namespace cohort {

namespace {

// Looking up a note: the peer wrote it before ending its connections, so it is
// there unless the peer died without one, and the store need not wait for it;
// only its reply is waited for, as long as a loaded machine may need.
constexpr auto kNoteReplyWait = std::chrono::seconds(1);
constexpr auto kNoteWriteLimit = std::chrono::seconds(1);
constexpr std::size_t kMaxNoteText = 2048;
// How long a failed operation waits for the survivors' agreement before it reports
// without it: every survivor in an operation fails within the liveness check and
// joins; one that makes no call meanwhile is not waited for longer.
constexpr auto kErrorAgreementWait = std::chrono::seconds(2);

// The caller's watchdog (runtime) fires COHORT_EXEC_TIMEOUT after the operation
// started; the operation gives up a tenth (at most 1 s) earlier (its deadline,
// execDeadline in comm_init.cc). Reading and leaving notes may run into half of
// that margin, so that the caller still sees this rank's error, naming the peer,
// and not the watchdog's, even when the store cannot be reached (a cut link). An
// early failure (a peer died) has all the time it needs.
Deadline spreadDeadline(Deadline opDeadline, long long limitMs) {
  if (limitMs == 0 || opDeadline.isNever()) return Deadline::never();
  const std::chrono::milliseconds half(std::min(limitMs / 10, 1000LL) / 2);
  return Deadline::after(opDeadline.at() - Clock::now() + half);
}

// The first other rank a message names as "rank N (", "rank N died" or "rank(s)
// N" (the transports' way of naming the peer of a connection: "connection to rank
// 2 (10.0.0.2:6000)", "rank 2 (pid 77)"; the mesh's "remote rank 2 died (process
// 77 is gone)" and "waiting for rank(s) 2"); -1 when none.
int namedPeer(const std::string& message, int self) {
  for (const std::string word : {"rank ", "rank(s) "}) {
    for (auto at = message.find(word); at != std::string::npos; at = message.find(word, at + 1)) {
      std::size_t end = at + word.size();
      int peer = 0;
      while (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end]))) {
        peer = peer * 10 + (message[end] - '0');
        ++end;
      }
      const bool named = word != "rank " || message.compare(end, 2, " (") == 0 ||
                         message.compare(end, 5, " died") == 0;
      if (end > at + word.size() && named && peer != self) return peer;
    }
  }
  return -1;
}

transport::Bytes encodeNote(const Status& s) {
  const std::string text = s.message().substr(0, kMaxNoteText);
  const auto code = static_cast<std::uint16_t>(s.code());
  transport::Bytes note(2 + text.size());
  note[0] = static_cast<std::uint8_t>(code & 0xff);
  note[1] = static_cast<std::uint8_t>(code >> 8);
  std::copy(text.begin(), text.end(), note.begin() + 2);
  return note;
}

bool decodeNote(const transport::Bytes& note, Status* out) {
  if (note.size() < 2) return false;
  const int code = note[0] | (note[1] << 8);
  if (code <= 0 || code > static_cast<int>(kLastErrorCode)) return false;
  *out = Status(static_cast<ErrorCode>(code),
                std::string(note.begin() + 2, note.begin() + static_cast<std::ptrdiff_t>(
                                                           std::min(note.size(), kMaxNoteText + 2))));
  return true;
}

}  // namespace

std::string Communicator::Impl::failureKey(int r) const {
  return fmt::format("{}/failed/{}", prefix, r);
}

bool Communicator::Impl::leftByAbort(int r) const {
  transport::Bytes mark;
  return store_->peek(fmt::format("{}/aborted/{}", prefix, r), &mark,
                      Deadline::after(kNoteReplyWait))
      .ok();
}

void Communicator::Impl::noteAbort() {
  if (store_ == nullptr) return;
  // The mark, for the survivors' agreement, even when an operation failed first;
  // the note only when none did: a failed operation's cause, not this abort, is
  // what the others must read.
  Status wrote = store_->setBefore(fmt::format("{}/aborted/{}", prefix, rank),
                                   transport::encodeInt(1), Deadline::after(kNoteWriteLimit));
  if (wrote.ok() && asyncError().ok()) {
    const Status aborted(ErrorCode::kAborted,
                         fmt::format("rank {} aborted its communicator", rank));
    wrote = store_->setBefore(failureKey(rank), encodeNote(aborted),
                              Deadline::after(kNoteWriteLimit));
  }
  if (!wrote.ok()) {
    COHORT_LOG(kInfo, "collective", "rank {}: could not leave a note of its abort: {}", rank,
               wrote.toString());
  }
}

Status Communicator::Impl::spreadFailure(Status s, Deadline opDeadline) {
  if (failureSpread_) return s;
  failureSpread_ = true;
  const Deadline by = spreadDeadline(opDeadline, execTimeoutMs());
  // A peer that left: did it fail first, and why? Its cause becomes ours (a
  // rank whose neighbour timed out reports the timeout and the late rank).
  const int peer = namedPeer(s.message(), rank);
  // (A timeout is not explained: the rank it waited for is late, not failed, and
  // looking for its note would only eat the time left to leave ours. Nor is a
  // failure the peer reported over the connection itself: its report is the
  // note's text.)
  const bool reported =
      peer >= 0 && s.message().find(fmt::format("rank {} reported: ", peer)) != std::string::npos;
  if (peer >= 0 && peer < size && !reported &&
      (s.code() == ErrorCode::kRemoteError || s.code() == ErrorCode::kConnectionError)) {
    transport::Bytes note;
    Status cause;
    // At most half the time left: the rest is for leaving our own note.
    const Deadline half =
        by.isNever() ? by : Deadline::after((by.at() - Clock::now()) / 2);
    const Deadline reply = Deadline::earlier(Deadline::after(kNoteReplyWait), half);
    if (store_->peek(failureKey(peer), &note, reply).ok() &&
        decodeNote(note, &cause)) {
      // A peer's timeout is this operation's too (it waited for the same late
      // rank); any other cause (out of memory, an abort) is a remote error here.
      s = Status(cause.code() == ErrorCode::kTimeout ? cause.code() : s.code(),
                 fmt::format("{}; rank {} had failed first: {}", s.message(), peer, cause.message()));
    }
  }
  Status wrote = store_->setBefore(failureKey(rank), encodeNote(s),
                                   Deadline::earlier(Deadline::after(kNoteWriteLimit), by));
  if (!wrote.ok()) {
    COHORT_LOG(kInfo, "collective", "rank {}: could not leave a failure note: {}", rank,
               wrote.toString());
  }
  for (auto& c : conns_) {
    if (c != nullptr) c->abort(s);
  }
  // The node's other ranks may wait for this one in a mesh barrier of a later call
  // (theirs of this one ended well: a hierarchical call fails in its cross-node
  // part on some ranks only); ended connections do not reach them, leaving does.
  if (mesh_ != nullptr) mesh_->failNow(s.message());
  return s;
}

Status Communicator::Impl::withAgreement(Status s, Deadline opDeadline) {
  // A timeout is a late rank, not a failed one; this rank's own abort or bad
  // arguments need no survivors.
  if (store_ == nullptr || aborted_.load() ||
      (s.code() != ErrorCode::kRemoteError && s.code() != ErrorCode::kConnectionError)) {
    return s;
  }
  std::vector<int> failed;
  const Status agreed = agreeOnFailures(
      &failed, Deadline::earlier(spreadDeadline(opDeadline, execTimeoutMs()),
                                 Deadline::after(kErrorAgreementWait)));
  if (!agreed.ok()) {
    return Status(s.code(),
                  fmt::format("{}; no agreement on the failed ranks: {}", s.message(),
                              agreed.message()));
  }
  if (failed.empty()) {
    return Status(s.code(), s.message() + "; the survivors agree that no rank failed");
  }
  std::string list;
  for (int r : failed) list += fmt::format("{}{}", list.empty() ? "" : ", ", r);
  return Status(ErrorCode::kRemoteError,
                fmt::format("{}; the survivors agree that rank(s) {} failed", s.message(), list));
}

}  // namespace cohort

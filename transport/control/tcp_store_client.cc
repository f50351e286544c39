// The store client: one socket behind a mutex. A call that fails on the wire
// closes the socket (a half-read reply leaves the stream unusable); the next
// call reconnects once, since the state lives on the server.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>

#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "transport/control/deadline_socket.h"
#include "transport/control/store_protocol.h"
#include "transport/tcp_store.h"

namespace cohort::transport {

namespace {

using control::DeadlineSocket;
using control::FrameHeader;
using control::Op;
using control::Request;

// Slack for a reply to a get/wait after the server's own timeout fired.
constexpr auto kReplyGrace = std::chrono::seconds(1);
constexpr std::size_t kMaxHelloBytes = 64 << 10;

std::string joinKeys(const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "" : ", ") + k;
  return out;
}

class TcpStoreClient : public Store {
 public:
  TcpStoreClient(std::string host, int port, const JobToken& token, int rank)
      : host_(std::move(host)), port_(port), token_(token), rank_(rank) {}

  /// Connects with retries until `deadline`, then shakes hands.
  Status open(Deadline deadline);

  Status set(const std::string& key, const Bytes& value) override {
    Request r{Op::kSet, 0, key, {}, value, 0};
    return call(&r, connectDeadline(), nullptr, nullptr);
  }
  Status setBefore(const std::string& key, const Bytes& value, Deadline deadline) override {
    Request r{Op::kSet, 0, key, {}, value, 0};
    return call(&r, deadline, nullptr, nullptr, kSilenceIsUnavailable);
  }
  Status get(const std::string& key, Bytes* value, Deadline deadline) override {
    Request r{Op::kGet, 0, key, {}, {}, timeoutMs(deadline)};
    return call(&r, withGrace(deadline), value, nullptr);
  }
  Status peek(const std::string& key, Bytes* value, Deadline replyBy) override {
    Request r{Op::kGet, 0, key, {}, {}, 0};  // the server answers at once
    return call(&r, replyBy, value, nullptr, kSilenceIsUnavailable);
  }
  Status wait(const std::vector<std::string>& keys, Deadline deadline) override {
    if (keys.empty()) return Status::Ok();
    Request r{Op::kWait, 0, std::string(), keys, {}, timeoutMs(deadline)};
    return call(&r, withGrace(deadline), nullptr, nullptr);
  }
  Status add(const std::string& key, std::int64_t delta, std::int64_t* result) override {
    Request r{Op::kAdd, 0, key, {}, {}, delta};
    std::int64_t value = 0;
    COHORT_RETURN_IF_ERROR(call(&r, connectDeadline(), nullptr, &value));
    if (result != nullptr) *result = value;
    return Status::Ok();
  }
  Status check(const std::string& key, bool* exists) override {
    Request r{Op::kCheck, 0, key, {}, {}, 0};
    std::int64_t value = 0;
    COHORT_RETURN_IF_ERROR(call(&r, connectDeadline(), nullptr, &value));
    *exists = value != 0;
    return Status::Ok();
  }

 private:
  static std::int64_t timeoutMs(Deadline d) {
    if (d.isNever()) return -1;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(d.at() - Clock::now());
    return std::max<std::int64_t>(0, left.count());
  }
  static Deadline withGrace(Deadline d) {
    return d.isNever() ? d : Deadline::after(d.at() - Clock::now() + kReplyGrace);
  }
  std::string where() const { return fmt::format("store {}:{} (rank {})", host_, port_, rank_); }

  Status handshake(Deadline deadline);
  Status readReply(Deadline deadline, std::size_t limit, FrameHeader* header, Bytes* value);
  Status validate(const Request& r) const;
  // A call whose server answers at once (peek, set) and that only bounds the
  // wait for that answer: no answer by its deadline means the store does not
  // answer (its host gone or its process stopped), kUnavailable, not kTimeout
  // (which a peek returns for an absent key).
  static constexpr bool kSilenceIsUnavailable = true;
  Status call(Request* r, Deadline deadline, Bytes* value, std::int64_t* arg,
              bool silenceIsUnavailable = false);

  std::mutex mu_;
  DeadlineSocket socket_;
  const std::string host_;
  const int port_;
  const JobToken token_;
  const int rank_;
  std::uint64_t seq_ = 0;
  std::size_t maxValue_ = 0;  // the server's limit, from its hello
};

Status TcpStoreClient::open(Deadline deadline) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto start = Clock::now();
  auto backoff = std::chrono::milliseconds(20);
  int attempts = 0;
  for (;;) {
    ++attempts;
    Status s = socket_.connect(host_, port_, deadline);
    if (s.ok()) return handshake(deadline);
    if (deadline.expired()) {
      const double tried = std::chrono::duration<double>(Clock::now() - start).count();
      return makeError(ErrorCode::kTimeout,
                       "{}: could not connect: tried for {:.1f} s ({} attempts); last error: {}",
                       where(), tried, attempts, s.message());
    }
    // Sleep, but wake for one last attempt at the deadline.
    std::this_thread::sleep_for(
        deadline.isNever() ? backoff
                           : std::min<Clock::duration>(backoff, deadline.at() - Clock::now()));
    backoff = std::min(backoff * 2, std::chrono::milliseconds(500));
  }
}

Status TcpStoreClient::handshake(Deadline deadline) {
  Handshake mine = Handshake::local(ChannelKind::kStore, token_);
  mine.fromRank = rank_;
  std::uint8_t wire[Handshake::kWireSize];
  mine.encode(wire);
  Status s = socket_.write(wire, sizeof(wire), deadline);
  if (s.ok()) s = socket_.read(wire, sizeof(wire), deadline);
  if (!s.ok()) return makeError(s.code(), "{}: handshake: {}", where(), s.message());
  Handshake theirs;
  s = Handshake::decode(wire, &theirs);
  if (s.code() == ErrorCode::kVersionMismatch) {
    socket_.close();
    return makeError(s.code(), "{}: protocol version mismatch: {}", where(), s.message());
  }
  FrameHeader header;
  Bytes text;
  if (s.ok()) s = readReply(deadline, kMaxHelloBytes, &header, &text);
  if (s.ok() && header.op != Op::kHello) {
    s = makeError(ErrorCode::kConnectionError, "expected a hello reply, got {}",
                  control::opName(header.op));
  }
  if (!s.ok()) {
    socket_.close();
    return makeError(s.code(), "{}: not a Cohort store: {}", where(), s.message());
  }
  s = control::replyStatus(header, text);
  if (!s.ok()) {
    socket_.close();
    return makeError(s.code(), "{} refused this rank: {}", where(), s.message());
  }
  maxValue_ = static_cast<std::size_t>(std::max<std::int64_t>(0, header.arg));
  return Status::Ok();
}

Status TcpStoreClient::readReply(Deadline deadline, std::size_t limit, FrameHeader* header,
                                 Bytes* value) {
  std::uint8_t wire[control::kFrameHeaderSize];
  COHORT_RETURN_IF_ERROR(socket_.read(wire, sizeof(wire), deadline));
  COHORT_RETURN_IF_ERROR(FrameHeader::decode(wire, control::kReplyMagic, limit, header));
  value->resize(header->valueLen);
  if (header->valueLen == 0) return Status::Ok();
  return socket_.read(value->data(), value->size(), deadline);
}

Status TcpStoreClient::validate(const Request& r) const {
  for (const auto& key : r.op == Op::kWait ? r.keys : std::vector<std::string>{r.key}) {
    if (key.empty() || key.size() > control::kMaxKeyBytes) {
      return makeError(ErrorCode::kInvalidArgument, "{}: {}: key of {} bytes (must be 1..{})",
                       where(), control::opName(r.op), key.size(), control::kMaxKeyBytes);
    }
  }
  const std::size_t size =
      r.op == Op::kWait ? control::encodeKeyList(r.keys).size() : r.value.size();
  if (size > maxValue_) {
    return makeError(ErrorCode::kInvalidArgument,
                     "{}: {} '{}': value of {} bytes exceeds the store's limit of {} bytes",
                     where(), control::opName(r.op), r.op == Op::kWait ? joinKeys(r.keys) : r.key,
                     size, maxValue_);
  }
  return Status::Ok();
}

Status TcpStoreClient::call(Request* r, Deadline deadline, Bytes* value, std::int64_t* arg,
                           bool silenceIsUnavailable) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string what = fmt::format("{} {}", control::opName(r->op),
                                       r->op == Op::kWait ? joinKeys(r->keys) : "'" + r->key + "'");
  const auto wireCode = [&](const Status& s) {
    return silenceIsUnavailable && s.code() == ErrorCode::kTimeout ? ErrorCode::kUnavailable
                                                                   : s.code();
  };
  if (!socket_.isOpen()) {
    COHORT_LOG(kInfo, "store", "{}: reconnecting", where());
    Status s = socket_.connect(host_, port_, deadline);
    if (s.ok()) s = handshake(deadline);
    if (!s.ok())
      return makeError(wireCode(s), "{}: {}: reconnect failed: {}", where(), what, s.message());
  }
  COHORT_RETURN_IF_ERROR(validate(*r));
  r->seq = ++seq_;
  const Bytes wire = control::encodeRequest(*r);
  FrameHeader header;
  Bytes reply;
  Status s = socket_.write(wire.data(), wire.size(), deadline);
  if (s.ok()) s = readReply(deadline, std::max(maxValue_, kMaxHelloBytes), &header, &reply);
  if (s.ok() && header.seq != r->seq && !(header.seq == 0 && header.status != 0)) {
    s = makeError(ErrorCode::kConnectionError, "reply {} to request {}", header.seq, r->seq);
  }
  if (!s.ok()) {
    socket_.close();
    return makeError(wireCode(s), "{}: {}: {}{}", where(), what, s.message(),
                     wireCode(s) != s.code() ? " (no answer from the store)" : "");
  }
  s = control::replyStatus(header, reply);
  if (header.seq != r->seq) socket_.close();  // the server refused the frame and hangs up
  if (!s.ok()) return makeError(s.code(), "{}: {}: {}", where(), what, s.message());
  if (value != nullptr) *value = std::move(reply);
  if (arg != nullptr) *arg = header.arg;
  return Status::Ok();
}

}  // namespace

Status connectTcpStore(const std::string& host, int port, const JobToken& token, int rank,
                       Deadline deadline, std::shared_ptr<Store>* out) {
  auto client = std::make_shared<TcpStoreClient>(host, port, token, rank);
  COHORT_RETURN_IF_ERROR(client->open(deadline));
  COHORT_LOG(kInfo, "store", "rank {} connected to store {}:{}", rank, host, port);
  *out = std::move(client);
  return Status::Ok();
}

}  // namespace cohort::transport

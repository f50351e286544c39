// The link check run on every new connection: both ends exchange how each sees
// the other, ping-pong small messages (the median round trip is the latency),
// and optionally time a one-way transfer; the initiator's figures are sent to
// the other end so both report the same numbers.
#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/error.h"
#include "transport/connection.h"
#include "transport/link_report.h"

namespace cohort::transport {

namespace {

constexpr std::size_t kNameBytes = 128;
constexpr int kBandwidthRounds = 2;  // the first warms the connection up; the best counts

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Sends `out` and receives `in` (same size) at once.
Status exchange(Connection& c, const void* out, void* in, std::size_t bytes, Deadline deadline,
                const std::string& what) {
  COHORT_RETURN_IF_ERROR(c.postSend(out, bytes));
  COHORT_RETURN_IF_ERROR(c.postRecv(in, bytes));
  Connection* one = &c;
  return waitIdle(&one, 1, deadline, what);
}

Status sendOne(Connection& c, const void* data, std::size_t bytes, Deadline deadline,
               const std::string& what) {
  COHORT_RETURN_IF_ERROR(c.postSend(data, bytes));
  Connection* one = &c;
  return waitIdle(&one, 1, deadline, what);
}

Status recvOne(Connection& c, void* data, std::size_t bytes, Deadline deadline,
               const std::string& what) {
  COHORT_RETURN_IF_ERROR(c.postRecv(data, bytes));
  Connection* one = &c;
  return waitIdle(&one, 1, deadline, what);
}

// One round trip: the initiator pings, the other end answers. Returns seconds.
Status pingOnce(Connection& c, bool initiator, Deadline deadline, const std::string& what,
                double* seconds) {
  std::uint64_t ping = 0x70696e67, pong = 0;
  const auto t0 = Clock::now();
  if (initiator) {
    COHORT_RETURN_IF_ERROR(exchange(c, &ping, &pong, sizeof(ping), deadline, what));
  } else {
    COHORT_RETURN_IF_ERROR(recvOne(c, &pong, sizeof(pong), deadline, what));
    COHORT_RETURN_IF_ERROR(sendOne(c, &pong, sizeof(pong), deadline, what));
  }
  *seconds = secondsSince(t0);
  return Status::Ok();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

Status bandwidth(Connection& c, bool initiator, std::size_t bytes, Deadline deadline,
                 const std::string& what, double* gbps) {
  std::vector<std::uint8_t> buffer(bytes, 0x5a);  // touched before the clock starts
  std::uint64_t ack = 0;
  double best = 0;
  for (int round = 0; round < kBandwidthRounds; ++round) {
    const auto t0 = Clock::now();
    if (initiator) {
      COHORT_RETURN_IF_ERROR(c.postSend(buffer.data(), bytes));
      COHORT_RETURN_IF_ERROR(recvOne(c, &ack, sizeof(ack), deadline, what));
    } else {
      COHORT_RETURN_IF_ERROR(recvOne(c, buffer.data(), bytes, deadline, what));
      COHORT_RETURN_IF_ERROR(sendOne(c, &ack, sizeof(ack), deadline, what));
    }
    const double s = secondsSince(t0);
    if (round == 0 || s < best) best = s;
  }
  *gbps = static_cast<double>(bytes) / best / 1e9;
  return Status::Ok();
}

Status runProbe(Connection& c, bool initiator, int pings, std::size_t bandwidthBytes,
                Deadline deadline, LinkResult* r) {
  const std::string what = fmt::format("link check with rank {} ({})", c.peer(), c.describe());
  char mine[kNameBytes] = {}, theirs[kNameBytes] = {};
  std::strncpy(mine, c.describe().c_str(), kNameBytes - 1);
  COHORT_RETURN_IF_ERROR(exchange(c, mine, theirs, kNameBytes, deadline, what + ", hello"));
  r->local.assign(theirs, strnlen(theirs, kNameBytes));
  std::vector<double> rtts;
  for (int i = 0; i <= pings && pings > 0; ++i) {  // ping 0 warms up
    double s = 0;
    COHORT_RETURN_IF_ERROR(
        pingOnce(c, initiator, deadline, fmt::format("{}, ping {}", what, i), &s));
    if (i > 0) rtts.push_back(s);
  }
  double figures[2] = {median(rtts) * 1e6, 0};
  if (bandwidthBytes > 0) {
    COHORT_RETURN_IF_ERROR(
        bandwidth(c, initiator, bandwidthBytes, deadline, what + ", bandwidth", &figures[1]));
  }
  if (initiator) {
    COHORT_RETURN_IF_ERROR(sendOne(c, figures, sizeof(figures), deadline, what + ", results"));
  } else {
    COHORT_RETURN_IF_ERROR(recvOne(c, figures, sizeof(figures), deadline, what + ", results"));
  }
  r->rttUs = figures[0];
  r->gbps = figures[1];
  return Status::Ok();
}

}  // namespace

Status probeLink(Connection& conn, bool initiator, int pings, std::size_t bandwidthBytes,
                 Deadline deadline, LinkResult* result) {
  result->peer = conn.peer();
  result->transport = conn.kind();
  result->remote = conn.describe();
  result->rttUs = 0;
  result->gbps = 0;
  Status s = runProbe(conn, initiator, pings, bandwidthBytes, deadline, result);
  result->ok = s.ok();
  result->error = s.ok() ? "" : s.message();
  return s;
}

std::string LinkReport::toJson() const {
  nlohmann::json links = nlohmann::json::array();
  for (const LinkResult& l : this->links) {
    links.push_back({{"rank", l.rank},
                     {"peer", l.peer},
                     {"transport", l.transport},
                     {"local", l.local},
                     {"remote", l.remote},
                     {"ok", l.ok},
                     {"rttUs", l.rttUs},
                     {"gbps", l.gbps},
                     {"error", l.error}});
  }
  return nlohmann::json{{"links", links}}.dump(2);
}

}  // namespace cohort::transport

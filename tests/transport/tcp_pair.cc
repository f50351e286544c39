#include "tcp_pair.h"

#include <thread>

#include "common/error.h"
#include "transport/bootstrap.h"
#include "transport/store.h"
#include "transport/tcp/tcp_transport.h"

namespace cohort::transport::testing {

namespace {

Status runRank(const TcpJob& job, int rank, std::shared_ptr<Store> store, TcpRank* out) {
  TransportContext ctx;
  ctx.rank = rank;
  ctx.size = job.size;
  ctx.self.rank = rank;
  ctx.self.address = "127.0.0.1";
  ctx.token = job.tokens.empty() ? JobToken::fromText("tcp-test") : job.tokens[rank];
  ctx.connectDeadline = Deadline::afterMs(job.timeoutMs);
  if (!job.retry.empty()) ctx.retry = job.retry[static_cast<std::size_t>(rank)];
  tcp::TcpOptions options;
  if (!job.options.empty()) options = job.options[static_cast<std::size_t>(rank)];
  out->transport = makeTcpTransport(ctx, options);
  Bytes blob;
  COHORT_RETURN_IF_ERROR(out->transport->setup(&blob));
  Bootstrap bootstrap(std::move(store), rank, job.size);
  std::vector<Bytes> blobs;
  COHORT_RETURN_IF_ERROR(bootstrap.allgather(blob, &blobs, ctx.connectDeadline));
  out->conns.resize(static_cast<std::size_t>(job.size));
  std::vector<int> peers;
  if (job.order) {
    peers = job.order(rank);
  } else {
    for (int p = 0; p < job.size; ++p) peers.push_back(p);
  }
  for (int p : peers) {
    if (p == rank) continue;
    PeerInfo info;
    info.rank = p;
    info.address = "127.0.0.1";
    COHORT_RETURN_IF_ERROR(out->transport->connect(info, blobs[static_cast<std::size_t>(p)],
                                                   &out->conns[static_cast<std::size_t>(p)]));
  }
  return Status::Ok();
}

}  // namespace

std::vector<TcpRank> connectJob(const TcpJob& job) {
  auto store = std::make_shared<MemoryStore>();
  std::vector<TcpRank> ranks(static_cast<std::size_t>(job.size));
  std::vector<std::thread> threads;
  for (int r = 0; r < job.size; ++r) {
    threads.emplace_back([&, r] {
      TcpRank& mine = ranks[static_cast<std::size_t>(r)];
      mine.status = runRank(job, r, store, &mine);
    });
  }
  for (auto& t : threads) t.join();
  return ranks;
}

Status connectPair(TcpPair* pair, const tcp::TcpOptions& options, long timeoutMs) {
  TcpJob job;
  job.options = {options, options};
  job.timeoutMs = timeoutMs;
  pair->ranks = connectJob(job);
  for (const TcpRank& r : pair->ranks) COHORT_RETURN_IF_ERROR(r.status);
  return Status::Ok();
}

std::vector<Status> onBoth(const std::function<Status(int rank)>& f) {
  std::vector<Status> out(2);
  std::thread other([&] { out[1] = f(1); });
  out[0] = f(0);
  other.join();
  return out;
}

Status drain(Connection& c, long timeoutMs, const std::string& what) {
  Connection* one = &c;
  return waitIdle(&one, 1, Deadline::afterMs(timeoutMs), what);
}

void fillPattern(std::uint8_t* p, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = 0; i < n; ++i) {
    p[i] = static_cast<std::uint8_t>(((i + seed) * 2654435761u) >> 24);
  }
}

std::size_t checkPattern(const std::uint8_t* p, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] != static_cast<std::uint8_t>(((i + seed) * 2654435761u) >> 24)) return i;
  }
  return n;
}

}  // namespace cohort::transport::testing

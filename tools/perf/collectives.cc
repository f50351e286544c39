#include "tools/perf/collectives.h"

#include <algorithm>

namespace cohort::perf {

const std::vector<Coll>& allCollectives() {
  static const std::vector<Coll> kAll = {Coll::kAllReduce, Coll::kAllGather, Coll::kReduceScatter,
                                         Coll::kBroadcast, Coll::kReduce,    Coll::kAllToAll,
                                         Coll::kSendRecv};
  return kAll;
}

const char* cliName(Coll c) {
  switch (c) {
    case Coll::kAllReduce:
      return "allreduce";
    case Coll::kAllGather:
      return "allgather";
    case Coll::kReduceScatter:
      return "reducescatter";
    case Coll::kBroadcast:
      return "broadcast";
    case Coll::kReduce:
      return "reduce";
    case Coll::kAllToAll:
      return "alltoall";
    case Coll::kSendRecv:
      return "sendrecv";
  }
  return "?";
}

const char* peerName(Coll c) { return c == Coll::kReduceScatter ? "reduce_scatter" : cliName(c); }

bool parseColl(const std::string& text, Coll* out) {
  for (Coll c : allCollectives()) {
    if (text == cliName(c) || text == peerName(c)) {
      *out = c;
      return true;
    }
  }
  return false;
}

double busFactor(Coll c, int nranks) {
  const double n = nranks;
  switch (c) {
    case Coll::kAllReduce:
      return 2.0 * (n - 1) / n;
    case Coll::kAllGather:
    case Coll::kReduceScatter:
    case Coll::kAllToAll:
      return (n - 1) / n;
    default:
      return 1.0;
  }
}

bool isReduction(Coll c) {
  return c == Coll::kAllReduce || c == Coll::kReduceScatter || c == Coll::kReduce;
}

bool hasRoot(Coll c) { return c == Coll::kBroadcast || c == Coll::kReduce; }

bool hasInPlaceVariant(Coll c) {
  return c == Coll::kAllReduce || c == Coll::kAllGather || c == Coll::kReduceScatter ||
         c == Coll::kReduce;
}

Layout ncclLayout(Coll c, std::size_t requestedBytes, int nranks, std::size_t elementSize) {
  const std::size_t total = requestedBytes / elementSize;
  const std::size_t n = static_cast<std::size_t>(nranks);
  // nccl-tests: per-rank count rounded down to a multiple of 16 bytes.
  const std::size_t align = elementSize >= 16 ? 1 : 16 / elementSize;
  const std::size_t per = (total / n) / align * align;
  Layout l;
  switch (c) {
    case Coll::kAllGather:
      l.sendCount = per;
      l.recvCount = per * n;
      l.chunk = l.paramCount = per;
      break;
    case Coll::kReduceScatter:
      l.sendCount = per * n;
      l.recvCount = per;
      l.chunk = l.paramCount = per;
      break;
    case Coll::kAllToAll:
      l.sendCount = l.recvCount = per * n;
      l.chunk = l.paramCount = per;
      break;
    default:  // allreduce, broadcast, reduce, sendrecv: the whole buffer
      l.sendCount = l.recvCount = l.paramCount = total;
      break;
  }
  l.bytes = l.bwBytes = std::max(l.sendCount, l.recvCount) * elementSize;
  return l;
}

Layout hcclLayout(Coll c, std::size_t dataSize, int nranks, std::size_t elementSize) {
  const std::size_t n = static_cast<std::size_t>(nranks);
  std::size_t count = (dataSize + elementSize - 1) / elementSize;
  Layout l;
  switch (c) {
    case Coll::kAllGather:
    case Coll::kReduceScatter: {
      const std::size_t per = count / n;
      l.chunk = l.paramCount = per;
      l.sendCount = c == Coll::kAllGather ? per : per * n;
      l.recvCount = c == Coll::kAllGather ? per * n : per;
      l.bytes = l.bwBytes = per * n * elementSize;
      return l;
    }
    case Coll::kAllToAll: {
      const std::size_t per = count / n;
      l.chunk = l.paramCount = per;
      l.sendCount = l.recvCount = per * n;
      l.bytes = dataSize;
      l.bwBytes = per * n * elementSize;
      return l;
    }
    default:
      l.sendCount = l.recvCount = l.paramCount = count;
      l.bytes = dataSize;
      l.bwBytes = count * elementSize;
      return l;
  }
}

std::vector<std::size_t> ncclSizes(std::size_t minBytes, std::size_t maxBytes, double factor,
                                   std::size_t step) {
  std::vector<std::size_t> sizes;
  if (factor > 1.0) {
    double previous = 0;
    for (double req = static_cast<double>(minBytes);
         req <= static_cast<double>(maxBytes) * 1.000001; req *= factor) {
      const auto bytes = static_cast<std::size_t>(req + 0.5);
      if (static_cast<double>(bytes) == previous) continue;
      previous = static_cast<double>(bytes);
      sizes.push_back(bytes);
    }
    return sizes;
  }
  for (std::size_t b = minBytes; b <= maxBytes; b += step) {
    sizes.push_back(b);
    if (step == 0) break;
  }
  return sizes;
}

std::vector<std::size_t> hcclSizes(std::size_t minBytes, std::size_t maxBytes, double factor,
                                   std::size_t step) {
  if (factor <= 1.0) return ncclSizes(minBytes, maxBytes, 0.0, step);
  std::vector<std::size_t> sizes;
  for (std::size_t b = minBytes; b <= maxBytes && b > 0;) {
    sizes.push_back(b);
    const auto next = static_cast<std::size_t>(static_cast<double>(b) * factor);
    if (next <= b) break;
    b = next;
  }
  return sizes;
}

}  // namespace cohort::perf

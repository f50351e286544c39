// The collectives cohort-perf measures, and what a "size" means for each: the
// nccl-tests conventions that ../shared/peers/coll_bench_common.h follows (size =
// the larger per-rank buffer in bytes, count = the API's count parameter, per-rank
// chunks rounded down to 16 bytes), and hccl_test's (data_size, count rounded up).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cohort::perf {

enum class Coll {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv
};

/// Every collective, in the order "all" runs them (the peers' order, then reduce and
/// sendrecv).
const std::vector<Coll>& allCollectives();
/// Command-line name: allreduce, allgather, reducescatter, broadcast, reduce, alltoall,
/// sendrecv. Also Cohort's name in COHORT_ALGO specs.
const char* cliName(Coll c);
/// Block name and summarize.py kind, as the peers print them: allreduce, allgather,
/// reduce_scatter, broadcast, reduce, alltoall, sendrecv.
const char* peerName(Coll c);
/// Accepts cliName or peerName; false for anything else.
bool parseColl(const std::string& text, Coll* out);

/// nccl-tests bus bandwidth factor: allreduce 2(n-1)/n; allgather, reducescatter,
/// alltoall (n-1)/n; broadcast, reduce, sendrecv 1.
double busFactor(Coll c, int nranks);
bool isReduction(Coll c);
bool hasRoot(Coll c);
/// Collectives whose API takes one buffer (broadcast) or cannot run in place
/// (alltoall, sendrecv) have no separate in-place variant.
bool hasInPlaceVariant(Coll c);

/// Buffer layout of one call, in elements.
struct Layout {
  std::size_t sendCount = 0;   ///< elements in the send buffer (broadcast: the buffer)
  std::size_t recvCount = 0;   ///< elements in the receive buffer
  std::size_t chunk = 0;       ///< per-rank chunk (allgather, reducescatter, alltoall)
  std::size_t paramCount = 0;  ///< the count passed to the API ("count" column)
  std::size_t bytes = 0;       ///< "size" column / hccl_test data_size
  std::size_t bwBytes = 0;     ///< bytes that algbw divides by time
};

/// nccl-tests layout for a requested size (as coll_bench_common.h's makeLayout,
/// for any element size).
Layout ncclLayout(Coll c, std::size_t requestedBytes, int nranks, std::size_t elementSize);
/// hccl_test layout: count = ceil(data_size / element size); allgather and
/// reducescatter treat data_size as the whole (all ranks') buffer, so data_size is
/// first rounded down to a multiple of nranks elements; alltoall's per-peer count is
/// count / nranks.
Layout hcclLayout(Coll c, std::size_t dataSize, int nranks, std::size_t elementSize);

/// The requested sizes of a sweep. factor > 1: min, min*factor, ... (nccl-tests and
/// the peers: rounded, duplicates skipped); else min, min+step, ... (step 0: only min).
std::vector<std::size_t> ncclSizes(std::size_t minBytes, std::size_t maxBytes, double factor,
                                   std::size_t step);
/// hccl_test's sweep: data_size *= factor (truncated to an integer) or += step.
std::vector<std::size_t> hcclSizes(std::size_t minBytes, std::size_t maxBytes, double factor,
                                   std::size_t step);

}  // namespace cohort::perf

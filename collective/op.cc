#include "collective/op.h"

#include <fmt/format.h>

#include "common/error.h"

namespace cohort::collective {

const char* collName(Coll c) {
  static const char* kNames[] = {"allreduce", "allgather", "allgatherv", "reducescatter",
                                 "reducescatterv", "broadcast", "reduce", "gather", "scatter",
                                 "alltoall", "alltoallv", "sendrecv", "barrier"};
  const int i = static_cast<int>(c);
  return i >= 0 && i < kCollCount ? kNames[i] : "unknown";
}

std::array<std::uint64_t, 4> OpDesc::fingerprint() const {
  // V-variants legitimately differ in counts between ranks: only the rest must agree.
  const bool variable = coll == Coll::kAllGatherV || coll == Coll::kReduceScatterV ||
                        coll == Coll::kAllToAllV || coll == Coll::kSendRecv;
  return {(seq << 8) | static_cast<std::uint64_t>(coll), variable ? 0 : count,
          static_cast<std::uint64_t>(type) | (static_cast<std::uint64_t>(op) << 8),
          static_cast<std::uint64_t>(static_cast<std::int64_t>(root))};
}

void OpDesc::assign(const OpDesc& from) {
  static_assert(sizeof(void*) != 8 || sizeof(OpDesc) == 176,
                "OpDesc changed: copy its new fields below too");
  const bool plain = from.counts.empty() && from.displs.empty() && from.counts2.empty() &&
                     from.displs2.empty() && from.items.empty() && counts.empty() &&
                     displs.empty() && counts2.empty() && displs2.empty() && items.empty();
  if (!plain) {
    *this = from;
    return;
  }
  coll = from.coll;
  input = from.input;
  output = from.output;
  count = from.count;
  type = from.type;
  op = from.op;
  root = from.root;
  seq = from.seq;
}

std::size_t OpDesc::inputBytes(int n) const {
  const std::size_t b = count * dataTypeSize(type);
  switch (coll) {
    case Coll::kReduceScatter: case Coll::kScatter: case Coll::kAllToAll:
      return b * static_cast<std::size_t>(n);
    case Coll::kBarrier: return 0;
    default: return b;
  }
}

std::size_t OpDesc::outputBytes(int n) const {
  const std::size_t b = count * dataTypeSize(type);
  switch (coll) {
    case Coll::kAllGather: case Coll::kGather: case Coll::kAllToAll:
      return b * static_cast<std::size_t>(n);
    case Coll::kBarrier: return 0;
    default: return b;
  }
}

// Only the fields the operation has: a broadcast has no reduce op, an allreduce no root, a
// send/recv batch neither a count nor a sequence shared with the peers.
std::string OpDesc::describe() const {
  const bool reduces = coll == Coll::kAllReduce || coll == Coll::kReduce ||
                       coll == Coll::kReduceScatter || coll == Coll::kReduceScatterV;
  const bool rooted = coll == Coll::kBroadcast || coll == Coll::kReduce ||
                      coll == Coll::kGather || coll == Coll::kScatter;
  if (coll == Coll::kBarrier) return fmt::format("barrier #{}", seq);
  if (coll == Coll::kSendRecv) {
    std::string what;
    for (const auto& it : items) {
      what += fmt::format("{}{} {} x {} {} rank {}", what.empty() ? "" : ", ",
                          it.isSend ? "send" : "recv", it.count, dataTypeName(it.type),
                          it.isSend ? "to" : "from", it.peer);
      if (what.size() > 200) {
        what += ", ...";
        break;
      }
    }
    return fmt::format("{} ({})", collName(coll), what);
  }
  std::string fields = fmt::format("{} x {}", count, dataTypeName(type));
  if (reduces) fields += fmt::format(", {}", reduceOpName(op));
  if (rooted) fields += fmt::format(", root {}", root);
  return fmt::format("{} #{} ({})", collName(coll), seq, fields);
}

std::string fingerprintDiff(const std::array<std::uint64_t, 4>& a,
                            const std::array<std::uint64_t, 4>& b) {
  if ((a[0] & 0xff) != (b[0] & 0xff)) {
    return fmt::format("collective: {} vs {}", collName(static_cast<Coll>(a[0] & 0xff)),
                       collName(static_cast<Coll>(b[0] & 0xff)));
  }
  if ((a[0] >> 8) != (b[0] >> 8)) {
    return fmt::format("operation sequence number: {} vs {}", a[0] >> 8, b[0] >> 8);
  }
  if (a[1] != b[1]) return fmt::format("count: {} vs {}", a[1], b[1]);
  if ((a[2] & 0xff) != (b[2] & 0xff)) {
    return fmt::format("data type: {} vs {}", dataTypeName(static_cast<DataType>(a[2] & 0xff)),
                       dataTypeName(static_cast<DataType>(b[2] & 0xff)));
  }
  if ((a[2] >> 8) != (b[2] >> 8)) {
    return fmt::format("reduce op: {} vs {}", reduceOpName(static_cast<ReduceOp>(a[2] >> 8)),
                       reduceOpName(static_cast<ReduceOp>(b[2] >> 8)));
  }
  if (a[3] != b[3]) {
    return fmt::format("root: {} vs {}", static_cast<std::int64_t>(a[3]),
                       static_cast<std::int64_t>(b[3]));
  }
  return "";
}

Status mismatchError(int rank, int peer, const std::string& difference,
                     const std::string& thisCall) {
  return makeError(ErrorCode::kMismatch,
                   "mismatched collective between rank {} and rank {}: {} (this rank: {})", rank,
                   peer, difference, thisCall);
}

}  // namespace cohort::collective

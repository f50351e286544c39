// The collectives. Each checks its arguments in HCCL's terms, converts them and
// enqueues the C++ call on the caller's stream.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "cohort/communicator.h"
#include "common/error.h"
#include "hccl/api_call.h"
#include "hccl/arguments.h"
#include "hccl/hccl.h"

namespace {

using cohort::DataType;
using cohort::ReduceOp;
using cohort::hccl::apiCall;
using cohort::hccl::beginCall;
using cohort::hccl::CallContext;
using cohort::hccl::checkRank;
using cohort::hccl::invalidParameter;
using cohort::hccl::nothingToDo;
using cohort::hccl::Outcome;
using cohort::hccl::readCounts;
using cohort::hccl::requireBuffers;
using cohort::hccl::requireDeviceReachable;
using cohort::hccl::requirePointers;
using cohort::hccl::toDataType;
using cohort::hccl::toReduceOp;

// The common start of a reduction: communicator, stream, type and operation.
Outcome beginReduction(const char* fn, HcclComm comm, aclrtStream stream, HcclDataType dataType,
                       HcclReduceOp op, CallContext* call, DataType* type, ReduceOp* reduceOp) {
  HCCL_RETURN_IF_FAILED(beginCall(fn, comm, stream, call));
  HCCL_RETURN_IF_FAILED(toDataType(fn, dataType, "dataType", type));
  return toReduceOp(fn, op, reduceOp);
}

Outcome beginTyped(const char* fn, HcclComm comm, aclrtStream stream, HcclDataType dataType,
                   CallContext* call, DataType* type) {
  HCCL_RETURN_IF_FAILED(beginCall(fn, comm, stream, call));
  return toDataType(fn, dataType, "dataType", type);
}

// As HCCL's all-to-all-v: a buffer is required only where its counts move something.
Outcome requireBuffersOfNonZeroCounts(const char* fn, const void* sendBuf,
                                      const std::vector<std::size_t>& sendCounts,
                                      const void* recvBuf,
                                      const std::vector<std::size_t>& recvCounts) {
  const auto any = [](const std::vector<std::size_t>& c) {
    return std::any_of(c.begin(), c.end(), [](std::size_t x) { return x != 0; });
  };
  if (any(sendCounts)) HCCL_RETURN_IF_FAILED(requirePointers(fn, {{"sendBuf", sendBuf}}));
  if (any(recvCounts)) HCCL_RETURN_IF_FAILED(requirePointers(fn, {{"recvBuf", recvBuf}}));
  return cohort::Status::Ok();
}

// The arguments of a V collective (HcclReduceScatterV, HcclAllGatherV) that
// describe its blocks, checked in HCCL's order: the counts and displacements;
// this rank's buffer, which may be null when its block is empty; success when
// every block is empty (*done); the buffer of all blocks; this rank's count
// against its entry of the counts.
struct Blocks {
  std::pair<const char*, const void*> counts, displs;  // name, the uint64_t array
  const char* ownCount;                                // the scalar count's name
  std::uint64_t own;                                   // its value
  std::pair<const char*, const void*> ownBuf, allBuf;  // name, pointer
};

Outcome checkBlocks(const char* fn, const CallContext& call, const Blocks& b,
                    std::vector<std::size_t>* counts, std::vector<std::size_t>* displs,
                    bool* done) {
  *done = false;
  HCCL_RETURN_IF_FAILED(requirePointers(fn, {b.counts, b.displs}));
  if (b.own != 0) HCCL_RETURN_IF_FAILED(requirePointers(fn, {b.ownBuf}));
  const int n = call.comm().size();
  *counts = readCounts(b.counts.second, n);
  if (std::accumulate(counts->begin(), counts->end(), std::size_t{0}) == 0) {
    *done = true;
    return nothingToDo(fn, fmt::format("the sum of {} is 0", b.counts.first).c_str());
  }
  HCCL_RETURN_IF_FAILED(requirePointers(fn, {b.allBuf}));
  const auto rank = static_cast<std::size_t>(call.comm().rank());
  if ((*counts)[rank] != b.own) {
    return invalidParameter(
        fn, std::to_string(b.own), b.ownCount,
        fmt::format("{}[{}] = {} (this rank's block)", b.counts.first, rank, (*counts)[rank]));
  }
  HCCL_RETURN_IF_FAILED(requireDeviceReachable(fn, {b.ownBuf, b.allBuf}));
  *displs = readCounts(b.displs.second, n);
  return cohort::Status::Ok();
}

}  // namespace

HcclResult HcclAllReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType,
                         HcclReduceOp op, HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclAllReduce";
  return apiCall(fn, [&]() -> Outcome {
    if (count == 0) return nothingToDo(fn, "count is 0");  // first, as HCCL checks
    CallContext call;
    DataType type;
    ReduceOp reduceOp;
    HCCL_RETURN_IF_FAILED(beginReduction(fn, comm, stream, dataType, op, &call, &type, &reduceOp));
    HCCL_RETURN_IF_FAILED(requireBuffers(fn, {{"sendBuf", sendBuf}, {"recvBuf", recvBuf}}));
    return call.comm().allReduce(sendBuf, recvBuf, count, type, reduceOp, call.stream);
  });
}

HcclResult HcclBroadcast(void* buf, uint64_t count, HcclDataType dataType, uint32_t root,
                         HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclBroadcast";
  return apiCall(fn, [&]() -> Outcome {
    if (count == 0) return nothingToDo(fn, "count is 0");  // first, as HCCL checks
    CallContext call;
    DataType type;
    HCCL_RETURN_IF_FAILED(beginTyped(fn, comm, stream, dataType, &call, &type));
    HCCL_RETURN_IF_FAILED(requirePointers(fn, {{"buf", buf}}));
    HCCL_RETURN_IF_FAILED(checkRank(fn, root, "root", call.comm().size()));
    HCCL_RETURN_IF_FAILED(requireDeviceReachable(fn, {{"buf", buf}}));
    return call.comm().broadcast(buf, count, type, static_cast<int>(root), call.stream);
  });
}

HcclResult HcclReduceScatter(void* sendBuf, void* recvBuf, uint64_t recvCount,
                             HcclDataType dataType, HcclReduceOp op, HcclComm comm,
                             aclrtStream stream) {
  const char* fn = "HcclReduceScatter";
  return apiCall(fn, [&]() -> Outcome {
    if (recvCount == 0) return nothingToDo(fn, "recvCount is 0");  // first, as HCCL checks
    CallContext call;
    DataType type;
    ReduceOp reduceOp;
    HCCL_RETURN_IF_FAILED(beginReduction(fn, comm, stream, dataType, op, &call, &type, &reduceOp));
    HCCL_RETURN_IF_FAILED(requireBuffers(fn, {{"sendBuf", sendBuf}, {"recvBuf", recvBuf}}));
    return call.comm().reduceScatter(sendBuf, recvBuf, recvCount, type, reduceOp, call.stream);
  });
}

HcclResult HcclReduceScatterV(void* sendBuf, const void* sendCounts, const void* sendDispls,
                              void* recvBuf, uint64_t recvCount, HcclDataType dataType,
                              HcclReduceOp op, HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclReduceScatterV";
  return apiCall(fn, [&]() -> Outcome {
    CallContext call;
    DataType type;
    ReduceOp reduceOp;
    HCCL_RETURN_IF_FAILED(beginReduction(fn, comm, stream, dataType, op, &call, &type, &reduceOp));
    // As HCCL: a rank that receives nothing may pass no buffer, and nothing to reduce at
    // all is success.
    std::vector<std::size_t> counts, displs;
    bool done = false;
    const Outcome blocks = checkBlocks(fn, call,
                                       {{"sendCounts", sendCounts},
                                        {"sendDispls", sendDispls},
                                        "recvCount",
                                        recvCount,
                                        {"recvBuf", recvBuf},
                                        {"sendBuf", sendBuf}},
                                       &counts, &displs, &done);
    if (done || !blocks.ok()) return blocks;
    return call.comm().reduceScatterV(sendBuf, counts, displs, recvBuf, recvCount, type, reduceOp,
                                      call.stream);
  });
}

HcclResult HcclAllGather(void* sendBuf, void* recvBuf, uint64_t sendCount, HcclDataType dataType,
                         HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclAllGather";
  return apiCall(fn, [&]() -> Outcome {
    if (sendCount == 0) return nothingToDo(fn, "sendCount is 0");  // first, as HCCL checks
    CallContext call;
    DataType type;
    HCCL_RETURN_IF_FAILED(beginTyped(fn, comm, stream, dataType, &call, &type));
    HCCL_RETURN_IF_FAILED(requireBuffers(fn, {{"sendBuf", sendBuf}, {"recvBuf", recvBuf}}));
    return call.comm().allGather(sendBuf, recvBuf, sendCount, type, call.stream);
  });
}

HcclResult HcclAllGatherV(void* sendBuf, uint64_t sendCount, void* recvBuf, const void* recvCounts,
                          const void* recvDispls, HcclDataType dataType, HcclComm comm,
                          aclrtStream stream) {
  const char* fn = "HcclAllGatherV";
  return apiCall(fn, [&]() -> Outcome {
    CallContext call;
    DataType type;
    HCCL_RETURN_IF_FAILED(beginTyped(fn, comm, stream, dataType, &call, &type));
    // As HCCL: a rank that sends nothing may pass no buffer, and nothing to gather at all
    // is success.
    std::vector<std::size_t> counts, displs;
    bool done = false;
    const Outcome blocks = checkBlocks(fn, call,
                                       {{"recvCounts", recvCounts},
                                        {"recvDispls", recvDispls},
                                        "sendCount",
                                        sendCount,
                                        {"sendBuf", sendBuf},
                                        {"recvBuf", recvBuf}},
                                       &counts, &displs, &done);
    if (done || !blocks.ok()) return blocks;
    return call.comm().allGatherV(sendBuf, sendCount, recvBuf, counts, displs, type, call.stream);
  });
}

HcclResult HcclReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType,
                      HcclReduceOp op, uint32_t root, HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclReduce";
  return apiCall(fn, [&]() -> Outcome {
    if (count == 0) return nothingToDo(fn, "count is 0");  // first, as HCCL checks
    CallContext call;
    DataType type;
    ReduceOp reduceOp;
    HCCL_RETURN_IF_FAILED(beginReduction(fn, comm, stream, dataType, op, &call, &type, &reduceOp));
    HCCL_RETURN_IF_FAILED(requirePointers(fn, {{"sendBuf", sendBuf}, {"recvBuf", recvBuf}}));
    HCCL_RETURN_IF_FAILED(checkRank(fn, root, "root", call.comm().size()));
    const bool isRoot = root == static_cast<std::uint32_t>(call.comm().rank());
    void* received = isRoot ? recvBuf : nullptr;  // only the root's is written
    HCCL_RETURN_IF_FAILED(
        requireDeviceReachable(fn, {{"sendBuf", sendBuf}, {"recvBuf", received}}));
    return call.comm().reduce(sendBuf, recvBuf, count, type, reduceOp, static_cast<int>(root),
                              call.stream);
  });
}

HcclResult HcclScatter(void* sendBuf, void* recvBuf, uint64_t recvCount, HcclDataType dataType,
                       uint32_t root, HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclScatter";
  return apiCall(fn, [&]() -> Outcome {
    if (recvCount == 0) return nothingToDo(fn, "recvCount is 0");  // first, as HCCL checks
    CallContext call;
    DataType type;
    HCCL_RETURN_IF_FAILED(beginTyped(fn, comm, stream, dataType, &call, &type));
    HCCL_RETURN_IF_FAILED(checkRank(fn, root, "root", call.comm().size()));
    const bool isRoot = root == static_cast<std::uint32_t>(call.comm().rank());
    if (isRoot) HCCL_RETURN_IF_FAILED(requirePointers(fn, {{"sendBuf", sendBuf}}));
    HCCL_RETURN_IF_FAILED(requirePointers(fn, {{"recvBuf", recvBuf}}));
    void* sent = isRoot ? sendBuf : nullptr;  // only the root's is read
    HCCL_RETURN_IF_FAILED(requireDeviceReachable(fn, {{"sendBuf", sent}, {"recvBuf", recvBuf}}));
    return call.comm().scatter(sendBuf, recvBuf, recvCount, type, static_cast<int>(root),
                               call.stream);
  });
}

HcclResult HcclAlltoAll(const void* sendBuf, uint64_t sendCount, HcclDataType sendType,
                        const void* recvBuf, uint64_t recvCount, HcclDataType recvType,
                        HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclAlltoAll";
  return apiCall(fn, [&]() -> Outcome {
    if (sendCount == 0 && recvCount == 0) return nothingToDo(fn, "sendCount and recvCount are 0");
    CallContext call;
    DataType type, receiveType;
    HCCL_RETURN_IF_FAILED(beginTyped(fn, comm, stream, sendType, &call, &type));
    HCCL_RETURN_IF_FAILED(toDataType(fn, recvType, "recvType", &receiveType));
    HCCL_RETURN_IF_FAILED(requirePointers(fn, {{"sendBuf", sendBuf}, {"recvBuf", recvBuf}}));
    if (receiveType != type) {
      return invalidParameter(fn, std::to_string(static_cast<int>(recvType)), "recvType",
                              fmt::format("sendType ({})", static_cast<int>(sendType)));
    }
    if (recvCount != sendCount) {
      return invalidParameter(fn, std::to_string(recvCount), "recvCount",
                              fmt::format("sendCount ({})", sendCount));
    }
    HCCL_RETURN_IF_FAILED(requireDeviceReachable(fn, {{"sendBuf", sendBuf}, {"recvBuf", recvBuf}}));
    return call.comm().allToAll(sendBuf, const_cast<void*>(recvBuf), sendCount, type, call.stream);
  });
}

HcclResult HcclAlltoAllV(const void* sendBuf, const void* sendCounts, const void* sdispls,
                         HcclDataType sendType, const void* recvBuf, const void* recvCounts,
                         const void* rdispls, HcclDataType recvType, HcclComm comm,
                         aclrtStream stream) {
  const char* fn = "HcclAlltoAllV";
  return apiCall(fn, [&]() -> Outcome {
    CallContext call;
    DataType type, receiveType;
    HCCL_RETURN_IF_FAILED(beginTyped(fn, comm, stream, sendType, &call, &type));
    HCCL_RETURN_IF_FAILED(toDataType(fn, recvType, "recvType", &receiveType));
    HCCL_RETURN_IF_FAILED(requirePointers(fn, {{"sendCounts", sendCounts},
                                               {"sdispls", sdispls},
                                               {"recvCounts", recvCounts},
                                               {"rdispls", rdispls}}));
    if (receiveType != type) {
      return invalidParameter(fn, std::to_string(static_cast<int>(recvType)), "recvType",
                              fmt::format("sendType ({})", static_cast<int>(sendType)));
    }
    const int n = call.comm().size();
    const auto sends = readCounts(sendCounts, n), receives = readCounts(recvCounts, n);
    HCCL_RETURN_IF_FAILED(requireBuffersOfNonZeroCounts(fn, sendBuf, sends, recvBuf, receives));
    // All counts 0 is still a collective, as in HCCL: every rank takes part.
    HCCL_RETURN_IF_FAILED(requireDeviceReachable(fn, {{"sendBuf", sendBuf}, {"recvBuf", recvBuf}}));
    return call.comm().allToAllV(sendBuf, sends, readCounts(sdispls, n), const_cast<void*>(recvBuf),
                                 receives, readCounts(rdispls, n), type, call.stream);
  });
}

HcclResult HcclAlltoAllVC(const void* sendBuf, const void* sendCountMatrix, HcclDataType sendType,
                          const void* recvBuf, HcclDataType recvType, HcclComm comm,
                          aclrtStream stream) {
  const char* fn = "HcclAlltoAllVC";
  return apiCall(fn, [&]() -> Outcome {
    CallContext call;
    DataType type, receiveType;
    HCCL_RETURN_IF_FAILED(beginTyped(fn, comm, stream, sendType, &call, &type));
    HCCL_RETURN_IF_FAILED(toDataType(fn, recvType, "recvType", &receiveType));
    HCCL_RETURN_IF_FAILED(requirePointers(fn, {{"sendCountMatrix", sendCountMatrix}}));
    if (receiveType != type) {
      return invalidParameter(fn, std::to_string(static_cast<int>(recvType)), "recvType",
                              fmt::format("sendType ({})", static_cast<int>(sendType)));
    }
    // The matrix gives every rank's counts: this rank's row is what it sends, its column
    // what it receives, both packed in rank order (an AlltoAllV with prefix sums).
    const int n = call.comm().size(), me = call.comm().rank();
    const auto* m = static_cast<const std::uint64_t*>(sendCountMatrix);
    const auto un = static_cast<std::size_t>(n);
    std::vector<std::size_t> sendCounts(un), sendDispls(un), recvCounts(un), recvDispls(un);
    std::size_t sent = 0, received = 0;
    for (std::size_t j = 0; j < un; ++j) {
      sendCounts[j] = m[static_cast<std::size_t>(me) * un + j];
      recvCounts[j] = m[j * un + static_cast<std::size_t>(me)];
      sendDispls[j] = sent;
      recvDispls[j] = received;
      sent += sendCounts[j];
      received += recvCounts[j];
    }
    HCCL_RETURN_IF_FAILED(
        requireBuffersOfNonZeroCounts(fn, sendBuf, sendCounts, recvBuf, recvCounts));
    HCCL_RETURN_IF_FAILED(requireDeviceReachable(fn, {{"sendBuf", sendBuf}, {"recvBuf", recvBuf}}));
    return call.comm().allToAllV(sendBuf, sendCounts, sendDispls, const_cast<void*>(recvBuf),
                                 recvCounts, recvDispls, type, call.stream);
  });
}

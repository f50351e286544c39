// The collectives. Each checks its arguments in HCCL's terms, converts them and
// enqueues the C++ call on the caller's stream.
#include <fmt/format.h>

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
using cohort::hccl::Outcome;
using cohort::hccl::readCounts;
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

}  // namespace

HcclResult HcclAllReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType,
                         HcclReduceOp op, HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclAllReduce";
  return apiCall(fn, [&]() -> Outcome {
    CallContext call;
    DataType type;
    ReduceOp reduceOp;
    HCCL_RETURN_IF_FAILED(beginReduction(fn, comm, stream, dataType, op, &call, &type, &reduceOp));
    HCCL_RETURN_IF_FAILED(requirePointers(fn, {{"sendBuf", sendBuf}, {"recvBuf", recvBuf}}));
    return call.comm().allReduce(sendBuf, recvBuf, count, type, reduceOp, call.stream);
  });
}

HcclResult HcclBroadcast(void* buf, uint64_t count, HcclDataType dataType, uint32_t root,
                         HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclBroadcast";
  return apiCall(fn, [&]() -> Outcome {
    CallContext call;
    DataType type;
    HCCL_RETURN_IF_FAILED(beginTyped(fn, comm, stream, dataType, &call, &type));
    HCCL_RETURN_IF_FAILED(requirePointers(fn, {{"buf", buf}}));
    HCCL_RETURN_IF_FAILED(checkRank(fn, root, "root", call.comm().size()));
    return call.comm().broadcast(buf, count, type, static_cast<int>(root), call.stream);
  });
}

HcclResult HcclReduceScatter(void* sendBuf, void* recvBuf, uint64_t recvCount,
                             HcclDataType dataType, HcclReduceOp op, HcclComm comm,
                             aclrtStream stream) {
  const char* fn = "HcclReduceScatter";
  return apiCall(fn, [&]() -> Outcome {
    CallContext call;
    DataType type;
    ReduceOp reduceOp;
    HCCL_RETURN_IF_FAILED(beginReduction(fn, comm, stream, dataType, op, &call, &type, &reduceOp));
    HCCL_RETURN_IF_FAILED(requirePointers(fn, {{"sendBuf", sendBuf}, {"recvBuf", recvBuf}}));
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
    HCCL_RETURN_IF_FAILED(requirePointers(fn, {{"sendBuf", sendBuf},
                                               {"sendCounts", sendCounts},
                                               {"sendDispls", sendDispls},
                                               {"recvBuf", recvBuf}}));
    const int n = call.comm().size();
    const auto counts = readCounts(sendCounts, n);
    const auto rank = static_cast<std::size_t>(call.comm().rank());
    if (counts[rank] != recvCount) {
      return invalidParameter(
          fn, std::to_string(recvCount), "recvCount",
          fmt::format("sendCounts[{}] = {} (this rank's block)", rank, counts[rank]));
    }
    return call.comm().reduceScatterV(sendBuf, counts, readCounts(sendDispls, n), recvBuf,
                                      recvCount, type, reduceOp, call.stream);
  });
}

HcclResult HcclAllGather(void* sendBuf, void* recvBuf, uint64_t sendCount, HcclDataType dataType,
                         HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclAllGather";
  return apiCall(fn, [&]() -> Outcome {
    CallContext call;
    DataType type;
    HCCL_RETURN_IF_FAILED(beginTyped(fn, comm, stream, dataType, &call, &type));
    HCCL_RETURN_IF_FAILED(requirePointers(fn, {{"sendBuf", sendBuf}, {"recvBuf", recvBuf}}));
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
    HCCL_RETURN_IF_FAILED(requirePointers(fn, {{"sendBuf", sendBuf},
                                               {"recvBuf", recvBuf},
                                               {"recvCounts", recvCounts},
                                               {"recvDispls", recvDispls}}));
    const int n = call.comm().size();
    const auto counts = readCounts(recvCounts, n);
    const auto rank = static_cast<std::size_t>(call.comm().rank());
    if (counts[rank] != sendCount) {
      return invalidParameter(
          fn, std::to_string(sendCount), "sendCount",
          fmt::format("recvCounts[{}] = {} (this rank's block)", rank, counts[rank]));
    }
    return call.comm().allGatherV(sendBuf, sendCount, recvBuf, counts, readCounts(recvDispls, n),
                                  type, call.stream);
  });
}

HcclResult HcclReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType,
                      HcclReduceOp op, uint32_t root, HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclReduce";
  return apiCall(fn, [&]() -> Outcome {
    CallContext call;
    DataType type;
    ReduceOp reduceOp;
    HCCL_RETURN_IF_FAILED(beginReduction(fn, comm, stream, dataType, op, &call, &type, &reduceOp));
    HCCL_RETURN_IF_FAILED(requirePointers(fn, {{"sendBuf", sendBuf}, {"recvBuf", recvBuf}}));
    HCCL_RETURN_IF_FAILED(checkRank(fn, root, "root", call.comm().size()));
    return call.comm().reduce(sendBuf, recvBuf, count, type, reduceOp, static_cast<int>(root),
                              call.stream);
  });
}

HcclResult HcclScatter(void* sendBuf, void* recvBuf, uint64_t recvCount, HcclDataType dataType,
                       uint32_t root, HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclScatter";
  return apiCall(fn, [&]() -> Outcome {
    CallContext call;
    DataType type;
    HCCL_RETURN_IF_FAILED(beginTyped(fn, comm, stream, dataType, &call, &type));
    HCCL_RETURN_IF_FAILED(checkRank(fn, root, "root", call.comm().size()));
    if (root == static_cast<std::uint32_t>(call.comm().rank())) {
      HCCL_RETURN_IF_FAILED(requirePointers(fn, {{"sendBuf", sendBuf}}));
    }
    HCCL_RETURN_IF_FAILED(requirePointers(fn, {{"recvBuf", recvBuf}}));
    return call.comm().scatter(sendBuf, recvBuf, recvCount, type, static_cast<int>(root),
                               call.stream);
  });
}

HcclResult HcclAlltoAll(const void* sendBuf, uint64_t sendCount, HcclDataType sendType,
                        const void* recvBuf, uint64_t recvCount, HcclDataType recvType,
                        HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclAlltoAll";
  return apiCall(fn, [&]() -> Outcome {
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
    HCCL_RETURN_IF_FAILED(requirePointers(fn, {{"sendBuf", sendBuf},
                                               {"sendCounts", sendCounts},
                                               {"sdispls", sdispls},
                                               {"recvBuf", recvBuf},
                                               {"recvCounts", recvCounts},
                                               {"rdispls", rdispls}}));
    if (receiveType != type) {
      return invalidParameter(fn, std::to_string(static_cast<int>(recvType)), "recvType",
                              fmt::format("sendType ({})", static_cast<int>(sendType)));
    }
    const int n = call.comm().size();
    return call.comm().allToAllV(sendBuf, readCounts(sendCounts, n), readCounts(sdispls, n),
                                 const_cast<void*>(recvBuf), readCounts(recvCounts, n),
                                 readCounts(rdispls, n), type, call.stream);
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
    HCCL_RETURN_IF_FAILED(requirePointers(
        fn, {{"sendBuf", sendBuf}, {"sendCountMatrix", sendCountMatrix}, {"recvBuf", recvBuf}}));
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
    return call.comm().allToAllV(sendBuf, sendCounts, sendDispls, const_cast<void*>(recvBuf),
                                 recvCounts, recvDispls, type, call.stream);
  });
}

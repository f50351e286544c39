// The operations: collectives, point to point, barrier and groups. Each checks
// its arguments in HCCL's terms, converts them and enqueues the C++ call on the
// caller's stream.
#include <fmt/format.h>

#include <vector>

#include "cohort/communicator.h"
#include "common/error.h"
#include "hccl/api_call.h"
#include "hccl/arguments.h"
#include "hccl/hccl.h"

namespace {

using cohort::Communicator;
using cohort::DataType;
using cohort::ReduceOp;
using cohort::Status;
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

Outcome sendRecvItem(const char* fn, const HcclSendRecvItem& item, std::uint32_t index,
                     const Communicator& comm, cohort::SendRecvItem* out) {
  const std::string where = fmt::format("sendRecvInfo[{}]", index);
  if (item.sendRecvType != HCCL_SEND && item.sendRecvType != HCCL_RECV) {
    return invalidParameter(fn, std::to_string(static_cast<int>(item.sendRecvType)),
                            (where + ".sendRecvType").c_str(), "HCCL_SEND (0) or HCCL_RECV (1)");
  }
  if (item.buf == nullptr) return cohort::hccl::nullPointer(fn, (where + ".buf").c_str());
  HCCL_RETURN_IF_FAILED(
      checkRank(fn, item.remoteRank, (where + ".remoteRank").c_str(), comm.size()));
  if (item.remoteRank == static_cast<std::uint32_t>(comm.rank())) {
    return invalidParameter(fn, std::to_string(item.remoteRank), (where + ".remoteRank").c_str(),
                            "a rank other than this one");
  }
  out->isSend = item.sendRecvType == HCCL_SEND;
  out->buffer = item.buf;
  out->count = item.count;
  out->peer = static_cast<int>(item.remoteRank);
  return toDataType(fn, item.dataType, (where + ".dataType").c_str(), &out->type);
}

Outcome pointToPoint(const char* fn, bool isSend, void* buf, std::uint64_t count,
                     HcclDataType dataType, std::uint32_t peer, HcclComm comm, aclrtStream stream) {
  const char* peerName = isSend ? "destRank" : "srcRank";
  CallContext call;
  DataType type;
  HCCL_RETURN_IF_FAILED(beginTyped(fn, comm, stream, dataType, &call, &type));
  HCCL_RETURN_IF_FAILED(requirePointers(fn, {{isSend ? "sendBuf" : "recvBuf", buf}}));
  HCCL_RETURN_IF_FAILED(checkRank(fn, peer, peerName, call.comm().size()));
  if (peer == static_cast<std::uint32_t>(call.comm().rank())) {
    return invalidParameter(fn, std::to_string(peer), peerName, "a rank other than this one");
  }
  if (isSend) return call.comm().send(buf, count, type, static_cast<int>(peer), call.stream);
  return call.comm().recv(buf, count, type, static_cast<int>(peer), call.stream);
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

HcclResult HcclSend(void* sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank,
                    HcclComm comm, aclrtStream stream) {
  return apiCall("HcclSend", [&]() {
    return pointToPoint("HcclSend", true, sendBuf, count, dataType, destRank, comm, stream);
  });
}

HcclResult HcclRecv(void* recvBuf, uint64_t count, HcclDataType dataType, uint32_t srcRank,
                    HcclComm comm, aclrtStream stream) {
  return apiCall("HcclRecv", [&]() {
    return pointToPoint("HcclRecv", false, recvBuf, count, dataType, srcRank, comm, stream);
  });
}

HcclResult HcclBatchSendRecv(HcclSendRecvItem* sendRecvInfo, uint32_t itemNum, HcclComm comm,
                             aclrtStream stream) {
  const char* fn = "HcclBatchSendRecv";
  return apiCall(fn, [&]() -> Outcome {
    CallContext call;
    HCCL_RETURN_IF_FAILED(beginCall(fn, comm, stream, &call));
    HCCL_RETURN_IF_FAILED(requirePointers(fn, {{"sendRecvInfo", sendRecvInfo}}));
    if (itemNum == 0) return invalidParameter(fn, "0", "itemNum", "at least 1");
    std::vector<cohort::SendRecvItem> items(itemNum);
    for (std::uint32_t i = 0; i < itemNum; ++i) {
      HCCL_RETURN_IF_FAILED(sendRecvItem(fn, sendRecvInfo[i], i, call.comm(), &items[i]));
    }
    return call.comm().batchSendRecv(items, call.stream);
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

HcclResult HcclBarrier(HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclBarrier";
  return apiCall(fn, [&]() -> Outcome {
    CallContext call;
    HCCL_RETURN_IF_FAILED(beginCall(fn, comm, stream, &call));
    return call.comm().barrier(call.stream);
  });
}

HcclResult HcclGroupStart(void) {
  return apiCall("HcclGroupStart", []() -> Outcome { return Communicator::groupStart(); });
}

HcclResult HcclGroupEnd(void) {
  return apiCall("HcclGroupEnd", []() -> Outcome { return Communicator::groupEnd(); });
}

// Point to point, barrier and groups: HcclSend, HcclRecv, HcclBatchSendRecv,
// HcclBarrier, HcclGroupStart, HcclGroupEnd.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "cohort/communicator.h"
#include "common/error.h"
#include "hccl/api_call.h"
#include "hccl/arguments.h"
#include "hccl/state_callbacks.h"
#include "hccl/hccl.h"

namespace {

using cohort::Communicator;
using cohort::Status;
using cohort::DataType;
using cohort::hccl::apiCall;
using cohort::hccl::beginCall;
using cohort::hccl::CallContext;
using cohort::hccl::checkRank;
using cohort::hccl::invalidParameter;
using cohort::hccl::nothingToDo;
using cohort::hccl::Outcome;
using cohort::hccl::requireDeviceReachable;
using cohort::hccl::requirePointers;
using cohort::hccl::toDataType;

Outcome sendRecvItem(const char* fn, const HcclSendRecvItem& item, std::uint32_t index,
                     const Communicator& comm, cohort::SendRecvItem* out) {
  const std::string where = fmt::format("sendRecvInfo[{}]", index);
  if (item.sendRecvType != HCCL_SEND && item.sendRecvType != HCCL_RECV) {
    return invalidParameter(fn, std::to_string(static_cast<int>(item.sendRecvType)),
                            (where + ".sendRecvType").c_str(), "HCCL_SEND (0) or HCCL_RECV (1)");
  }
  if (item.buf == nullptr) return cohort::hccl::nullPointer(fn, (where + ".buf").c_str());
  HCCL_RETURN_IF_FAILED(requireDeviceReachable(fn, {{(where + ".buf").c_str(), item.buf}}));
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
  if (count == 0) return nothingToDo(fn, "count is 0");  // first, as HCCL checks
  const char* peerName = isSend ? "destRank" : "srcRank";
  CallContext call;
  DataType type;
  HCCL_RETURN_IF_FAILED(beginCall(fn, comm, stream, &call));
  HCCL_RETURN_IF_FAILED(toDataType(fn, dataType, "dataType", &type));
  HCCL_RETURN_IF_FAILED(requirePointers(fn, {{isSend ? "sendBuf" : "recvBuf", buf}}));
  HCCL_RETURN_IF_FAILED(checkRank(fn, peer, peerName, call.comm().size()));
  if (peer == static_cast<std::uint32_t>(call.comm().rank())) {
    return invalidParameter(fn, std::to_string(peer), peerName, "a rank other than this one");
  }
  HCCL_RETURN_IF_FAILED(requireDeviceReachable(fn, {{isSend ? "sendBuf" : "recvBuf", buf}}));
  if (isSend) return call.comm().send(buf, count, type, static_cast<int>(peer), call.stream);
  return call.comm().recv(buf, count, type, static_cast<int>(peer), call.stream);
}

}  // namespace

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
    // HCCL's answer to no items differs between releases (HCCL_E_PARA, later success
    // with a warning); Cohort keeps HCCL_E_PARA.
    if (itemNum == 0) return invalidParameter(fn, "0", "itemNum", "at least 1");
    std::vector<cohort::SendRecvItem> items(itemNum);
    for (std::uint32_t i = 0; i < itemNum; ++i) {
      HCCL_RETURN_IF_FAILED(sendRecvItem(fn, sendRecvInfo[i], i, call.comm(), &items[i]));
    }
    return call.comm().batchSendRecv(items, call.stream);
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
  return apiCall("HcclGroupStart", []() -> Outcome {
    COHORT_RETURN_IF_ERROR(Communicator::groupStart());
    cohort::hccl::noteGroup(+1);
    return Status::Ok();
  });
}

HcclResult HcclGroupEnd(void) {
  return apiCall("HcclGroupEnd", []() -> Outcome {
    COHORT_RETURN_IF_ERROR(Communicator::groupEnd());
    cohort::hccl::noteGroup(-1);
    return Status::Ok();
  });
}

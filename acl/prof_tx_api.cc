// msproftx marks and ranges, and iteration steps (aclprofCreateStamp ...
// aclprofRangePop, aclprofCreateStepInfo ... aclprofGetStepTimestamp): events on
// the calling thread's track (or the stream's) of the running session's timeline.
#include <fmt/ranges.h>

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "acl/entry_names.h"
#include "acl/prof_common.h"
#include "cohort/runtime.h"
#include "common/hash.h"
#include "common/trace.h"

// The opaque type of acl_prof.h: which ends of the iteration were marked.
struct aclprofStepInfo {
  uint64_t number;
  bool started = false;
  bool ended = false;
};

namespace cohort::acl::prof {
namespace {

constexpr const char* kTx = "msproftx";
constexpr std::size_t kMaxMarkBytes = 127;     // aclprofMarkEx's documented limit
constexpr std::size_t kMaxNamedIds = 1 << 16;  // aclprofStr2Id strings remembered
constexpr uint32_t kMaxTensorsShown = 64;

// A stamp: the message its marks and spans carry.
struct Stamp {
  std::string message;
};

// A span begun on this thread, ended by aclprofPop / aclprofRangePop.
struct Open {
  std::string name;
  double start;
  std::string args;
};
thread_local std::vector<Open> tPushed;    // aclprofPush
thread_local std::vector<Open> tPushedEx;  // aclprofRangePushEx

/// Live stamps, running ranges, step infos and the strings of aclprofStr2Id ids.
/// Process-wide, thread-safe (one mutex); never destroyed.
struct TxState {
  std::mutex mu;
  std::set<const Stamp*> stamps;
  std::map<uint32_t, std::string> ranges;  // id -> name
  uint32_t nextRange = 1;
  std::set<const aclprofStepInfo*> steps;
  uint64_t nextStep = 1;
  std::unordered_map<uint64_t, std::string> names;
  std::atomic<uint64_t> nextMark{1};

  static TxState& get() {
    static TxState* s = new TxState;
    return *s;
  }
};

// The message of a live stamp.
Outcome stampMessage(const char* fn, void* stamp, std::string* message) {
  if (stamp == nullptr) return invalidArgument(fn, "stamp is null");
  TxState& s = TxState::get();
  std::lock_guard<std::mutex> lock(s.mu);
  const auto* st = static_cast<const Stamp*>(stamp);
  if (s.stamps.count(st) == 0) {
    return invalidArgument(
        fn, "stamp {} is not a live stamp (made by aclprofCreateStamp, not yet destroyed)",
        fmt::ptr(stamp));
  }
  *message = st->message.empty() ? "(no message)" : st->message;
  return Status::Ok();
}

Outcome pop(const char* fn, const char* pushFn, std::vector<Open>* stack) {
  if (stack->empty()) {
    return invalidArgument(fn, "this thread has no span open (call {} first, then {})", pushFn, fn);
  }
  Open open = std::move(stack->back());
  stack->pop_back();
  trace::complete(kTx, std::move(open.name), open.start, std::move(open.args));
  return Status::Ok();
}

// The string aclprofStr2Id made `id` from, or the id in hex.
std::string nameOfId(uint64_t id) {
  TxState& s = TxState::get();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.names.find(id);
  return it != s.names.end() ? it->second : fmt::format("{:#x}", id);
}

// The args of an aclprofRangePushEx span: the operator and its tensors.
Outcome tensorArgs(const char* fn, const aclprofTensorInfo& info, std::string* args) {
  if (info.tensorNum != 0 && info.tensors == nullptr)
    return invalidArgument(fn, "tensorInfo has {} tensors but tensors is null", info.tensorNum);
  std::vector<std::string> tensors;
  for (uint32_t i = 0; i < info.tensorNum && i < kMaxTensorsShown; ++i) {
    const aclprofTensor& t = info.tensors[i];
    if (t.shapeDim > ACL_PROF_TENSOR_DATA_SHAPE_LEN) {
      return invalidArgument(fn, "tensor {} has shapeDim {} (at most {})", i, t.shapeDim,
                          ACL_PROF_TENSOR_DATA_SHAPE_LEN);
    }
    const std::vector<uint32_t> shape(t.shape, t.shape + t.shapeDim);
    tensors.push_back(
        fmt::format("{{\"kind\":\"{}\",\"format\":{},\"data_type\":{},\"shape\":[{}]}}",
                    t.type == 0   ? "input"
                    : t.type == 1 ? "output"
                                  : "other",
                    t.format, t.dataType, fmt::join(shape, ",")));
  }
  *args = fmt::format(
      "\"op_type\":\"{}\",\"kernel_type\":{},\"block_nums\":{},\"tensor_num\":{},\"tensors\":[{}]",
      trace::escape(nameOfId(info.opTypeId)), info.kernelType, info.blockNums, info.tensorNum,
      fmt::join(tensors, ","));
  return Status::Ok();
}

Outcome markStep(aclprofStepInfo* info, aclprofStepTag tag, aclrtStream stream) {
  const char* fn = "aclprofGetStepTimestamp";
  if (info == nullptr) return invalidArgument(fn, "stepInfo is null");
  if (tag != ACL_STEP_START && tag != ACL_STEP_END)
    return invalidArgument(fn, "tag {} is not an aclprofStepTag", static_cast<int>(tag));
  ACL_RETURN_IF_FAILED(needStream(fn, stream));
  TxState& s = TxState::get();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.steps.count(info) == 0) {
    return invalidArgument(
        fn,
        "stepInfo {} is not a live step info (made by aclprofCreateStepInfo, not yet destroyed)",
        fmt::ptr(info));
  }
  bool& done = tag == ACL_STEP_START ? info->started : info->ended;
  if (done) {
    return invalidArgument(fn, "step {} has its {} already (each once per step info)", info->number,
                        tag == ACL_STEP_START ? "ACL_STEP_START" : "ACL_STEP_END");
  }
  if (tag == ACL_STEP_END && !info->started)
    return invalidArgument(fn, "step {} has no ACL_STEP_START (give it first)", info->number);
  // The moment the stream reaches this point, as CANN's device-side timestamp.
  const uint64_t number = info->number;
  COHORT_RETURN_IF_ERROR(
      rt::launchKernel(toStream(stream), [number, tag](rt::Stream*) {
        if (!trace::enabled()) return Status::Ok();
        const std::string name = fmt::format("step {}", number);
        if (tag == ACL_STEP_START) {
          trace::asyncBegin("step", name, number);
        } else {
          trace::asyncEnd("step", name, number);
        }
        return Status::Ok();
      }));
  done = true;
  return Status::Ok();
}

}  // namespace
}  // namespace cohort::acl::prof

using cohort::acl::prof::messageOf;
using cohort::acl::prof::requireSession;
namespace prof = cohort::acl::prof;
namespace trace = cohort::trace;

void* aclprofCreateStamp(void) {
  prof::Stamp* stamp = nullptr;
  apiCallAnyTime("aclprofCreateStamp", [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(requireSession("aclprofCreateStamp"));
    prof::TxState& s = prof::TxState::get();
    std::lock_guard<std::mutex> lock(s.mu);
    stamp = new prof::Stamp;
    s.stamps.insert(stamp);
    return Status::Ok();
  });
  return stamp;
}

void aclprofDestroyStamp(void* stamp) {
  apiCallAnyTime("aclprofDestroyStamp", [&]() -> Outcome {
    if (stamp == nullptr) return invalidArgument("aclprofDestroyStamp", "stamp is null");
    prof::TxState& s = prof::TxState::get();
    std::lock_guard<std::mutex> lock(s.mu);
    auto* st = static_cast<prof::Stamp*>(stamp);
    if (s.stamps.erase(st) == 0) {
      return invalidArgument("aclprofDestroyStamp",
                          "stamp {} is not a live stamp (destroyed already?)", fmt::ptr(stamp));
    }
    delete st;
    return Status::Ok();
  });
}

aclError aclprofSetStampTraceMessage(void* stamp, const char* msg, uint32_t msgLen) {
  const char* fn = "aclprofSetStampTraceMessage";
  return apiCallAnyTime(fn, [&]() -> Outcome {
    std::string ignored;
    ACL_RETURN_IF_FAILED(prof::stampMessage(fn, stamp, &ignored));
    if (msg == nullptr) return invalidArgument(fn, "msg is null");
    if (msgLen == 0) return invalidArgument(fn, "msgLen is 0");
    std::string text = messageOf(msg, msgLen);
    prof::TxState& s = prof::TxState::get();
    std::lock_guard<std::mutex> lock(s.mu);
    auto* st = static_cast<prof::Stamp*>(stamp);
    if (s.stamps.count(st) == 0) return invalidArgument(fn, "stamp was destroyed meanwhile");
    st->message = std::move(text);
    return Status::Ok();
  });
}

aclError aclprofMark(void* stamp) {
  return apiCallAnyTime("aclprofMark", [&]() -> Outcome {
    std::string name;
    ACL_RETURN_IF_FAILED(prof::stampMessage("aclprofMark", stamp, &name));
    ACL_RETURN_IF_FAILED(requireSession("aclprofMark"));
    trace::instant(prof::kTx, std::move(name), "\"kind\":\"mark\"");
    return Status::Ok();
  });
}

aclError aclprofMarkEx(const char* msg, size_t msgLen, aclrtStream stream) {
  const char* fn = "aclprofMarkEx";
  return apiCallAnyTime(fn, [&]() -> Outcome {
    if (msg == nullptr) return invalidArgument(fn, "msg is null");
    if (msgLen == 0 || msgLen > prof::kMaxMarkBytes)
      return invalidArgument(fn, "msgLen {} is not in [1, {}]", msgLen, prof::kMaxMarkBytes);
    ACL_RETURN_IF_FAILED(requireSession(fn));
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    const std::string name = messageOf(msg, msgLen);
    const uint64_t id = prof::TxState::get().nextMark.fetch_add(1);
    COHORT_RETURN_IF_ERROR(cohort::runtime::launchKernel(
        toStream(stream), [name, id](rt::Stream*) {
          if (trace::enabled()) {
            trace::instant(
                prof::kTx, name,
                fmt::format("\"kind\":\"mark_ex\",\"side\":\"stream\",\"mark_id\":{}", id));
          }
          return Status::Ok();
        }));
    trace::instant(prof::kTx, name,
                   fmt::format("\"kind\":\"mark_ex\",\"side\":\"host\",\"mark_id\":{}", id));
    return Status::Ok();
  });
}

aclError aclprofPush(void* stamp) {
  return apiCallAnyTime("aclprofPush", [&]() -> Outcome {
    std::string name;
    ACL_RETURN_IF_FAILED(prof::stampMessage("aclprofPush", stamp, &name));
    ACL_RETURN_IF_FAILED(requireSession("aclprofPush"));
    prof::tPushed.push_back(prof::Open{std::move(name), trace::nowUs(), "\"kind\":\"push_pop\""});
    return Status::Ok();
  });
}

aclError aclprofPop(void) {
  return apiCallAnyTime("aclprofPop", [&]() -> Outcome {
    return prof::pop("aclprofPop", "aclprofPush", &prof::tPushed);
  });
}

aclError aclprofRangeStart(void* stamp, uint32_t* rangeId) {
  const char* fn = "aclprofRangeStart";
  return apiCallAnyTime(fn, [&]() -> Outcome {
    std::string name;
    ACL_RETURN_IF_FAILED(prof::stampMessage(fn, stamp, &name));
    if (rangeId == nullptr) return invalidArgument(fn, "rangeId is null");
    ACL_RETURN_IF_FAILED(requireSession(fn));
    prof::TxState& s = prof::TxState::get();
    uint32_t id = 0;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      do {
        id = s.nextRange++;
      } while (id == 0 || s.ranges.count(id) != 0);  // after wrapping: skip 0 and running ids
      s.ranges[id] = name;
    }
    trace::asyncBegin(prof::kTx, std::move(name), id, "\"kind\":\"range\"");
    *rangeId = id;
    return Status::Ok();
  });
}

aclError aclprofRangeStop(uint32_t rangeId) {
  const char* fn = "aclprofRangeStop";
  return apiCallAnyTime(fn, [&]() -> Outcome {
    prof::TxState& s = prof::TxState::get();
    std::string name;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      auto it = s.ranges.find(rangeId);
      if (it == s.ranges.end()) {
        return invalidArgument(
            fn,
            "range {} is not running (call aclprofRangeStart first, then aclprofRangeStop, once)",
            rangeId);
      }
      name = std::move(it->second);
      s.ranges.erase(it);
    }
    trace::asyncEnd(prof::kTx, std::move(name), rangeId);
    return Status::Ok();
  });
}

uint64_t aclprofStr2Id(const char* message) {
  if (message == nullptr) {
    apiCallAnyTime("aclprofStr2Id",
             [&]() -> Outcome { return invalidArgument("aclprofStr2Id", "message is null"); });
    return UINT64_MAX;
  }
  // FNV-1a: the same id for the same string in every process and run.
  uint64_t id = cohort::fnv1a(message);
  if (id == UINT64_MAX) --id;  // UINT64_MAX means failure
  prof::TxState& s = prof::TxState::get();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.names.size() < prof::kMaxNamedIds) s.names.emplace(id, messageOf(message, SIZE_MAX));
  return id;
}

aclError aclprofRangePushEx(aclprofEventAttributes* attr) {
  const char* fn = "aclprofRangePushEx";
  return apiCallAnyTime(fn, [&]() -> Outcome {
    if (attr == nullptr) return invalidArgument(fn, "attr is null");
    if (attr->messageType != ACL_PROF_MESSAGE_TYPE_TENSOR_INFO) {
      return invalidArgument(fn, "messageType {} is not an aclprofMessageType", attr->messageType);
    }
    const aclprofTensorInfo* info = attr->message.tensorInfo;
    if (info == nullptr) return invalidArgument(fn, "message.tensorInfo is null");
    std::string args;
    ACL_RETURN_IF_FAILED(prof::tensorArgs(fn, *info, &args));
    ACL_RETURN_IF_FAILED(requireSession(fn));
    prof::tPushedEx.push_back(
        prof::Open{prof::nameOfId(info->opNameId), trace::nowUs(), std::move(args)});
    return Status::Ok();
  });
}

aclError aclprofRangePop(void) {
  return apiCallAnyTime("aclprofRangePop", [&]() -> Outcome {
    return prof::pop("aclprofRangePop", "aclprofRangePushEx", &prof::tPushedEx);
  });
}

aclprofStepInfo* aclprofCreateStepInfo(void) {
  aclprofStepInfo* info = nullptr;
  apiCallAnyTime("aclprofCreateStepInfo", [&]() -> Outcome {
    prof::TxState& s = prof::TxState::get();
    std::lock_guard<std::mutex> lock(s.mu);
    info = new aclprofStepInfo{s.nextStep++};
    s.steps.insert(info);
    return Status::Ok();
  });
  return info;
}

void aclprofDestroyStepInfo(aclprofStepInfo* stepinfo) {
  apiCallAnyTime("aclprofDestroyStepInfo", [&]() -> Outcome {
    if (stepinfo == nullptr) return invalidArgument("aclprofDestroyStepInfo", "stepinfo is null");
    prof::TxState& s = prof::TxState::get();
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.steps.erase(stepinfo) == 0) {
      return invalidArgument("aclprofDestroyStepInfo",
                          "stepinfo {} is not a live step info (destroyed already?)",
                          fmt::ptr(stepinfo));
    }
    delete stepinfo;
    return Status::Ok();
  });
}

aclError aclprofGetStepTimestamp(aclprofStepInfo* stepInfo, aclprofStepTag tag,
                                 aclrtStream stream) {
  return apiCallAnyTime("aclprofGetStepTimestamp",
                  [&]() -> Outcome { return prof::markStep(stepInfo, tag, stream); });
}

// Values in device memory written and awaited by streams (aclrtValueWrite,
// aclrtValueWait): synchronization through memory another stream, the host or a
// process that imported the buffer writes.
#include <chrono>
#include <cstdint>
#include <thread>

#include "acl/entry_names.h"

namespace {

// The 64-bit word must be device memory (own, imported or mapped), aligned so that it
// is read and written whole.
Outcome checkWord(const char* fn, void* devAddr) {
  if (devAddr == nullptr) return nullArgument(fn, "devAddr");
  if (reinterpret_cast<std::uintptr_t>(devAddr) % sizeof(std::uint64_t) != 0) {
    return invalidArgument(fn, "devAddr {} is not 8-byte aligned", devAddr);
  }
  rt::PointerAttributes a;
  COHORT_RETURN_IF_ERROR(rt::pointerGetAttributes(devAddr, &a));
  if (!a.isDevice) return invalidArgument(fn, "devAddr {} is not device memory", devAddr);
  if (a.allocationBase == nullptr) {
    return invalidArgument(fn, "devAddr {} lies in no live allocation (freed?)", devAddr);
  }
  const auto* end = static_cast<const char*>(a.allocationBase) + a.allocationSize;
  if (static_cast<const char*>(devAddr) + sizeof(std::uint64_t) > end) {
    return invalidArgument(fn,
                           "the 8 bytes at devAddr {} overrun its allocation ({} bytes at "
                           "{})",
                           devAddr, a.allocationSize, a.allocationBase);
  }
  return Status::Ok();
}

bool holds(std::uint32_t flag, std::uint64_t current, std::uint64_t value) {
  switch (flag) {
    case ACL_STREAM_WAIT_VALUE_GEQ:
      return static_cast<std::int64_t>(current - value) >= 0;
    case ACL_STREAM_WAIT_VALUE_EQ:
      return current == value;
    case ACL_STREAM_WAIT_VALUE_AND:
      return (current & value) != 0;
    case ACL_STREAM_WAIT_VALUE_NOR:
      return ~(current | value) != 0;
  }
  return false;
}

const char* conditionName(std::uint32_t flag) {
  switch (flag) {
    case ACL_STREAM_WAIT_VALUE_GEQ:
      return ">=";
    case ACL_STREAM_WAIT_VALUE_EQ:
      return "==";
    case ACL_STREAM_WAIT_VALUE_AND:
      return "AND";
    case ACL_STREAM_WAIT_VALUE_NOR:
      return "NOR";
  }
  return "?";
}

}  // namespace

aclError aclrtValueWrite(void* devAddr, uint64_t value, uint32_t flag, aclrtStream stream) {
  const char* fn = "aclrtValueWrite";
  return apiCall(fn, [&]() -> Outcome {
    if (flag != 0) return invalidArgument(fn, "flag {} is reserved and must be 0", flag);
    ACL_RETURN_IF_FAILED(checkWord(fn, devAddr));
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    auto* word = static_cast<std::uint64_t*>(devAddr);
    return rt::launchKernel(toStream(stream), [word, value](rt::Stream*) {
      __atomic_store_n(word, value, __ATOMIC_SEQ_CST);
      return Status::Ok();
    });
  });
}

aclError aclrtValueWait(void* devAddr, uint64_t value, uint32_t flag, aclrtStream stream) {
  const char* fn = "aclrtValueWait";
  return apiCall(fn, [&]() -> Outcome {
    if (flag > ACL_STREAM_WAIT_VALUE_NOR) {
      return invalidArgument(fn, "flag {} is not an ACL_STREAM_WAIT_VALUE_* condition (0..3)",
                             flag);
    }
    ACL_RETURN_IF_FAILED(checkWord(fn, devAddr));
    ACL_RETURN_IF_FAILED(needStream(fn, stream));
    const auto* word = static_cast<const std::uint64_t*>(devAddr);
    rt::WaitTask task;
    // Any writer may change the word (a copy, a kernel, another process): it is polled,
    // sleeping the budgets the runtime passes between looks.
    task.ready = [word, value, flag](long sleepUs) {
      if (holds(flag, __atomic_load_n(word, __ATOMIC_ACQUIRE), value)) return true;
      if (sleepUs > 0) std::this_thread::sleep_for(std::chrono::microseconds(sleepUs));
      return false;
    };
    task.what = fmt::format("aclrtValueWait for *{} {} {:#x}", devAddr, conditionName(flag), value);
    return rt::launchWait(toStream(stream), std::move(task));
  });
}

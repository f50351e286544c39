#include "acl/error_state.h"

#include <atomic>
#include <deque>
#include <mutex>
#include <string>

#include "acl/error_map.h"
#include "common/error.h"
#include "common/log.h"

namespace cohort::acl {

namespace {

// A stack of messages is bounded: a program that never reads them must not grow
// without end (the documentation warns that unread messages may be lost).
constexpr std::size_t kMaxMessages = 64;

struct MessageStack {
  std::deque<std::string> newestFirst;
  void push(std::string message) {
    newestFirst.push_front(std::move(message));
    if (newestFirst.size() > kMaxMessages) newestFirst.pop_back();
  }
  std::string take() {
    std::string out;
    for (const auto& m : newestFirst) out += (out.empty() ? "" : "\n") + m;
    newestFirst.clear();
    return out;
  }
};

thread_local aclError tLastError = ACL_SUCCESS;
thread_local MessageStack tMessages;
thread_local std::string tReturned;  // what the last aclGetRecentErrMsg returned

std::atomic<bool> gProcessWide{false};
std::mutex gProcessMu;
MessageStack gProcessMessages;  // guarded by gProcessMu

}  // namespace

void noteFailure(const char* function, aclError code, const Status& status) {
  tLastError = code;
  (void)recordError(status);
  std::string line =
      fmt::format("{}: {} ({}): {}", function, code, aclErrorName(code), status.toString());
  COHORT_LOG(kInfo, "acl", "{}", line);
  if (gProcessWide.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(gProcessMu);
    gProcessMessages.push(std::move(line));
  } else {
    tMessages.push(std::move(line));
  }
}

aclError lastErrorNumber(bool reset) {
  const aclError code = tLastError;
  if (reset) tLastError = ACL_SUCCESS;
  return code;
}

const char* takeRecentMessages() {
  if (gProcessWide.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(gProcessMu);
    tReturned = gProcessMessages.take();
  } else {
    tReturned = tMessages.take();
  }
  return tReturned.empty() ? nullptr : tReturned.c_str();
}

void setProcessWideMessages(bool processWide) {
  gProcessWide.store(processWide, std::memory_order_release);
}

}  // namespace cohort::acl

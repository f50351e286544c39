#include "acl/report_hub.h"

#include <chrono>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/error.h"

namespace cohort::acl {

namespace rt = cohort::runtime;

struct ReportHub::Item {
  enum class State { kWaiting, kRun, kDropped };
  aclrtCallback fn;
  void* userData;
  bool blocking;
  rt::Stream* stream;
  std::string where;  // "stream 0x... (device 1)" for messages
  std::mutex mu;
  std::condition_variable cv;
  State state = State::kWaiting;

  void settle(State s) {
    {
      std::lock_guard<std::mutex> lock(mu);
      state = s;
    }
    cv.notify_all();
  }
};

ReportHub& ReportHub::get() {
  static ReportHub* hub = new ReportHub();  // never destroyed: stream workers may use it at exit
  return *hub;
}

Outcome ReportHub::subscribe(std::uint64_t thread, rt::Stream* stream) {
  if (stream == nullptr) {
    return Status(ErrorCode::kInvalidArgument,
                  "aclrtSubscribeReport: the stream is null; subscribe an explicit stream");
  }
  int device = -1;
  COHORT_RETURN_IF_ERROR(rt::streamGetDevice(stream, &device));
  std::lock_guard<std::mutex> lock(mu_);
  auto it = owner_.find(stream);
  if (it != owner_.end()) {
    return Outcome(ACL_ERROR_REPEAT_SUBSCRIBE,
                   makeError(ErrorCode::kInvalidUsage,
                             "aclrtSubscribeReport: stream {} is already subscribed by thread {}",
                             static_cast<void*>(stream), it->second));
  }
  owner_[stream] = thread;
  queues_[thread];  // the thread may now process reports
  return Status::Ok();
}

void ReportHub::dropLocked(rt::Stream* stream) {
  for (auto& [thread, queue] : queues_) {
    for (auto it = queue.begin(); it != queue.end();) {
      if (stream != nullptr && (*it)->stream != stream) {
        ++it;
        continue;
      }
      (*it)->settle(Item::State::kDropped);
      it = queue.erase(it);
    }
  }
}

void ReportHub::removeLocked(std::map<rt::Stream*, std::uint64_t>::iterator it) {
  rt::Stream* stream = it->first;
  const std::uint64_t thread = it->second;
  owner_.erase(it);
  dropLocked(stream);
  bool threadHasStreams = false;
  for (const auto& entry : owner_) threadHasStreams = threadHasStreams || entry.second == thread;
  if (!threadHasStreams) queues_.erase(thread);  // a waiting aclrtProcessReport returns
  ready_.notify_all();
}

Outcome ReportHub::unsubscribe(std::uint64_t thread, rt::Stream* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = owner_.find(stream);
  if (it == owner_.end()) {
    return Outcome(
        ACL_ERROR_STREAM_NOT_SUBSCRIBE,
        makeError(ErrorCode::kInvalidUsage, "aclrtUnSubscribeReport: stream {} is not subscribed",
                  static_cast<void*>(stream)));
  }
  if (it->second != thread) {
    return Outcome(ACL_ERROR_THREAD_NOT_SUBSCRIBE,
                   makeError(ErrorCode::kInvalidUsage,
                             "aclrtUnSubscribeReport: stream {} is subscribed by thread {}, "
                             "not by thread {}",
                             static_cast<void*>(stream), it->second, thread));
  }
  removeLocked(it);
  return Status::Ok();
}

Outcome ReportHub::launch(aclrtCallback fn, void* userData, bool blocking, rt::Stream* stream) {
  auto item = std::make_shared<Item>();
  item->fn = fn;
  item->userData = userData;
  item->blocking = blocking;
  item->stream = stream;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (owner_.count(stream) == 0) {
      return Outcome(ACL_ERROR_STREAM_NOT_SUBSCRIBE,
                     makeError(ErrorCode::kInvalidUsage,
                               "aclrtLaunchCallback: stream {} is not subscribed (call "
                               "aclrtSubscribeReport for it first)",
                               static_cast<void*>(stream)));
    }
  }
  int device = -1;
  COHORT_RETURN_IF_ERROR(rt::streamGetDevice(stream, &device));
  item->where = fmt::format("stream {} (device {})", static_cast<void*>(stream), device);
  return rt::launchKernel(stream,
                          [this, item](rt::Stream*) { return deliver(item->stream, item); });
}

Status ReportHub::deliver(rt::Stream* stream, const std::shared_ptr<Item>& item) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = owner_.find(stream);
    if (it == owner_.end()) {
      return makeError(ErrorCode::kTaskFailed,
                       "a host callback on {} was dropped: the stream was "
                       "unsubscribed before the callback was reached",
                       item->where);
    }
    queues_[it->second].push_back(item);
  }
  ready_.notify_all();
  return item->blocking ? awaitProcessed(item) : Status::Ok();
}

Status ReportHub::awaitProcessed(const std::shared_ptr<Item>& item) {
  const int seconds = Config::global().execTimeoutS;
  std::unique_lock<std::mutex> lock(item->mu);
  auto settled = [&] { return item->state != Item::State::kWaiting; };
  if (seconds == 0) {
    item->cv.wait(lock, settled);
  } else if (!item->cv.wait_for(lock, std::chrono::seconds(seconds), settled)) {
    lock.unlock();
    std::lock_guard<std::mutex> hubLock(mu_);
    for (auto& [thread, queue] : queues_) {
      for (auto it = queue.begin(); it != queue.end(); ++it) {
        if (*it == item) {
          queue.erase(it);
          break;
        }
      }
    }
    return makeError(ErrorCode::kTimeout,
                     "a blocking host callback on {} was not processed "
                     "within COHORT_EXEC_TIMEOUT ({} s): is a thread calling aclrtProcessReport?",
                     item->where, seconds);
  }
  if (item->state == Item::State::kDropped) {
    return makeError(ErrorCode::kTaskFailed,
                     "a blocking host callback on {} was dropped before "
                     "it ran (aclrtUnSubscribeReport or aclFinalize)",
                     item->where);
  }
  return Status::Ok();
}

Outcome ReportHub::process(std::uint64_t thread, long timeoutMs) {
  std::vector<std::shared_ptr<Item>> batch;
  {
    std::unique_lock<std::mutex> lock(mu_);
    auto ready = [&] {
      auto it = queues_.find(thread);
      return it == queues_.end() || !it->second.empty();
    };
    bool woke = true;
    if (timeoutMs < 0) {
      ready_.wait(lock, ready);
    } else {
      woke = ready_.wait_for(lock, std::chrono::milliseconds(timeoutMs), ready);
    }
    auto it = queues_.find(thread);
    if (it == queues_.end()) {
      return Outcome(ACL_ERROR_THREAD_NOT_SUBSCRIBE,
                     makeError(ErrorCode::kInvalidUsage,
                               "aclrtProcessReport: thread {} is not "
                               "subscribed to any stream (aclrtSubscribeReport)",
                               thread));
    }
    if (!woke) {
      return Outcome(ACL_ERROR_WAIT_CALLBACK_TIMEOUT,
                     makeError(ErrorCode::kTimeout,
                               "aclrtProcessReport: no callback arrived "
                               "within {} ms",
                               timeoutMs));
    }
    batch.assign(it->second.begin(), it->second.end());
    it->second.clear();
  }
  for (const auto& item : batch) {
    item->fn(item->userData);
    item->settle(Item::State::kRun);
  }
  return Status::Ok();
}

void ReportHub::forgetStream(rt::Stream* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = owner_.find(stream);
  if (it == owner_.end()) return;
  removeLocked(it);
}

void ReportHub::forgetDeadStreams() {
  std::vector<rt::Stream*> dead;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& entry : owner_) {
      int device = -1;
      if (!rt::streamGetDevice(entry.first, &device).ok()) dead.push_back(entry.first);
    }
  }
  for (rt::Stream* stream : dead) forgetStream(stream);
}

void ReportHub::reset() {
  std::lock_guard<std::mutex> lock(mu_);
  dropLocked(nullptr);
  owner_.clear();
  queues_.clear();
  ready_.notify_all();
}

bool ReportHub::holds(std::uint64_t thread) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = queues_.find(thread);
  return it != queues_.end() && !it->second.empty();
}

}  // namespace cohort::acl

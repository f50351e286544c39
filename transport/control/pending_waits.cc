#include "transport/control/pending_waits.h"

#include <chrono>

#include "common/error.h"

namespace cohort::transport::control {

bool PendingWaits::exists(const std::string& key) {
  bool present = false;
  return store_.check(key, &present).ok() && present;
}

bool PendingWaits::advance(Entry& e) {
  while (e.next < e.keys.size() && exists(e.keys[e.next])) ++e.next;
  return e.next == e.keys.size();
}

void PendingWaits::add(std::uint64_t owner, std::vector<std::string> keys, std::int64_t timeoutMs,
                       Reply reply) {
  Entry e;
  e.owner = owner;
  e.keys = std::move(keys);
  if (advance(e)) {
    reply(Status::Ok());
    return;
  }
  if (timeoutMs == 0) {
    reply(makeError(ErrorCode::kTimeout, "timed out waiting for key(s) {}", e.keys[e.next]));
    return;
  }
  const std::uint64_t id = nextId_++;
  e.reply = std::move(reply);
  e.indexed = byKey_.emplace(e.keys[e.next], id);
  if (timeoutMs > 0) {
    e.timer =
        std::make_unique<boost::asio::steady_timer>(io_, std::chrono::milliseconds(timeoutMs));
    e.timer->async_wait([this, id](const boost::system::error_code& ec) {
      if (!ec) expire(id);
    });
  }
  entries_.emplace(id, std::move(e));
}

void PendingWaits::keySet(const std::string& key) {
  auto range = byKey_.equal_range(key);
  std::vector<std::uint64_t> ids;
  for (auto it = range.first; it != range.second; ++it) {
    ids.push_back(it->second);
    entries_.at(it->second).indexed = byKey_.end();
  }
  byKey_.erase(range.first, range.second);
  for (std::uint64_t id : ids) {
    auto it = entries_.find(id);
    if (it == entries_.end()) continue;
    Entry& e = it->second;
    if (!advance(e)) {
      e.indexed = byKey_.emplace(e.keys[e.next], id);
      continue;
    }
    Reply reply = std::move(e.reply);
    erase(it);
    reply(Status::Ok());
  }
}

void PendingWaits::expire(std::uint64_t id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  advance(e);
  std::string missing;
  for (std::size_t i = e.next; i < e.keys.size(); ++i) {
    if (!exists(e.keys[i])) missing += (missing.empty() ? "" : ", ") + e.keys[i];
  }
  Reply reply = std::move(e.reply);
  erase(it);
  // Answered with kTimeout even if the keys just arrived: the deadline has passed.
  reply(makeError(ErrorCode::kTimeout, "timed out waiting for key(s) {}",
                  missing.empty() ? "(arrived at the deadline)" : missing));
}

void PendingWaits::erase(std::map<std::uint64_t, Entry>::iterator it) {
  if (it->second.indexed != byKey_.end()) byKey_.erase(it->second.indexed);
  if (it->second.timer) it->second.timer->cancel();
  entries_.erase(it);
}

void PendingWaits::dropOwner(std::uint64_t owner) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    auto next = std::next(it);
    if (it->second.owner == owner) erase(it);
    it = next;
  }
}

void PendingWaits::clear() {
  while (!entries_.empty()) erase(entries_.begin());
}

}  // namespace cohort::transport::control

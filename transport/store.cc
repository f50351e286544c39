#include "transport/store.h"

#include "common/error.h"
#include "transport/little_endian.h"

namespace cohort::transport {

namespace {
std::string missingKeys(const std::map<std::string, Bytes>& values,
                        const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& k : keys) {
    if (values.count(k) == 0) out += (out.empty() ? "" : ", ") + k;
  }
  return out;
}
}  // namespace

Status MemoryStore::set(const std::string& key, const Bytes& value) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    values_[key] = value;
  }
  changed_.notifyAll();
  return Status::Ok();
}

Status MemoryStore::get(const std::string& key, Bytes* value, Deadline deadline) {
  COHORT_RETURN_IF_ERROR(wait({key}, deadline));
  std::lock_guard<std::mutex> lock(mu_);
  *value = values_.at(key);
  return Status::Ok();
}

Status MemoryStore::wait(const std::vector<std::string>& keys, Deadline deadline) {
  auto present = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& k : keys) {
      if (values_.count(k) == 0) return false;
    }
    return true;
  };
  if (changed_.waitUntil(present, deadline)) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  return makeError(ErrorCode::kTimeout, "store: timed out waiting for key(s) {}",
                   missingKeys(values_, keys));
}

Status MemoryStore::add(const std::string& key, std::int64_t delta, std::int64_t* result) {
  std::int64_t v = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = values_.find(key);
    if (it != values_.end()) v = decodeInt(it->second);
    v += delta;
    values_[key] = encodeInt(v);
  }
  changed_.notifyAll();
  if (result != nullptr) *result = v;
  return Status::Ok();
}

Status MemoryStore::check(const std::string& key, bool* exists) {
  std::lock_guard<std::mutex> lock(mu_);
  *exists = values_.count(key) != 0;
  return Status::Ok();
}

Status PrefixStore::set(const std::string& key, const Bytes& value) {
  return inner_->set(prefix_ + key, value);
}
Status PrefixStore::setBefore(const std::string& key, const Bytes& value, Deadline deadline) {
  return inner_->setBefore(prefix_ + key, value, deadline);
}
Status PrefixStore::peek(const std::string& key, Bytes* value, Deadline replyBy) {
  return inner_->peek(prefix_ + key, value, replyBy);
}
Status PrefixStore::get(const std::string& key, Bytes* value, Deadline deadline) {
  return inner_->get(prefix_ + key, value, deadline);
}
Status PrefixStore::wait(const std::vector<std::string>& keys, Deadline deadline) {
  std::vector<std::string> full;
  full.reserve(keys.size());
  for (const auto& k : keys) full.push_back(prefix_ + k);
  return inner_->wait(full, deadline);
}
Status PrefixStore::add(const std::string& key, std::int64_t delta, std::int64_t* result) {
  return inner_->add(prefix_ + key, delta, result);
}
Status PrefixStore::check(const std::string& key, bool* exists) {
  return inner_->check(prefix_ + key, exists);
}

Bytes encodeInt(std::int64_t v) {
  Bytes b(8);
  storeLe(b.data(), static_cast<std::uint64_t>(v), 8);
  return b;
}

std::int64_t decodeInt(const Bytes& b) {
  const int bytes = static_cast<int>(std::min<std::size_t>(8, b.size()));
  return static_cast<std::int64_t>(loadLe(b.data(), bytes));
}

}  // namespace cohort::transport

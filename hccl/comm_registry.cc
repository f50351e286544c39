#include "hccl/comm_registry.h"

namespace cohort::hccl {

namespace {
// Handles look like aligned addresses in a range no allocator hands out.
constexpr std::uintptr_t kHandleBase = 0x4843434c00000000ull;  // "HCCL"
constexpr std::uintptr_t kHandleStep = 0x10;
}  // namespace

CommRegistry& CommRegistry::get() {
  static CommRegistry* registry = new CommRegistry();  // never destroyed: used at exit
  return *registry;
}

HcclComm CommRegistry::add(std::unique_ptr<Communicator> comm, std::string name) {
  auto entry = std::make_shared<CommEntry>();
  entry->comm = std::move(comm);
  entry->name = std::move(name);
  std::lock_guard<std::mutex> lock(mu_);
  const std::uintptr_t handle = kHandleBase + kHandleStep * next_++;
  live_.emplace(handle, std::move(entry));
  return reinterpret_cast<HcclComm>(handle);
}

std::shared_ptr<CommEntry> CommRegistry::find(HcclComm handle) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(reinterpret_cast<std::uintptr_t>(handle));
  return it == live_.end() ? nullptr : it->second;
}

HcclComm CommRegistry::findByName(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [handle, entry] : live_) {
    if (entry->name == name) return reinterpret_cast<HcclComm>(handle);
  }
  return nullptr;
}

CommRegistry::Removal CommRegistry::remove(HcclComm handle, std::shared_ptr<CommEntry>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(reinterpret_cast<std::uintptr_t>(handle));
  if (it == live_.end()) return Removal::kUnknown;
  // Copies are only made under mu_ (find), so a count of 1 means no call holds it.
  if (it->second.use_count() > 1) return Removal::kBusy;
  *out = std::move(it->second);
  live_.erase(it);
  return Removal::kRemoved;
}

}  // namespace cohort::hccl

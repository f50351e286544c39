#include "runtime/memory_pool.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/error.h"
#include "runtime/device.h"
#include "runtime/memory_generation.h"

namespace cohort::runtime {

namespace {
constexpr std::size_t kSmallAlign = 64;
constexpr std::size_t kPageAlign = 4096;
constexpr std::size_t kPageAlignFrom = 64 << 10;

std::size_t alignUp(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }
}  // namespace

std::size_t roundAllocation(std::size_t size, std::size_t* alignment) {
  *alignment = size >= kPageAlignFrom ? kPageAlign : kSmallAlign;
  return alignUp(size, *alignment);
}

Status MemoryPool::create(std::string label, std::size_t capacity,
                          std::unique_ptr<MemoryPool>* out) {
  capacity = alignUp(capacity, kPageAlign);
  int fd = memfd_create(("cohort-" + label).c_str(), MFD_CLOEXEC);
  if (fd < 0) return systemError(errno, "memfd_create for " + label);
  if (ftruncate(fd, static_cast<off_t>(capacity)) != 0) {
    int err = errno;
    close(fd);
    return systemError(err, "ftruncate of " + label + "'s memory");
  }
  void* base = mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (base == MAP_FAILED) {
    int err = errno;
    close(fd);
    return systemError(err, "mmap of " + label + "'s memory");
  }
  out->reset(new MemoryPool(std::move(label), fd, static_cast<char*>(base), capacity));
  noteMemoryChange();
  return Status::Ok();
}

MemoryPool::MemoryPool(std::string label, int fd, char* base, std::size_t capacity)
    : label_(std::move(label)), fd_(fd), base_(base), capacity_(capacity) {
  insertFreeLocked(0, capacity_);
}

void MemoryPool::detachInChild(int parentPid) {
  // Nothing allocated: a file of the child's own at the same address and under the
  // same descriptor number, shareable like any pool (ranks forked by a parent that
  // set up the runtime but holds no memory). Otherwise the same file, private: the
  // child's data keeps its contents and its writes stop reaching the parent. If
  // the kernel refuses, the child keeps the shared mapping, and checkShareable
  // says so: nothing here may log (a parent thread may have held the log's lock).
  if (live_.empty()) {
    const int fresh = memfd_create(("cohort-" + label_).c_str(), MFD_CLOEXEC);
    if (fresh >= 0 && ftruncate(fresh, static_cast<off_t>(capacity_)) == 0 &&
        mmap(base_, capacity_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_NORESERVE,
             fresh, 0) != MAP_FAILED &&
        dup3(fresh, fd_, O_CLOEXEC) == fd_) {
      close(fresh);
      return;
    }
    if (fresh >= 0) close(fresh);
  }
  if (mmap(base_, capacity_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_NORESERVE, fd_,
           0) == MAP_FAILED) {
    detachErrno_ = errno;
  }
  inheritedFrom_ = parentPid;
}

Status MemoryPool::checkShareable(const char* what) const {
  if (inheritedFrom_ == 0) return Status::Ok();
  return makeError(ErrorCode::kNotSupported,
                   "{}: {}'s memory came into process {} through fork() from process {} and is "
                   "{}, so peers cannot map it; start each rank in a fresh process (exec, or "
                   "torch.multiprocessing's spawn)",
                   what, label_, static_cast<int>(getpid()), inheritedFrom_,
                   detachErrno_ == 0 ? std::string("private to it now")
                                     : fmt::format("still shared with it (making it private "
                                                   "failed: {})",
                                                   std::strerror(detachErrno_)));
}

MemoryPool::~MemoryPool() {
  munmap(base_, capacity_);
  close(fd_);
  noteMemoryChange();
}

void MemoryPool::insertFreeLocked(std::size_t offset, std::size_t size) {
  free_[offset] = size;
  bySize_.insert({size, offset});
}

void MemoryPool::eraseFreeLocked(std::map<std::size_t, std::size_t>::iterator it) {
  bySize_.erase({it->second, it->first});
  free_.erase(it);
}

Status MemoryPool::allocate(std::size_t size, void** ptr) {
  std::size_t alignment = 0;
  const std::size_t rounded = roundAllocation(size, &alignment);
  std::lock_guard<std::mutex> lock(mu_);
  // Best fit: the smallest free block that holds the request after alignment.
  // Blocks are searched from the smallest size that could fit.
  for (auto it = bySize_.lower_bound({rounded, 0}); it != bySize_.end(); ++it) {
    const std::size_t blockOffset = it->second;
    const std::size_t blockSize = it->first;
    const std::size_t start = alignUp(blockOffset, alignment);
    if (start + rounded > blockOffset + blockSize) continue;
    eraseFreeLocked(free_.find(blockOffset));
    if (start > blockOffset) insertFreeLocked(blockOffset, start - blockOffset);
    const std::size_t end = start + rounded;
    if (end < blockOffset + blockSize) insertFreeLocked(end, blockOffset + blockSize - end);
    live_[start] = Block{rounded, size};
    used_ += rounded;
    peak_ = std::max(peak_, used_);
    freedStarts_.erase(freedStarts_.lower_bound(start), freedStarts_.lower_bound(end));
    *ptr = base_ + start;
    noteMemoryChange();
    return Status::Ok();
  }
  const std::size_t largest = bySize_.empty() ? 0 : bySize_.rbegin()->first;
  return makeError(ErrorCode::kOutOfMemory,
                   "{}: cannot allocate {} bytes: {} of {} bytes free, largest free block {} "
                   "bytes (COHORT_DEVICE_MEMORY sets the capacity)",
                   label_, size, capacity_ - used_, capacity_, largest);
}

Status MemoryPool::free(void* ptr) {
  if (!contains(ptr)) {
    return makeError(ErrorCode::kInvalidPointer, "{}: {} is not in this memory", label_, ptr);
  }
  const std::size_t offset = static_cast<std::size_t>(static_cast<char*>(ptr) - base_);
  std::lock_guard<std::mutex> lock(mu_);
  auto live = live_.find(offset);
  if (live == live_.end()) {
    if (freedStarts_.count(offset) != 0) {
      return makeError(ErrorCode::kDoubleFree, "{}: {} was already freed", label_, ptr);
    }
    return makeError(ErrorCode::kInvalidPointer,
                     "{}: {} is not the start of a live allocation", label_, ptr);
  }
  std::size_t start = offset;
  std::size_t size = live->second.rounded;
  used_ -= size;
  live_.erase(live);
  freedStarts_.insert(offset);
  // Coalesce with the free neighbours.
  auto next = free_.lower_bound(start);
  if (next != free_.end() && next->first == start + size) {
    size += next->second;
    eraseFreeLocked(next);
  }
  auto prev = free_.lower_bound(start);
  if (prev != free_.begin()) {
    --prev;
    if (prev->first + prev->second == start) {
      start = prev->first;
      size += prev->second;
      eraseFreeLocked(prev);
    }
  }
  insertFreeLocked(start, size);
  noteMemoryChange();
  return Status::Ok();
}

void MemoryPool::reset() {
  std::lock_guard<std::mutex> lock(mu_);
  live_.clear();
  free_.clear();
  bySize_.clear();
  freedStarts_.clear();
  used_ = 0;
  peak_ = 0;
  insertFreeLocked(0, capacity_);
  noteMemoryChange();
}

bool MemoryPool::findAllocation(const void* p, char** base, std::size_t* size) const {
  if (!contains(p)) return false;
  const std::size_t offset = static_cast<std::size_t>(static_cast<const char*>(p) - base_);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.upper_bound(offset);
  if (it == live_.begin()) return false;
  --it;
  if (offset >= it->first + it->second.requested) return false;
  *base = base_ + it->first;
  *size = it->second.requested;
  return true;
}

std::size_t MemoryPool::used() const {
  std::lock_guard<std::mutex> lock(mu_);
  return used_;
}

std::size_t MemoryPool::peak() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_;
}

}  // namespace cohort::runtime

// A device's memory: one shareable segment (memfd, MAP_SHARED, reserved up front
// to the device's capacity) carved by a best-fit allocator. Freed blocks go back
// to the pool, never to the kernel, so a loop that allocates and frees the same
// sizes touches only pages it has already faulted in; among equal fits the lowest
// address wins, which keeps reuse on warm pages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "cohort/status.h"

namespace cohort::runtime {

/// Thread-safe. Owns its mapping and file descriptor for its whole lifetime. Across
/// fork() (runtime/fork_handlers.cc) the child never writes into the parent's
/// memory: an empty pool becomes a fresh one of the child's, one holding
/// allocations a copy-on-write view of the parent's.
class MemoryPool {
 public:
  /// Creates a pool of `capacity` bytes (virtual until touched). `label` names it
  /// in errors ("device 3").
  static Status create(std::string label, std::size_t capacity,
                       std::unique_ptr<MemoryPool>* out);
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  /// kOutOfMemory when no free block fits (the message gives requested, free and
  /// the largest free block).
  Status allocate(std::size_t size, void** ptr);
  /// kDoubleFree for a block already freed, kInvalidPointer for anything that is
  /// not the start of a live allocation.
  Status free(void* ptr);
  /// Frees every allocation.
  void reset();

  /// True when p lies inside the mapping (live or not).
  bool contains(const void* p) const {
    auto a = reinterpret_cast<std::uintptr_t>(p);
    auto b = reinterpret_cast<std::uintptr_t>(base_);
    return a >= b && a < b + capacity_;
  }
  /// The live allocation containing p, if any (size = the requested size).
  bool findAllocation(const void* p, char** base, std::size_t* size) const;

  std::size_t capacity() const { return capacity_; }
  std::size_t used() const;
  /// The most bytes in use at once since the pool was created or last reset.
  std::size_t peak() const;
  int fd() const { return fd_; }
  /// kNotSupported naming the parent when this process is a fork()ed child that
  /// inherited the pool with allocations in it: peers would map the file, which no
  /// longer holds this process's writes. `what` names the caller in the message.
  Status checkShareable(const char* what) const;

  /// fork() support, for runtime/fork_handlers.cc only: the parent holds the lock
  /// across fork(), so the child's copy of the free lists is whole. In the child,
  /// detachInChild gives an empty pool a fresh file (same address and descriptor),
  /// and maps one with allocations copy-on-write (MAP_PRIVATE of the same file),
  /// marking it inherited from `parentPid`: pages the child has not written still
  /// show the file, so the child may see the parent's later writes to them.
  void lockForFork() { mu_.lock(); }
  void unlockAfterFork() { mu_.unlock(); }
  void detachInChild(int parentPid);
  char* base() const { return base_; }
  const std::string& label() const { return label_; }

 private:
  MemoryPool(std::string label, int fd, char* base, std::size_t capacity);
  void insertFreeLocked(std::size_t offset, std::size_t size);
  void eraseFreeLocked(std::map<std::size_t, std::size_t>::iterator it);

  const std::string label_;
  const int fd_;
  char* const base_;
  const std::size_t capacity_;

  mutable std::mutex mu_;
  struct Block {
    std::size_t rounded;    // what the pool reserved
    std::size_t requested;  // what the caller asked for: the bound checked on copies
  };
  std::map<std::size_t, Block> live_;                  // offset -> block
  std::map<std::size_t, std::size_t> free_;            // offset -> size, coalesced
  std::set<std::pair<std::size_t, std::size_t>> bySize_;  // (size, offset) of free_
  std::set<std::size_t> freedStarts_;                  // starts of freed blocks
  std::size_t used_ = 0;
  std::size_t peak_ = 0;
  int inheritedFrom_ = 0;  // the parent's pid in a fork()ed child, else 0
  int detachErrno_ = 0;    // why detachInChild could not make the pages private
};

/// Rounds an allocation request: 64-byte granules, 4 KiB from 64 KiB up.
std::size_t roundAllocation(std::size_t size, std::size_t* alignment);

}  // namespace cohort::runtime

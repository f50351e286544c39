// The state of the stream-ordered memory pools (acl_rt_memory_soma.h): blocks of
// device memory, the pools that hold them, and the registry of both. The entry
// points are in mempool_api.cc; creation, attributes, trimming and the release of
// idle memory in mem_pool_registry.cc.
//
// A pool's memory is blocks of ordinary device memory (runtime::deviceMalloc, 2 MiB
// multiples), so it works with every copy and collective. aclrtMemPoolMallocAsync
// takes a block at once on the calling thread: the work queued after it on the
// stream finds it there. aclrtMemPoolFreeAsync records an event on the stream at
// the free point; the block is idle once the event has completed, which the pool
// notices on its next call, or sooner through a stream task queued right after the
// event (skipped on a failed stream; the event still completes). The release
// threshold applies when frees complete; aclrtMemPoolTrimTo releases on demand.
// A device reset takes the device's memory, pools' blocks included: each pool
// compares the device's runtime::deviceResetCount and forgets its blocks when it
// changed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include "acl/acl.h"
#include "acl/acl_rt_memory_soma.h"
#include "acl/api_call.h"
#include "acl/entry_helpers.h"
#include "cohort/runtime.h"
#include "common/error.h"

namespace cohort::acl::mempool {

inline constexpr std::size_t kBlockBytes = std::size_t{2} << 20;

enum class BlockState {
  kBusy,        // handed out by aclrtMemPoolMallocAsync
  kFreeQueued,  // given back by aclrtMemPoolFreeAsync; its stream has not run the free yet
  kIdle,        // the free has run: reusable by any stream, releasable to the device
};

struct Block {
  std::size_t size = 0;
  BlockState state = BlockState::kBusy;
  runtime::Stream* freeStream = nullptr;  // kFreeQueued: the stream the free was queued on
  runtime::Event* freed = nullptr;  // kFreeQueued: recorded at the free (null while recording)
  std::uint64_t ticket = 0;         // new at every free, so late steps can tell
};

// One pool. Guarded by PoolRegistry's mutex; shared with the stream tasks of its frees.
struct Pool {
  int device = -1;
  std::uint64_t resets = 0;  // the device's deviceResetCount its blocks belong to
  std::size_t maxSize = 0;
  std::uint32_t followEventDependencies = 0;
  std::uint32_t allowOpportunistic = 0;
  std::uint32_t allowInternalDependencies = 0;
  std::uint64_t releaseThreshold = 0;
  std::uint64_t reserved = 0;  // bytes of every block
  std::uint64_t used = 0;      // bytes of busy and free-queued blocks
  std::uint64_t reservedHigh = 0;
  std::uint64_t usedHigh = 0;
  bool destroyed = false;
  std::map<void*, Block> blocks;
};

inline Outcome rtInvalid(Status status) {
  return Outcome(ACL_ERROR_RT_PARAM_INVALID, std::move(status));
}

// Every pool, by handle; destroyed pools that still hold blocks; the pool of every
// block. Process-wide and thread-safe; never destroyed (stream tasks may run at
// exit). mu_ is never held while calling anything that takes a device's lock:
// stream tasks take mu_ while a device reset holds its device's lock and drains
// the streams.
class PoolRegistry {
 public:
  static PoolRegistry& get();

  Outcome create(const aclrtMemPoolProps& props, aclrtMemPool* out);
  Outcome destroy(aclrtMemPool handle);
  Outcome setAttribute(aclrtMemPool handle, aclrtMemPoolAttr attr, const void* value);
  Outcome getAttribute(aclrtMemPool handle, aclrtMemPoolAttr attr, void* value);
  Outcome allocate(void** ptr, std::size_t size, aclrtMemPool handle, runtime::Stream* stream);
  // Phase one of a free: the block is marked queued (nothing else may free it) and
  // its ticket returned; false when ptr is no block of a pool.
  bool beginFree(const char* fn, void* ptr, runtime::Stream* stream, std::shared_ptr<Pool>* owner,
                 std::uint64_t* ticket, Outcome* outcome);
  // Phase two: the event recorded at the free point (or null when recording it
  // failed: the block is handed back to the program).
  void finishFree(const std::shared_ptr<Pool>& pool, void* ptr, std::uint64_t ticket,
                  runtime::Event* freed);
  Outcome trim(aclrtMemPool handle, std::size_t keep);
  // The stream task after a free: notices the frees that have run.
  void poll(const std::shared_ptr<Pool>& pool);

 private:
  using BlockIt = std::map<void*, Block>::iterator;

  PoolRegistry() = default;
  static std::size_t roundUp(std::size_t bytes);
  static bool isFlag(aclrtMemPoolAttr attr);
  static Status badAttribute(const char* fn, aclrtMemPoolAttr attr);
  static void noteHighs(Pool& pool);
  Outcome findLocked(const char* fn, aclrtMemPool handle, std::shared_ptr<Pool>* out);
  // Takes the smallest block of at least `wanted` bytes the stream may have into *ptr.
  bool reuseLocked(Pool& pool, std::size_t wanted, runtime::Stream* stream, void** ptr);
  // Forgets the blocks of a device reset, notices completed frees, applies the
  // release threshold to what they made idle (everything idle for a destroyed pool).
  void refreshLocked(Pool& pool);
  std::vector<BlockIt> idleLargestFirst(Pool& pool);
  // Releases idle blocks, largest first, while more than `keepIdle` bytes are idle,
  // until `atLeast` bytes went.
  void releaseIdleLocked(Pool& pool, std::uint64_t keepIdle, std::uint64_t atLeast);
  void releaseLocked(Pool& pool, BlockIt it);
  void sweepZombiesLocked();

  std::mutex mu_;
  std::map<const Pool*, std::shared_ptr<Pool>> live_;
  std::set<std::shared_ptr<Pool>> zombies_;  // destroyed, still holding blocks in use
  std::unordered_map<const void*, std::shared_ptr<Pool>> owners_;  // block -> its pool
  std::uint64_t nextTicket_ = 0;
};

}  // namespace cohort::acl::mempool

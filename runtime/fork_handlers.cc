// What fork() does to device memory. Pools are MAP_SHARED segments, so a plain
// fork() would leave parent and child writing the same pages and handing out the
// same free blocks: a forked worker (a DataLoader's, say) that wrote a tensor
// would write the parent's. The handlers keep every pool's lock across fork(), and
// in the child detach each pool (MemoryPool::detachInChild): an empty one gets a
// fresh file, so ranks forked from a parent that holds no memory work as usual;
// one with allocations is remapped copy-on-write at the same address, so the child
// keeps its contents and its writes stay its own. Peers cannot map those private
// pages, so such a pool refuses to be shared (MemoryPool::checkShareable).
#include <pthread.h>
#include <unistd.h>

#include <vector>

#include "runtime/core_pool.h"
#include "runtime/device.h"
#include "runtime/task_reports.h"

namespace cohort::runtime {

namespace {

// The pools locked by the prepare handler, which fork's other handlers unlock.
// Written and read only by the thread calling fork() (fork() itself serializes).
std::vector<MemoryPool*> gForkLocked;
int gForkParent = 0;

void prepareFork() {
  gForkLocked = DeviceManager::get().pools();
  gForkParent = static_cast<int>(getpid());
  for (MemoryPool* p : gForkLocked) p->lockForFork();
}

void releaseFork(bool child) {
  if (child) {
    forgetThreadId();
    forgetCorePoolsInChild();
    // Every pool the child has, also one created after prepareFork read the list.
    for (MemoryPool* p : DeviceManager::get().pools()) p->detachInChild(gForkParent);
  }
  for (auto it = gForkLocked.rbegin(); it != gForkLocked.rend(); ++it) (*it)->unlockAfterFork();
  gForkLocked.clear();
}

}  // namespace

// Called once, by the DeviceManager singleton's constructor.
void registerForkHandlers() {
  pthread_atfork(prepareFork, [] { releaseFork(false); }, [] { releaseFork(true); });
}

}  // namespace cohort::runtime

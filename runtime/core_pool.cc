#include "runtime/core_pool.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>
#include <utility>

#include "common/config.h"
#include "common/error.h"
#include "common/wait.h"

namespace cohort::runtime {

// One launch. The launching thread and every helper that joined take blocks from
// `next` until none is left or one failed; the launcher then waits for the helpers
// that joined (`joined`) to leave (`left`), so `block` outlives every call of it.
struct CorePool::Job {
  const BlockFunction* block = nullptr;
  const std::string* name = nullptr;
  std::uint32_t blocks = 0;
  std::uint32_t seats = 0;  // helpers that may still join
  std::atomic<std::uint32_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::condition_variable cv;
  std::uint32_t joined = 0;
  std::uint32_t left = 0;
  Status firstError;
};

CorePool::CorePool(int threads) : size_(threads) {}

void CorePool::startThreads() {
  // The first kernel of more than one block starts them: a one-block kernel (the
  // common scalar kind) starts at once, without creating threads first.
  std::lock_guard<std::mutex> lock(mu_);
  if (started_) return;
  started_ = true;
  for (int i = 0; i < size_; ++i) std::thread([this] { serve(); }).detach();
}

namespace {

// The pools by device. Never destroyed: helper threads may still sleep in a pool at
// exit. A forked child gets a new registry (forgetCorePoolsInChild): the parent's
// threads are not in it, and a lock one of them held is held forever.
struct PoolRegistry {
  std::mutex mu;
  std::map<int, CorePool*> pools;
};
std::atomic<PoolRegistry*> gPools{new PoolRegistry()};

}  // namespace

void forgetCorePoolsInChild() { gPools.store(new PoolRegistry(), std::memory_order_release); }

CorePool& CorePool::of(int device) {
  PoolRegistry& r = *gPools.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> lock(r.mu);
  CorePool*& pool = r.pools[device];
  if (pool == nullptr) {
    int threads = Config::global().aicoreThreads;
    if (threads == 0) threads = static_cast<int>(std::max(processors(), 1L));
    // The launching thread is one core; the pool adds the others.
    pool = new CorePool(std::max(threads - 1, 0));
  }
  return *pool;
}

void CorePool::work(Job& job) {
  for (;;) {
    if (job.failed.load(std::memory_order_relaxed)) return;
    const std::uint32_t i = job.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= job.blocks) return;
    Status status;
    try {
      status = runBlockCatchingFaults(*job.block, i, job.blocks, *job.name);
    } catch (const std::exception& e) {
      status = makeError(ErrorCode::kKernelFault, "block {} threw: {}", i, e.what());
    }
    if (!status.ok()) {
      std::lock_guard<std::mutex> lock(job.mu);
      if (!job.failed.exchange(true)) job.firstError = std::move(status);
      return;
    }
  }
}

void CorePool::serve() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return !offers_.empty(); });
      job = offers_.front();
      {
        std::lock_guard<std::mutex> jl(job->mu);
        ++job->joined;
        if (--job->seats == 0) offers_.pop_front();
      }
    }
    work(*job);
    std::lock_guard<std::mutex> jl(job->mu);
    ++job->left;
    job->cv.notify_all();
  }
}

Status CorePool::run(std::uint32_t blocks, std::uint32_t cores, const BlockFunction& block,
                     const std::string& name) {
  auto job = std::make_shared<Job>();
  job->block = &block;
  job->name = &name;
  job->blocks = blocks;
  const std::uint32_t helpers =
      std::min<std::uint32_t>({blocks, cores, static_cast<std::uint32_t>(size_) + 1});
  job->seats = helpers > 0 ? helpers - 1 : 0;
  const bool offered = job->seats > 0;
  if (offered) startThreads();
  if (offered) {
    std::lock_guard<std::mutex> lock(mu_);
    offers_.push_back(job);
    if (job->seats == 1) {
      cv_.notify_one();
    } else {
      cv_.notify_all();
    }
  }
  work(*job);
  // Withdraw the seats nobody took, then wait for those who did.
  if (offered) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = std::find(offers_.begin(), offers_.end(), job);
    if (it != offers_.end()) offers_.erase(it);
  }
  std::unique_lock<std::mutex> jl(job->mu);
  job->cv.wait(jl, [&] { return job->left == job->joined; });
  return job->failed.load() ? job->firstError : Status::Ok();
}

}  // namespace cohort::runtime

#include "collective/rank_pool.h"

#include <map>

namespace cohort::testing {

RankPool::RankPool(int n) : n_(n), streams_(static_cast<std::size_t>(n)), results_(static_cast<std::size_t>(n)) {
  std::vector<int> devices;
  for (int r = 0; r < n; ++r) devices.push_back(r);
  init_ = Communicator::initAll(devices, &comms_);
  if (!init_.ok()) return;
  for (int r = 0; r < n; ++r) threads_.emplace_back([this, r] { loop(r); });
  run([this](int r) {
    Status s = runtime::streamCreate(&streams_[static_cast<std::size_t>(r)]);
    return s.ok() ? std::string() : s.toString();
  });
}

RankPool::~RankPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void RankPool::loop(int r) {
  (void)runtime::setDevice(r);
  std::uint64_t seen = 0;
  for (;;) {
    const std::function<std::string(int)>* job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      job = job_;
    }
    std::string result = (*job)(r);
    std::lock_guard<std::mutex> lock(mu_);
    results_[static_cast<std::size_t>(r)] = std::move(result);
    if (++done_ == n_) cv_.notify_all();
  }
}

std::vector<std::string> RankPool::run(const std::function<std::string(int)>& fn) {
  std::unique_lock<std::mutex> lock(mu_);
  job_ = &fn;
  done_ = 0;
  ++generation_;
  cv_.notify_all();
  cv_.wait(lock, [&] { return done_ == n_; });
  return results_;
}

RankPool& RankPool::shared(int n) {
  static std::map<int, std::unique_ptr<RankPool>>* pools = new std::map<int, std::unique_ptr<RankPool>>();
  auto& p = (*pools)[n];
  if (!p) p = std::make_unique<RankPool>(n);
  return *p;
}

}  // namespace cohort::testing

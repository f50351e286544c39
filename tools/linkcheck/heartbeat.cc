// Beats come kBeatsPerSilence times per silence window, so that a live rank is
// never silent for a whole window even when one beat is late.
#include "tools/linkcheck/heartbeat.h"

#include <fmt/format.h>

#include <algorithm>

namespace cohort::linkcheck {

namespace {

constexpr int kBeatsPerSilence = 4;
constexpr double kMaxBeatS = 0.25;

std::string beatKey(int rank) { return fmt::format("beat/{}", rank); }

}  // namespace

Heartbeat::Heartbeat(std::shared_ptr<transport::Store> store, int rank, double silentS)
    : store_(std::move(store)), rank_(rank), silentS_(silentS), thread_([this] { beat(); }) {}

Heartbeat::~Heartbeat() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_.notify_all();
  thread_.join();
}

void Heartbeat::beat() {
  const auto period =
      std::chrono::duration<double>(std::min(kMaxBeatS, silentS_ / kBeatsPerSilence));
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    lock.unlock();
    std::int64_t count = 0;
    (void)store_->add(beatKey(rank_), 1, &count);
    lock.lock();
    stop_.wait_for(lock, period, [this] { return stopping_; });
  }
}

bool Heartbeat::alive(int rank) {
  std::int64_t count = 0;
  if (!store_->add(beatKey(rank), 0, &count).ok()) return true;
  const auto now = Clock::now();
  Seen& s = seen_[rank];
  if (s.count != count) {
    s.count = count;
    s.at = now;
    return true;
  }
  return std::chrono::duration<double>(now - s.at).count() < silentS_;
}

}  // namespace cohort::linkcheck

// Beats run on their own thread: a store call to a vanished machine can block
// for the connect timeout, and the supervisor's loop must never stall on it.
#include "launcher/node_sync.h"

#include <unistd.h>

#include <map>

#include "common/error.h"
#include "common/log.h"
#include "launcher/output_relay.h"

namespace cohort::launcher {

namespace {

constexpr auto kBeatPeriod = std::chrono::seconds(1);
constexpr auto kPollPeriod = std::chrono::milliseconds(100);

std::string doneKey(int node) { return "cohortrun/done/" + std::to_string(node); }
std::string aliveKey(int node) { return "cohortrun/alive/" + std::to_string(node); }

}  // namespace

NodeSync::NodeSync(const LaunchPlan& plan, const transport::RootInfo& root)
    : enabled_(plan.nodeCount > 1),
      serving_(plan.servesStore),
      node_(plan.nodeRank),
      nodes_(plan.nodeCount),
      root_(root) {}

NodeSync::~NodeSync() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (beater_.joinable()) beater_.join();
}

void NodeSync::start() {
  if (!enabled_ || serving_) return;
  beater_ = std::thread([this] { beat(); });
}

bool NodeSync::connect(long timeoutMs) {
  if (store_) return true;
  const Status s = transport::connectStore(root_, -1, Deadline::afterMs(timeoutMs), &store_);
  if (!s.ok()) {
    COHORT_LOG(kInfo, "launcher", "node {}: job store not reachable: {}", node_, s.message());
    store_.reset();
  }
  return store_ != nullptr;
}

void NodeSync::beat() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    lock.unlock();
    std::int64_t beats = 0;
    if (connect(500) && !store_->add(aliveKey(node_), 1, &beats).ok()) store_.reset();
    lock.lock();
    wake_.wait_for(lock, kBeatPeriod, [this] { return stop_; });
  }
}

void NodeSync::finish(int exitCode, Deadline deadline, const std::function<bool()>& interrupted) {
  if (!enabled_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (beater_.joinable()) beater_.join();
  if (serving_) {
    if (exitCode == 0 && connect(2000)) waitForNodes(deadline, interrupted);
    return;
  }
  // Reachable during the job: the report is immediate; never reached: one short try.
  if (!connect(1000) || !store_->set(doneKey(node_), transport::encodeInt(exitCode)).ok()) {
    COHORT_LOG(kWarn, "launcher", "node {} could not report its end to the job store at {}:{}",
               node_, root_.host, root_.port);
  }
}

bool NodeSync::nodeEnded(int node, Silence* silence) {
  bool done = false;
  transport::Bytes value;
  if (store_->check(doneKey(node), &done).ok() && done &&
      store_->get(doneKey(node), &value, Deadline::afterMs(1000)).ok()) {
    const std::int64_t code = transport::decodeInt(value);
    if (code != 0) {
      writeAll(STDERR_FILENO,
               fmt::format("cohortrun: node {} ended with exit code {}\n", node, code));
    }
    return true;
  }
  std::int64_t beats = 0;
  if (store_->add(aliveKey(node), 0, &beats).ok() && beats != silence->beats) {
    *silence = {beats, std::chrono::steady_clock::now()};
  }
  if (std::chrono::steady_clock::now() - silence->since <= kSilence) return false;
  writeAll(STDERR_FILENO, fmt::format("cohortrun: node {} has been silent for {} s; no longer "
                                      "serving the job store for it\n",
                                      node, kSilence.count()));
  return true;
}

void NodeSync::waitForNodes(Deadline deadline, const std::function<bool()>& interrupted) {
  std::map<int, Silence> waiting;
  for (int node = 0; node < nodes_; ++node) {
    if (node != node_) waiting[node] = {-1, std::chrono::steady_clock::now()};
  }
  COHORT_LOG(kInfo, "launcher",
             "node {}: ranks done; serving the job store until {} more nodes "
             "are done",
             node_, waiting.size());
  while (!waiting.empty() && !deadline.expired() && !interrupted()) {
    for (auto it = waiting.begin(); it != waiting.end();) {
      it = nodeEnded(it->first, &it->second) ? waiting.erase(it) : std::next(it);
    }
    if (!waiting.empty()) std::this_thread::sleep_for(kPollPeriod);
  }
}

}  // namespace cohort::launcher

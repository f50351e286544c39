#include "reliability/destroy_cases.h"

#include <mutex>
#include <thread>
#include <vector>

#include "collective/datatype.h"

namespace cohort::testing {

namespace {
bool rooted(SoakKind k) {
  return k == SoakKind::kBroadcast || k == SoakKind::kReduce || k == SoakKind::kGather ||
         k == SoakKind::kScatter;
}
}  // namespace

std::string DestroyCase::describe() const {
  return op.describe() + ", rank " + std::to_string(leaver) + " leaves first";
}

std::vector<DestroyCase> destroyCases(int ranks, const std::vector<std::size_t>& counts) {
  std::vector<DestroyCase> cases;
  int variant = 0;
  for (std::size_t count : counts) {
    for (int k = 0; k < kSoakKinds; ++k) {
      const auto kind = static_cast<SoakKind>(k);
      const int roots = rooted(kind) ? ranks : 1;
      for (int root = 0; root < roots; ++root) {
        // The root and the rank after it; unrooted kinds: the first and the last rank.
        const int leavers[2] = {root, rooted(kind) ? (root + 1) % ranks : ranks - 1};
        for (int leaver : leavers) {
          DestroyCase c;
          c.op.kind = kind;
          c.op.type = static_cast<DataType>(variant % kDataTypeCount);
          c.op.op = variant % 3 == 0 ? ReduceOp::kMax : ReduceOp::kSum;
          c.op.count = count;
          c.op.root = root;
          c.op.inPlace = variant % 2 == 1;
          c.leaver = leaver;
          cases.push_back(c);
          ++variant;
        }
      }
    }
  }
  return cases;
}

void keepUntilExit(std::unique_ptr<Communicator> comm) {
  static auto* kept = new std::vector<std::unique_ptr<Communicator>>();
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  kept->push_back(std::move(comm));
}

std::string runDestroyCase(const DestroyCase& c, std::unique_ptr<Communicator> comm,
                           std::chrono::milliseconds delay, bool leaverExits) {
  runtime::Stream* stream = nullptr;
  const Status made = runtime::streamCreate(&stream);
  if (!made.ok()) return "streamCreate: " + made.toString();
  Communicator& ref = *comm;
  const bool leaves = ref.rank() == c.leaver;
  std::string destroyed;
  auto destroy = [&] {
    const Status s = Communicator::destroy(std::move(comm), /*abortPending=*/false);
    if (!s.ok()) destroyed = "destroy: " + s.toString();
  };
  auto sleep = [&] { std::this_thread::sleep_for(delay); };
  SoakHooks hooks;
  if (leaves) {
    if (!leaverExits) hooks.afterSync = destroy;
  } else {
    hooks.beforeIssue = sleep;
    hooks.beforeSync = sleep;
    hooks.afterSync = destroy;
  }
  // The same call once before, together: a communicator's first calls wait for
  // everyone (a first broadcast's root waits for its readers to arrive), later
  // ones may not, and the case is about those.
  std::string bad = runSoakOp(c.op, ref, stream);
  if (!bad.empty()) bad = "the call before: " + bad;
  if (bad.empty()) bad = runSoakOp(c.op, ref, stream, hooks);
  if (comm != nullptr && !(leaves && leaverExits)) destroy();  // a failed issue skips the hook
  if (leaves && leaverExits) keepUntilExit(std::move(comm));  // the process exits with it
  if (!destroyed.empty()) bad += (bad.empty() ? "" : "; ") + destroyed;
  (void)runtime::streamDestroy(stream);
  return bad;
}

}  // namespace cohort::testing

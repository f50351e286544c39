// One rank of the destroy-race test with real processes (destroy_process_test.cc),
// its job in the environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
// COHORT_TRANSPORT):
//   destroy_worker cases COUNT...  every destroy case at these counts, each on a
//                                  fresh communicator split from the job's
//   destroy_worker exit COUNT       the broadcast and allreduce cases at COUNT; in
//                                  the last one the leaver (rank 0) exits right
//                                  after its sync, without destroying anything
// Prints "rank R: destroy CASES OK" and exits 0, or one line per failed case and
// exits 7 (4: the job's communicator could not be made).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cohort/communicator.h"
#include "reliability/destroy_cases.h"

using namespace cohort;
using namespace cohort::testing;

namespace {

int envRank() {
  const char* r = std::getenv("RANK");
  return r == nullptr ? -1 : std::atoi(r);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: destroy_worker cases|exit COUNT...\n");
    return 2;
  }
  const bool exitMode = std::strcmp(argv[1], "exit") == 0;
  std::vector<std::size_t> counts;
  for (int i = 2; i < argc; ++i) counts.push_back(std::strtoull(argv[i], nullptr, 10));
  std::unique_ptr<Communicator> job;
  Status s = Communicator::initFromEnvironment(&job);
  if (!s.ok()) {
    std::printf("rank %d: init FAILED: %s\n", envRank(), s.toString().c_str());
    return 4;
  }
  std::vector<DestroyCase> cases;
  for (const DestroyCase& c : destroyCases(job->size(), counts)) {
    const bool wanted = c.op.kind == SoakKind::kBroadcast || c.op.kind == SoakKind::kAllReduce;
    if (!exitMode || (wanted && c.leaver == 0)) cases.push_back(c);
  }
  int failed = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const DestroyCase& c = cases[i];
    std::unique_ptr<Communicator> fresh;
    s = job->split(0, job->rank(), &fresh);
    if (!s.ok()) {
      std::printf("rank %d: split FAILED: %s\n", job->rank(), s.toString().c_str());
      return 7;
    }
    const bool last = exitMode && i + 1 == cases.size();
    const std::string bad =
        runDestroyCase(c, std::move(fresh), std::chrono::milliseconds(20), last);
    if (!bad.empty()) {
      std::printf("rank %d: %s: FAILED %s\n", job->rank(), c.describe().c_str(), bad.c_str());
      ++failed;
    }
    if (last && job->rank() == c.leaver) {
      std::printf("rank %d: destroy %zu cases %s, exiting without destroy\n", job->rank(),
                  cases.size(), failed == 0 ? "OK" : "FAILED");
      std::fflush(stdout);
      keepUntilExit(std::move(job));  // the communicators stay: the process ends with them
      std::exit(failed == 0 ? 0 : 7);
    }
  }
  std::printf("rank %d: destroy %zu cases %s\n", job->rank(), cases.size(),
              failed == 0 ? "OK" : "FAILED");
  std::fflush(stdout);
  if (exitMode) {
    keepUntilExit(std::move(job));  // rank 0 left without a word: the job's communicator is broken
  } else {
    (void)Communicator::destroy(std::move(job), false);
  }
  return failed == 0 ? 0 : 7;
}

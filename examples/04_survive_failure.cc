// Example 4: surviving a dead rank.
//
//   cohortrun --keep-going -n 4 survive_failure [--victim 2] [--at 20]
//
// Every rank allreduces a vector in a loop. Rank --victim kills itself (SIGKILL, as
// an out-of-memory killer or a crashed node would) at step --at. The others see
// their allreduce fail, agree on who failed without being told
// (Communicator::failedRanks), make a communicator of the survivors
// (Communicator::shrink), and carry on: 100 more allreduces, each checked element
// by element. cohortrun --keep-going lets them run on after the death.
#include <cohort/communicator.h>
#include <cohort/runtime.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using cohort::Communicator;
using cohort::DataType;
using cohort::ReduceOp;
using cohort::Status;
namespace rt = cohort::runtime;

namespace {

constexpr std::size_t kCount = (1 << 18) + 1;  // floats per allreduce, odd

void die(int rank, const char* what, const Status& s) {
  std::printf("rank %d: %s FAILED: %s\n", rank, what, s.toString().c_str());
  std::fflush(stdout);
  std::exit(1);
}

// What rank `rank` (of the first communicator) contributes at step `step`.
float input(int rank, std::size_t i, int step) {
  return static_cast<float>((rank + 1) * 10000 + static_cast<int>(i % 1000) + step);
}

// One allreduce of this rank's input on `stream`, waited for.
Status allreduceStep(Communicator& comm, int rank, int step, float* data, rt::Stream* stream) {
  for (std::size_t i = 0; i < kCount; ++i) data[i] = input(rank, i, step);
  Status s = comm.allReduce(data, data, kCount, DataType::kFloat32, ReduceOp::kSum, stream);
  return s.ok() ? rt::streamSynchronize(stream) : s;
}

}  // namespace

int main(int argc, char** argv) {
  int victim = 2, at = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--victim") == 0) victim = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--at") == 0) at = std::atoi(argv[i + 1]);
  }
  std::unique_ptr<Communicator> comm;
  if (Status s = Communicator::initFromEnvironment(&comm); !s.ok()) die(-1, "init", s);
  const int rank = comm->rank();
  void* buffer = nullptr;
  if (Status s = rt::deviceMalloc(&buffer, kCount * sizeof(float)); !s.ok()) die(rank, "malloc", s);
  auto* data = static_cast<float*>(buffer);
  rt::Stream* stream = nullptr;
  if (Status s = rt::streamCreate(&stream); !s.ok()) die(rank, "stream", s);

  // The loop until a rank dies.
  int step = 0;
  for (;; ++step) {
    if (rank == victim && step == at) ::raise(SIGKILL);
    if (!allreduceStep(*comm, rank, step, data, stream).ok()) break;
  }
  std::printf("rank %d: allreduce %d failed: %s\n", rank, step,
              cohort::lastError().message().c_str());

  // Agree on who failed, and go on without them. The failed operation left its
  // error on the stream, so the rest runs on a new one.
  std::vector<int> failed;
  if (Status s = comm->failedRanks(&failed); !s.ok()) die(rank, "failedRanks", s);
  std::unique_ptr<Communicator> survivors;
  if (Status s = comm->shrink(&survivors); !s.ok()) die(rank, "shrink", s);
  (void)Communicator::destroy(std::move(comm), /*abortPending=*/true);
  std::string names;
  for (int r : failed) names += (names.empty() ? "" : ", ") + std::to_string(r);
  std::printf("rank %d: the survivors agree that rank(s) %s failed; now rank %d of %d\n", rank,
              names.c_str(), survivors->rank(), survivors->size());
  (void)rt::streamDestroy(stream);
  if (Status s = rt::streamCreate(&stream); !s.ok()) die(rank, "stream", s);

  // The survivors' ranks in the first communicator, to check the sums.
  std::vector<int> alive;
  for (int r = 0; r < survivors->size() + static_cast<int>(failed.size()); ++r) {
    if (std::find(failed.begin(), failed.end(), r) == failed.end()) alive.push_back(r);
  }
  for (int k = 0; k < 100; ++k) {
    if (Status s = allreduceStep(*survivors, rank, k, data, stream); !s.ok()) {
      die(rank, "allreduce after the shrink", s);
    }
    for (std::size_t i = 0; i < kCount; ++i) {
      float want = 0;
      for (int r : alive) want += input(r, i, k);
      if (data[i] != want) {
        std::printf("rank %d: allreduce %d after the shrink, element %zu: %g, want %g: FAILED\n",
                    rank, k, i, data[i], want);
        return 1;
      }
    }
  }
  if (survivors->rank() == 0) {
    std::printf("%d survivors checked 100 allreduces after the shrink\n", survivors->size());
  }
  (void)Communicator::destroy(std::move(survivors), false);
  (void)rt::deviceFree(buffer);
  return 0;
}

// A process for cohort-smi to see: holds logical devices 0 and 1, MIB MiB of
// device memory on device 0, and a 2-rank communicator (one thread per rank)
// that has completed OPS allreduces. Prints "ready" and waits for stdin to close
// (or for a signal).
//   smi_holder MIB OPS
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "cohort/communicator.h"

using namespace cohort;

namespace {

int die(const char* what, const Status& s) {
  std::printf("smi_holder: %s: %s\n", what, s.toString().c_str());
  std::fflush(stdout);
  return 1;
}

Status runOps(Communicator& comm, int device, int ops) {
  Status s = runtime::setDevice(device);
  void* buf = nullptr;
  if (s.ok()) s = runtime::deviceMalloc(&buf, 4096);
  for (int i = 0; s.ok() && i < ops; ++i) {
    s = comm.allReduce(buf, buf, 1024, DataType::kFloat32, ReduceOp::kSum, nullptr);
  }
  return s.ok() ? runtime::streamSynchronize(nullptr) : s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: smi_holder MIB OPS\n");
    return 2;
  }
  const std::size_t mib = std::strtoul(argv[1], nullptr, 10);
  const int ops = std::atoi(argv[2]);
  Status s = runtime::setDevice(0);
  if (!s.ok()) return die("setDevice", s);
  void* held = nullptr;
  s = runtime::deviceMalloc(&held, mib << 20);
  if (!s.ok()) return die("deviceMalloc", s);
  std::vector<std::unique_ptr<Communicator>> comms;
  s = Communicator::initAll({0, 1}, &comms);
  if (!s.ok()) return die("initAll", s);
  Status results[2];
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] { results[r] = runOps(*comms[r], r, ops); });
  }
  for (auto& t : ranks) t.join();
  for (const Status& r : results) {
    if (!r.ok()) return die("allreduce", r);
  }
  std::printf("ready\n");
  std::fflush(stdout);
  char c;
  while (read(0, &c, 1) > 0) {
  }
  return 0;
}

// Uses the public API only: devices, memory, a stream, an event. Prints
// "consumer OK <versions>" and exits 0 when every check passes.
#include <cohort/communicator.h>
#include <cohort/runtime.h>

#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

namespace rt = cohort::runtime;

#define CHECK_OK(expr)                                                          \
  do {                                                                          \
    cohort::Status s_ = (expr);                                                 \
    if (!s_.ok()) {                                                             \
      std::fprintf(stderr, "%s failed: %s\n", #expr, s_.toString().c_str());    \
      return 1;                                                                 \
    }                                                                           \
  } while (0)

int main() {
  CHECK_OK(rt::init());
  CHECK_OK(rt::setDevice(0));
  std::vector<int> host(1000), back(1000, 0);
  for (int i = 0; i < 1000; ++i) host[i] = i * i;
  void* d = nullptr;
  CHECK_OK(rt::deviceMalloc(&d, sizeof(int) * 1000));
  rt::Stream* s = nullptr;
  rt::Event* e = nullptr;
  CHECK_OK(rt::streamCreate(&s));
  CHECK_OK(rt::eventCreate(&e));
  CHECK_OK(rt::memcpyAsync(d, 4000, host.data(), 4000, rt::MemcpyKind::kHostToDevice, s));
  CHECK_OK(rt::eventRecord(e, s));
  CHECK_OK(rt::streamWaitEvent(nullptr, e));
  CHECK_OK(rt::memcpyAsync(back.data(), 4000, d, 4000, rt::MemcpyKind::kDeviceToHost, nullptr));
  CHECK_OK(rt::streamSynchronize(nullptr));
  for (int i = 0; i < 1000; ++i) {
    if (back[i] != i * i) {
      std::fprintf(stderr, "element %d is %d, expected %d\n", i, back[i], i * i);
      return 1;
    }
  }
  CHECK_OK(rt::eventDestroy(e));
  CHECK_OK(rt::streamDestroy(s));
  CHECK_OK(rt::deviceFree(d));
  CHECK_OK(rt::resetDevice(0));
  // Two ranks as threads: an allreduce through the installed collective library.
  std::vector<std::unique_ptr<cohort::Communicator>> comms;
  CHECK_OK(cohort::Communicator::initAll({0, 1}, &comms));
  std::vector<cohort::Status> results(2);
  std::vector<int> sums(2, 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      (void)rt::setDevice(r);
      void* buf = nullptr;
      results[r] = rt::deviceMalloc(&buf, sizeof(int));
      if (!results[r].ok()) return;
      *static_cast<int*>(buf) = r + 1;
      results[r] = comms[r]->allReduce(buf, buf, 1, cohort::DataType::kInt32,
                                       cohort::ReduceOp::kSum, nullptr);
      if (results[r].ok()) results[r] = rt::streamSynchronize(nullptr);
      sums[r] = *static_cast<int*>(buf);
      (void)rt::deviceFree(buf);
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < 2; ++r) {
    CHECK_OK(results[r]);
    if (sums[r] != 3) {
      std::fprintf(stderr, "allreduce on rank %d gave %d, expected 3\n", r, sums[r]);
      return 1;
    }
  }
  const cohort::VersionInfo v = cohort::loadedVersion();
  std::printf("consumer OK library %s api %d protocol %d\n", v.library, v.apiVersion,
              v.protocolVersion);
  return 0;
}

// Example 1: the per-device runtime across 4 emulated devices.
//
// One host thread drives each device. Every device fills a vector with a
// "compute" kernel on its compute stream, a copy stream waits for it through an
// event and sends the vector to the next device (device-to-device copy), and the
// receiver, ordered by another event, adds what it got to its own vector. No host
// synchronisation sits between those steps: events order them. At the end every
// device must hold v_d + v_{d-1}, checked element by element.
#include <cohort/runtime.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstdio>
#include <thread>
#include <vector>

namespace rt = cohort::runtime;

namespace {

constexpr int kDevices = 4;
constexpr std::size_t kCount = 1 << 20;  // floats per device
constexpr std::size_t kBytes = kCount * sizeof(float);

float value(int device, std::size_t i) { return static_cast<float>(device * 1000 + i % 997); }

void die(const char* what, const cohort::Status& s) {
  std::fprintf(stderr, "runtime_demo: %s: %s\n", what, s.toString().c_str());
  std::exit(1);
}
#define OK(expr)                                 \
  do {                                           \
    cohort::Status s_ = (expr);                  \
    if (!s_.ok()) die(#expr, s_);                \
  } while (0)

// Lets the device threads meet between phases (std::barrier is C++20).
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void arriveAndWait() {
    std::unique_lock<std::mutex> lock(mu_);
    const int generation = generation_;
    if (++arrived_ == n_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation != generation_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  const int n_;
  int arrived_ = 0;
  int generation_ = 0;
};

struct DeviceState {
  float* data = nullptr;      // the device's own vector
  float* inbox = nullptr;     // what the previous device sends
  rt::Stream* compute = nullptr;
  rt::Stream* copy = nullptr;
  rt::Event* computed = nullptr;  // data is ready
  rt::Event* sent = nullptr;      // inbox of the next device is written
  float elapsedMs = 0;
  std::size_t wrong = 0;
};

}  // namespace

int main() {
  OK(rt::init());
  int count = 0;
  OK(rt::getDeviceCount(&count));
  if (count < kDevices) {
    std::fprintf(stderr, "runtime_demo: needs %d devices, %d visible\n", kDevices, count);
    return 1;
  }
  std::printf("Cohort %s runtime demo: %d emulated devices, %zu floats each\n",
              cohort::loadedVersion().library, kDevices, kCount);
  std::vector<DeviceState> dev(kDevices);
  Barrier setupDone(kDevices), sendsQueued(kDevices);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int d = 0; d < kDevices; ++d) {
    threads.emplace_back([&, d] {
      DeviceState& me = dev[d];
      OK(rt::setDevice(d));
      void *data = nullptr, *inbox = nullptr;
      OK(rt::deviceMalloc(&data, kBytes));
      OK(rt::deviceMalloc(&inbox, kBytes));
      me.data = static_cast<float*>(data);
      me.inbox = static_cast<float*>(inbox);
      OK(rt::streamCreate(&me.compute));
      OK(rt::streamCreate(&me.copy));
      OK(rt::eventCreate(&me.computed));
      OK(rt::eventCreate(&me.sent));
      rt::Event *begin = nullptr, *end = nullptr;
      OK(rt::eventCreate(&begin));
      OK(rt::eventCreate(&end));
      OK(rt::eventRecord(begin, me.compute));
      OK(rt::launchKernel(me.compute, [&me, d](rt::Stream*) {
        for (std::size_t i = 0; i < kCount; ++i) me.data[i] = value(d, i);
        return cohort::Status::Ok();
      }));
      OK(rt::eventRecord(me.computed, me.compute));
      setupDone.arriveAndWait();
      // Send my vector to the next device once it is computed.
      DeviceState& next = dev[(d + 1) % kDevices];
      OK(rt::streamWaitEvent(me.copy, me.computed));
      OK(rt::memcpyAsync(next.inbox, kBytes, me.data, kBytes, rt::MemcpyKind::kDeviceToDevice,
                         me.copy));
      OK(rt::eventRecord(me.sent, me.copy));
      sendsQueued.arriveAndWait();
      // Add what the previous device sent, after its copy landed.
      DeviceState& prev = dev[(d + kDevices - 1) % kDevices];
      OK(rt::streamWaitEvent(me.compute, prev.sent));
      OK(rt::streamWaitEvent(me.compute, me.sent));  // my data was read before I change it
      OK(rt::launchKernel(me.compute, [&me](rt::Stream*) {
        for (std::size_t i = 0; i < kCount; ++i) me.data[i] += me.inbox[i];
        return cohort::Status::Ok();
      }));
      OK(rt::eventRecord(end, me.compute));
      OK(rt::streamSynchronize(me.compute));
      OK(rt::eventElapsedTime(&me.elapsedMs, begin, end));
      std::vector<float> host(kCount);
      OK(rt::memcpy(host.data(), kBytes, me.data, kBytes, rt::MemcpyKind::kDeviceToHost));
      const int p = (d + kDevices - 1) % kDevices;
      for (std::size_t i = 0; i < kCount; ++i) me.wrong += host[i] != value(d, i) + value(p, i);
      for (rt::Event* e : {begin, end}) OK(rt::eventDestroy(e));
    });
  }
  for (auto& t : threads) t.join();
  const double totalMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::size_t wrong = 0;
  std::printf("%-8s %-14s %-16s %s\n", "device", "stream time", "memory used", "wrong");
  for (int d = 0; d < kDevices; ++d) {
    std::size_t freeB = 0, totalB = 0;
    OK(rt::setDevice(d));
    OK(rt::getMemInfo(&freeB, &totalB));
    std::printf("%-8d %9.2f ms   %8.1f MiB     %zu\n", d, dev[d].elapsedMs,
                (totalB - freeB) / 1048576.0, dev[d].wrong);
    wrong += dev[d].wrong;
  }
  for (int d = 0; d < kDevices; ++d) {
    OK(rt::setDevice(d));
    OK(rt::eventDestroy(dev[d].computed));
    OK(rt::eventDestroy(dev[d].sent));
    OK(rt::streamDestroy(dev[d].compute));
    OK(rt::streamDestroy(dev[d].copy));
    OK(rt::deviceFree(dev[d].data));
    OK(rt::deviceFree(dev[d].inbox));
    OK(rt::resetDevice(d));  // the worker thread's reference
    OK(rt::resetDevice(d));  // this thread's reference
  }
  std::printf("ring exchange across %d devices in %.1f ms: %s\n", kDevices, totalMs,
              wrong == 0 ? "demo OK" : "WRONG RESULTS");
  return wrong == 0 ? 0 : 1;
}

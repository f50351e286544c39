// Uses the public API only: devices, memory, a stream, an event. Prints
// "consumer OK <versions>" and exits 0 when every check passes.
#include <cohort/runtime.h>

#include <cstdio>
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
  const cohort::VersionInfo v = cohort::loadedVersion();
  std::printf("consumer OK library %s api %d protocol %d\n", v.library, v.apiVersion,
              v.protocolVersion);
  return 0;
}

// The second process of acl_ipc_test: opens what the test shares (an IPC event, a
// notify key, device memory) and uses it through the ACL API. Exit code 0 = all good;
// otherwise the number says which step failed (the test prints it).
//
//   acl_ipc_peer event  <event handle hex> <shared word handle hex>
//   acl_ipc_peer notify <notify key>       <shared word handle hex>
//   acl_ipc_peer value  <memory handle hex>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "acl/acl.h"
#include "cohort/runtime.h"

namespace {

namespace rt = cohort::runtime;

bool fromHex(const std::string& hex, void* out, size_t size) {
  if (hex.size() != 2 * size) return false;
  auto* bytes = static_cast<unsigned char*>(out);
  for (size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<unsigned char>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  }
  return true;
}

// Shared words the test and this process hand-shake through.
std::atomic<uint64_t>* sharedWords(const std::string& hex) {
  rt::MemHandle h{};
  if (!fromHex(hex, h.bytes, sizeof(h.bytes))) return nullptr;
  void* p = nullptr;
  if (!rt::memImport(h, &p).ok()) return nullptr;
  return static_cast<std::atomic<uint64_t>*>(p);
}

bool awaitWord(std::atomic<uint64_t>* word, uint64_t value) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (word->load() != value) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

int eventPeer(const char* eventHex, const char* sharedHex, aclrtStream stream) {
  aclrtIpcEventHandle handle;
  if (!fromHex(eventHex, handle.reserved, sizeof(handle.reserved))) return 20;
  std::atomic<uint64_t>* word = sharedWords(sharedHex);
  if (word == nullptr) return 21;
  aclrtEvent event = nullptr;
  if (aclrtIpcOpenEventHandle(handle, &event) != ACL_SUCCESS) return 22;
  // Released only by the test's record, which comes after it wrote 42.
  if (aclrtStreamWaitEvent(stream, event) != ACL_SUCCESS) return 23;
  if (aclrtSynchronizeStream(stream) != ACL_SUCCESS) return 24;
  if (word->load() != 42) return 25;
  // Now this process records; the test sees it.
  word->store(77);
  if (aclrtRecordEvent(event, stream) != ACL_SUCCESS) return 26;
  if (aclrtSynchronizeEvent(event) != ACL_SUCCESS) return 27;
  aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
  if (aclrtQueryEventStatus(event, &status) != ACL_SUCCESS ||
      status != ACL_EVENT_RECORDED_STATUS_COMPLETE) {
    return 28;
  }
  return aclrtDestroyEvent(event) == ACL_SUCCESS ? 0 : 29;
}

int notifyPeer(const char* key, const char* sharedHex, aclrtStream stream) {
  std::atomic<uint64_t>* words = sharedWords(sharedHex);
  if (words == nullptr) return 30;
  aclrtNotify notify = nullptr;
  // Not whitelisted yet: refused.
  if (aclrtNotifyImportByKey(&notify, key, 0) != ACL_ERROR_INVALID_PARAM) return 31;
  words[0].store(1);
  if (!awaitWord(&words[1], 1)) return 32;  // the test named this process
  if (aclrtNotifyImportByKey(&notify, key, ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS) !=
      ACL_SUCCESS) {
    return 33;
  }
  if (aclrtRecordNotify(notify, stream) != ACL_SUCCESS) return 34;
  if (aclrtSynchronizeStream(stream) != ACL_SUCCESS) return 35;
  // Once the test's wait has taken that record, this process waits for the test's.
  if (!awaitWord(&words[2], 1)) return 39;
  if (aclrtWaitAndResetNotify(notify, stream, 20) != ACL_SUCCESS) return 36;
  if (aclrtSynchronizeStream(stream) != ACL_SUCCESS) return 37;
  words[0].store(2);
  return aclrtDestroyNotify(notify) == ACL_SUCCESS ? 0 : 38;
}

int valuePeer(const char* memoryHex, aclrtStream stream) {
  rt::MemHandle h{};
  if (!fromHex(memoryHex, h.bytes, sizeof(h.bytes))) return 40;
  void* p = nullptr;
  if (!rt::memImport(h, &p).ok()) return 41;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the test waits meanwhile
  if (aclrtValueWrite(p, 0x5a5a, 0, stream) != ACL_SUCCESS) return 42;
  if (aclrtSynchronizeStream(stream) != ACL_SUCCESS) return 43;
  return rt::memClose(p).ok() ? 0 : 44;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  if (aclInit(nullptr) != ACL_SUCCESS) return 3;
  if (aclrtSetDevice(1) != ACL_SUCCESS) return 4;
  aclrtStream stream = nullptr;
  if (aclrtCreateStream(&stream) != ACL_SUCCESS) return 5;
  const std::string mode = argv[1];
  int result = 2;
  if (mode == "event" && argc == 4) result = eventPeer(argv[2], argv[3], stream);
  if (mode == "notify" && argc == 4) result = notifyPeer(argv[2], argv[3], stream);
  if (mode == "value" && argc == 3) result = valuePeer(argv[2], stream);
  if (result != 0) std::fprintf(stderr, "peer: %s\n", aclGetRecentErrMsg());
  aclrtDestroyStream(stream);
  aclFinalize();
  return result;
}

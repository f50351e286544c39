// The other process of acl_ipc_mem_test: waits for a line on stdin (the exporter has
// set its whitelist by then), imports the key on device 1, checks that byte i of the
// memory is (seed + i) % 256, writes (seed + 1 + i) % 256 over it, closes the key, and
// reports each step on stdout ("import <aclError>", "check <0|1>", "close <aclError>").
//
//   acl_ipc_mem_peer <key> <bytes> <seed>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "acl/acl.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s <key> <bytes> <seed>\n", argv[0]);
    return 2;
  }
  const std::string key = argv[1];
  const std::size_t bytes = std::strtoull(argv[2], nullptr, 10);
  const int seed = std::atoi(argv[3]);
  char line[16];
  if (std::fgets(line, sizeof(line), stdin) == nullptr) return 3;  // the exporter went away
  if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(1) != ACL_SUCCESS) return 4;
  void* p = nullptr;
  const aclError imported = aclrtIpcMemImportByKey(&p, key.c_str(), 0);
  std::printf("import %d\n", imported);
  if (imported == ACL_SUCCESS) {
    std::vector<unsigned char> data(bytes);
    bool same = aclrtMemcpy(data.data(), bytes, p, bytes, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS;
    for (std::size_t i = 0; i < bytes && same; ++i) {
      same = data[i] == static_cast<unsigned char>(seed + i);
    }
    std::printf("check %d\n", same ? 1 : 0);
    for (std::size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>(seed + 1 + i);
    if (aclrtMemcpy(p, bytes, data.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS) {
      std::printf("write failed: %s\n", aclGetRecentErrMsg());
    }
    std::printf("close %d\n", aclrtIpcMemClose(key.c_str()));
  } else {
    const char* m = aclGetRecentErrMsg();
    std::printf("message %s\n", m != nullptr ? m : "");
  }
  std::fflush(stdout);
  aclrtResetDevice(1);
  aclFinalize();
  return 0;
}

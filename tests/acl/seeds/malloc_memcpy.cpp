// Seed 002 (§3.2): the aclrtMalloc / aclrtMemcpy / aclrtFree snippet, wrapped in
// the program it needs (init, device, a host buffer) and checked by copying the
// data back. Expected output: "aclrtMalloc ok", "roundtrip ok", "aclrtFree ok".
// The article's include order:
// clang-format off
#include "acl/acl.h"
#include <cstdio>
#include <cstring>
#include <vector>
// clang-format on
int main() {
  if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
    printf("setup failed: %s\n", aclGetRecentErrMsg());
    return -1;
  }
  std::vector<unsigned char> host(1024 * 1024);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<unsigned char>(i * 7);
  void* hostPtr = host.data();

  // 申请设备内存
  void* devicePtr = nullptr;
  size_t size = 1024 * 1024;  // 1MB
  aclError ret = aclrtMalloc(&devicePtr, size, ACL_MEM_MALLOC_NORMAL_ONLY);
  if (ret != ACL_SUCCESS) {
    printf("aclrtMalloc failed: %d\n", ret);
    return -1;
  }
  printf("aclrtMalloc ok\n");
  // 主机到设备拷贝
  aclrtMemcpy(devicePtr, size, hostPtr, size, ACL_MEMCPY_HOST_TO_DEVICE);

  // (check) copy it back and compare
  std::vector<unsigned char> back(size);
  ret = aclrtMemcpy(back.data(), size, devicePtr, size, ACL_MEMCPY_DEVICE_TO_HOST);
  if (ret != ACL_SUCCESS || std::memcmp(back.data(), host.data(), size) != 0) {
    printf("roundtrip failed: %d\n", ret);
    return -1;
  }
  printf("roundtrip ok\n");
  // 使用完之后释放
  ret = aclrtFree(devicePtr);
  if (ret != ACL_SUCCESS) {
    printf("aclrtFree failed: %d\n", ret);
    return -1;
  }
  printf("aclrtFree ok\n");
  aclrtResetDevice(0);
  aclFinalize();
  return 0;
}

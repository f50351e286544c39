// Seed 002 (CANN Runtime repository notes, §3.1): initialise ACL, set device 0,
// read the current device back. Expected output: "current device id: 0".
// The article's include order:
// clang-format off
#include "acl/acl.h"
#include <cstdio>
// clang-format on
int main() {
  // 1. 初始化ACL运行时
  aclError ret = aclInit(nullptr);
  if (ret != ACL_SUCCESS) {
    printf("aclInit failed: %d\n", ret);
    return -1;
  }
  // 2. 设置使用第0号设备
  ret = aclrtSetDevice(0);
  if (ret != ACL_SUCCESS) {
    printf("aclrtSetDevice failed: %d\n", ret);
    aclFinalize();
    return -1;
  }
  // 3. 查询当前设备ID，验证上下文是否可用
  int32_t deviceId = -1;
  ret = aclrtGetDevice(&deviceId);
  if (ret == ACL_SUCCESS) {
    printf("current device id: %d\n", deviceId);
  }
  aclrtResetDevice(0);
  aclFinalize();
  return 0;
}

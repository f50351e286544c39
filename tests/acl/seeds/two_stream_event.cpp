// Seed 002 (§3.3): stream A prepares data and records an event, stream B waits
// on the event before it uses the data. The article's "xxx" placeholders are
// filled with asynchronous copies: A writes the input into `buf` through a long
// chain of copies, B copies `buf` out; B is right only if it really waited.
// The article's timing tip (events around a piece of work, aclrtSynchronizeEvent,
// elapsed time) closes the program. Expected output: "stream B saw stream A's
// data", "elapsed ms ok".
// The article's include order:
// clang-format off
#include "acl/acl.h"
#include <cstdio>
#include <cstring>
// clang-format on
int main() {
  if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
    printf("setup failed: %s\n", aclGetRecentErrMsg());
    return -1;
  }
  const size_t size = 8 << 20;
  void *hostIn = nullptr, *hostOut = nullptr, *staging = nullptr, *buf = nullptr;
  aclrtMallocHost(&hostIn, size);
  aclrtMallocHost(&hostOut, size);
  aclrtMalloc(&staging, size, ACL_MEM_MALLOC_HUGE_FIRST);
  aclrtMalloc(&buf, size, ACL_MEM_MALLOC_HUGE_FIRST);
  memset(hostIn, 0x5a, size);
  memset(hostOut, 0, size);
  aclrtMemset(buf, size, 0, size);

  aclrtStream streamA, streamB;
  aclrtEvent event;
  aclrtCreateStream(&streamA);
  aclrtCreateStream(&streamB);
  aclrtCreateEvent(&event);
  // 流A中执行数据准备任务
  for (int i = 0; i < 16; ++i) {  // make A slow enough that an unordered B would race
    aclrtMemcpyAsync(staging, size, hostIn, size, ACL_MEMCPY_HOST_TO_DEVICE, streamA);
  }
  aclrtMemcpyAsync(buf, size, staging, size, ACL_MEMCPY_DEVICE_TO_DEVICE, streamA);
  // 流A记录事件
  aclrtRecordEvent(event, streamA);
  // 流B等待事件完成后继续执行
  aclrtStreamWaitEvent(streamB, event);
  // 流B中执行推理任务
  aclrtMemcpyAsync(hostOut, size, buf, size, ACL_MEMCPY_DEVICE_TO_HOST, streamB);
  aclError ret = aclrtSynchronizeStream(streamB);
  if (ret != ACL_SUCCESS || memcmp(hostOut, hostIn, size) != 0) {
    printf("stream B did not see stream A's data (ret %d)\n", ret);
    return -1;
  }
  printf("stream B saw stream A's data\n");

  // 用aclrtRecordEvent夹住一段任务，再用aclrtSynchronizeEvent等待，统计耗时
  aclrtEvent start, end;
  aclrtCreateEvent(&start);
  aclrtCreateEvent(&end);
  aclrtRecordEvent(start, streamA);
  aclrtMemcpyAsync(buf, size, staging, size, ACL_MEMCPY_DEVICE_TO_DEVICE, streamA);
  aclrtRecordEvent(end, streamA);
  aclrtSynchronizeEvent(end);
  float ms = -1;
  ret = aclrtEventElapsedTime(&ms, start, end);
  if (ret != ACL_SUCCESS || ms < 0) {
    printf("aclrtEventElapsedTime failed: %d\n", ret);
    return -1;
  }
  printf("elapsed ms ok\n");

  aclrtDestroyEvent(start);
  aclrtDestroyEvent(end);
  aclrtDestroyEvent(event);
  aclrtDestroyStream(streamA);
  aclrtDestroyStream(streamB);
  aclrtFree(staging);
  aclrtFree(buf);
  aclrtFreeHost(hostIn);
  aclrtFreeHost(hostOut);
  aclrtResetDevice(0);
  aclFinalize();
  return 0;
}

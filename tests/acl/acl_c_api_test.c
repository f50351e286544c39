/* The ACL headers compile as C99 and the library links from a C program: a
 * round trip through device memory on a stream. Exits 0 and prints "c api ok". */
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "acl/acl_base_rt.h"
#include "acl/acl_rt_allocator.h"
#include "acl/acl_rt_memory_soma.h"

#define CHECK(expr)                                                   \
  do {                                                                \
    aclError e_ = (expr);                                             \
    if (e_ != ACL_SUCCESS) {                                          \
      const char* m_ = aclGetRecentErrMsg();                          \
      printf("%s failed: %d: %s\n", #expr, e_, m_ != NULL ? m_ : ""); \
      return 1;                                                       \
    }                                                                 \
  } while (0)

int main(void) {
  char in[256], out[256];
  void* dev = NULL;
  aclrtStream stream = NULL;
  aclrtEvent done = NULL;
  aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
  memset(in, 'c', sizeof in);
  memset(out, 0, sizeof out);
  CHECK(aclInit(NULL));
  CHECK(aclrtSetDevice(0));
  CHECK(aclrtCreateStream(&stream));
  CHECK(aclrtCreateEventWithFlag(&done, ACL_EVENT_SYNC));
  CHECK(aclrtMalloc(&dev, sizeof in, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMemcpy(dev, sizeof in, in, sizeof in, ACL_MEMCPY_HOST_TO_DEVICE));
  CHECK(aclrtMemcpyAsync(out, sizeof out, dev, sizeof in, ACL_MEMCPY_DEVICE_TO_HOST, stream));
  CHECK(aclrtRecordEvent(done, stream));
  CHECK(aclrtSynchronizeEvent(done));
  CHECK(aclrtQueryEventStatus(done, &status));
  if (status != ACL_EVENT_RECORDED_STATUS_COMPLETE || memcmp(in, out, sizeof in) != 0) {
    printf("wrong result\n");
    return 1;
  }
  if (aclrtSetDevice(99) != ACL_ERROR_RT_INVALID_DEVICEID || aclGetRecentErrMsg() == NULL) {
    printf("error path wrong\n");
    return 1;
  }
  CHECK(aclrtFree(dev));
  CHECK(aclrtDestroyEvent(done));
  CHECK(aclrtDestroyStream(stream));
  CHECK(aclrtResetDevice(0));
  CHECK(aclFinalize());
  printf("c api ok\n");
  return 0;
}

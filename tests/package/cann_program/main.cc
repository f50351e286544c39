// A program written the way CANN programs are: it includes the ACL (and, unless
// built with NO_HCCL, the HCCL) headers from $ASCEND_HOME_PATH/include and links
// the libraries of $ASCEND_HOME_PATH/lib64. It initialises ACL, counts the
// emulated devices, finalises, and prints "cann program ok <count>". Built with
// WITH_DVPP, it also takes and releases DVPP memory (acl/ops/acl_dvpp.h, -lacl_dvpp).
#include <acl/acl.h>
#ifdef WITH_DVPP
#include <acl/ops/acl_dvpp.h>
#endif
#ifndef NO_HCCL
#include <hccl/hccl.h>
#endif

#include <cstdio>

int main() {
  aclError ret = aclInit(nullptr);
  if (ret != ACL_SUCCESS) {
    std::printf("aclInit failed: %d\n", ret);
    return 1;
  }
  uint32_t count = 0;
  ret = aclrtGetDeviceCount(&count);
  if (ret != ACL_SUCCESS || count == 0) {
    std::printf("aclrtGetDeviceCount failed: %d (count %u)\n", ret, count);
    return 1;
  }
#ifdef WITH_DVPP
  void* picture = nullptr;
  if (aclrtSetDevice(0) != ACL_SUCCESS || acldvppMalloc(&picture, 4096) != ACL_SUCCESS ||
      aclrtMemset(picture, 4096, 7, 4096) != ACL_SUCCESS || acldvppFree(picture) != ACL_SUCCESS ||
      aclrtResetDevice(0) != ACL_SUCCESS) {
    std::printf("DVPP memory failed: %s\n", aclGetRecentErrMsg());
    return 1;
  }
#endif
#ifndef NO_HCCL
  // A call into libhccl.so, so that the -lhccl build really needs it.
  const char* text = HcclGetErrorString(HCCL_SUCCESS);
  if (text == nullptr || text[0] == '\0') {
    std::printf("HcclGetErrorString returned nothing\n");
    return 1;
  }
#endif
  ret = aclFinalize();
  if (ret != ACL_SUCCESS) {
    std::printf("aclFinalize failed: %d\n", ret);
    return 1;
  }
  std::printf("cann program ok %u\n", count);
  return 0;
}

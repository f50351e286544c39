/* The HCCL headers are C: a C99 program uses them (constants, the inline config
 * initialiser, a one-rank communicator and an allreduce) and links with the
 * library alone. Prints "hccl c api ok" on success. */
#include <stdio.h>
#include <string.h>

#include "hccl/hccl.h"

static int check(int ok, const char* what) {
  if (!ok) printf("FAILED: %s\n", what);
  return ok;
}

int main(void) {
  HcclCommConfig config;
  HcclRootInfo root;
  HcclComm comm[1];
  int32_t device = 0;
  uint32_t size = 0;
  aclrtStream stream = NULL;
  int32_t values[4] = {1, 2, 3, 4}, back[4] = {0, 0, 0, 0};
  void* buf = NULL;
  int ok = 1;

  HcclCommConfigInit(&config);
  ok &= check(config.hcclBufferSize == HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET, "config init");
  ok &= check(sizeof(root.internal) == HCCL_ROOT_INFO_BYTES && HCCL_ROOT_INFO_BYTES == 4108,
              "root info size");
  ok &= check(strcmp(HcclGetErrorString(HCCL_E_PARA), "parameter error") == 0, "error string");
  ok &= check(aclInit(NULL) == ACL_SUCCESS && aclrtSetDevice(0) == ACL_SUCCESS, "acl init");
  ok &= check(HcclCommInitAll(1, &device, comm) == HCCL_SUCCESS, "HcclCommInitAll");
  ok &= check(HcclGetRankSize(comm[0], &size) == HCCL_SUCCESS && size == 1, "rank size");
  ok &= check(aclrtCreateStream(&stream) == ACL_SUCCESS, "stream");
  ok &= check(aclrtMalloc(&buf, sizeof(values), ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS &&
                  aclrtMemcpy(buf, sizeof(values), values, sizeof(values),
                              ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS,
              "buffer");
  ok &= check(HcclAllReduce(buf, buf, 4, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm[0], stream) ==
                  HCCL_SUCCESS,
              "HcclAllReduce");
  ok &= check(aclrtSynchronizeStream(stream) == ACL_SUCCESS &&
                  aclrtMemcpy(back, sizeof(back), buf, sizeof(back), ACL_MEMCPY_DEVICE_TO_HOST) ==
                      ACL_SUCCESS,
              "synchronize");
  ok &= check(memcmp(back, values, sizeof(values)) == 0, "one rank's sum is its input");
  ok &= check(HcclCommDestroy(comm[0]) == HCCL_SUCCESS, "destroy");
  ok &= check(HcclCommDestroy(comm[0]) == HCCL_E_PARA, "destroyed handle refused");
  (void)aclrtFree(buf);
  (void)aclrtDestroyStream(stream);
  (void)aclFinalize();
  if (ok) printf("hccl c api ok\n");
  return ok ? 0 : 1;
}

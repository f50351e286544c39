// Seed 000 (CANN runtime deployment notes, §2.2): the minimal ACL self-check, as
// printed in the article. Expected output: "acl init/finalize ok".
// The article's include order:
// clang-format off
#include "acl/acl.h"
#include <cstdio>
// clang-format on
int main() {
  aclError ret = aclInit(nullptr);
  if (ret != ACL_SUCCESS) {
    printf("aclInit failed: %d\n", ret);
    return -1;
  }
  ret = aclFinalize();
  if (ret != ACL_SUCCESS) {
    printf("aclFinalize failed: %d\n", ret);
    return -1;
  }
  printf("acl init/finalize ok\n");
  return 0;
}

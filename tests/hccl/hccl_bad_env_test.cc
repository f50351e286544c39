// Run with HCCL_IF_BASE_PORT=80 (out of HCCL's range): no communicator is made,
// and the refusal names the variable, its value and the range (EI0001's shape).
#include "hccl_test_util.h"

namespace {

TEST(HcclBadEnvironment, EveryInitIsRefusedNamingTheVariable) {
  HcclRootInfo root;
  EXPECT_HCCL(HcclGetRootInfo(&root), HCCL_E_PARA,
              "EI0001: Value '80' for environment variable HCCL_IF_BASE_PORT is invalid");
  EXPECT_NE(cohort::lastError().message().find("80"), std::string::npos);
  EXPECT_NE(cohort::lastError().message().find("[1024, 65520]"), std::string::npos)
      << cohort::lastError().toString();
  HcclComm comms[1] = {};
  int32_t device = 0;
  EXPECT_HCCL(HcclCommInitAll(1, &device, comms), HCCL_E_PARA, "HCCL_IF_BASE_PORT");
  HcclComm comm = nullptr;
  EXPECT_HCCL(HcclCommInitClusterInfo("/tmp/any.json", 0, &comm), HCCL_E_PARA, "HCCL_IF_BASE_PORT");
  EXPECT_HCCL(HcclCommInitRootInfo(1, &root, 0, &comm), HCCL_E_PARA, "HCCL_IF_BASE_PORT");
}

}  // namespace

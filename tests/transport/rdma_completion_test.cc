// Every ibv_wc_status maps to a code and a message naming both ends, the
// operation and libibverbs' own text.
#include "transport/rdma/rdma_completion.h"

#include <fmt/format.h>

#include <map>

#include "test_util.h"

namespace cohort::transport::rdma {
namespace {

const std::map<ibv_wc_status, ErrorCode>& expectedCodes() {
  static const std::map<ibv_wc_status, ErrorCode> codes = {
      {IBV_WC_LOC_LEN_ERR, ErrorCode::kInternal},
      {IBV_WC_LOC_QP_OP_ERR, ErrorCode::kInternal},
      {IBV_WC_LOC_EEC_OP_ERR, ErrorCode::kInternal},
      {IBV_WC_LOC_PROT_ERR, ErrorCode::kInternal},
      {IBV_WC_WR_FLUSH_ERR, ErrorCode::kConnectionError},
      {IBV_WC_MW_BIND_ERR, ErrorCode::kInternal},
      {IBV_WC_BAD_RESP_ERR, ErrorCode::kConnectionError},
      {IBV_WC_LOC_ACCESS_ERR, ErrorCode::kInternal},
      {IBV_WC_REM_INV_REQ_ERR, ErrorCode::kRemoteError},
      {IBV_WC_REM_ACCESS_ERR, ErrorCode::kRemoteError},
      {IBV_WC_REM_OP_ERR, ErrorCode::kRemoteError},
      {IBV_WC_RETRY_EXC_ERR, ErrorCode::kRemoteError},
      {IBV_WC_RNR_RETRY_EXC_ERR, ErrorCode::kRemoteError},
      {IBV_WC_LOC_RDD_VIOL_ERR, ErrorCode::kInternal},
      {IBV_WC_REM_INV_RD_REQ_ERR, ErrorCode::kRemoteError},
      {IBV_WC_REM_ABORT_ERR, ErrorCode::kRemoteError},
      {IBV_WC_INV_EECN_ERR, ErrorCode::kConnectionError},
      {IBV_WC_INV_EEC_STATE_ERR, ErrorCode::kConnectionError},
      {IBV_WC_FATAL_ERR, ErrorCode::kSystemError},
      {IBV_WC_RESP_TIMEOUT_ERR, ErrorCode::kTimeout},
      {IBV_WC_GENERAL_ERR, ErrorCode::kConnectionError},
      {IBV_WC_TM_ERR, ErrorCode::kInternal},
      {IBV_WC_TM_RNDV_INCOMPLETE, ErrorCode::kInternal},
  };
  return codes;
}

TEST(RdmaCompletionTest, SuccessIsOk) {
  EXPECT_OK(completionStatus(IBV_WC_SUCCESS, 0, "write", "rank 0", "rank 1"));
  EXPECT_EQ(completionErrorCode(IBV_WC_SUCCESS), ErrorCode::kSuccess);
}

TEST(RdmaCompletionTest, EveryErrorStatusNamesBothEndsAndTheVerbsText) {
  for (int v = IBV_WC_LOC_LEN_ERR; v <= IBV_WC_TM_RNDV_INCOMPLETE; ++v) {
    const auto status = static_cast<ibv_wc_status>(v);
    SCOPED_TRACE(ibv_wc_status_str(status));
    ASSERT_EQ(expectedCodes().count(status), 1u) << "status " << v << " missing from the test";
    const Status s = completionStatus(status, 0x51, "write of a data chunk",
                                      "rank 0 mlx5_0:1 qpn 0x11", "rank 3 (node-b) qpn 0x22");
    EXPECT_EQ(s.code(), expectedCodes().at(status));
    EXPECT_EQ(completionErrorCode(status), expectedCodes().at(status));
    const std::string& m = s.message();
    EXPECT_NE(m.find(ibv_wc_status_str(status)), std::string::npos) << m;
    EXPECT_NE(m.find("rank 0 mlx5_0:1 qpn 0x11"), std::string::npos) << m;
    EXPECT_NE(m.find("rank 3 (node-b) qpn 0x22"), std::string::npos) << m;
    EXPECT_NE(m.find("write of a data chunk"), std::string::npos) << m;
    EXPECT_NE(m.find(fmt::format("wc status {}", v)), std::string::npos) << m;
    EXPECT_NE(m.find("vendor error 0x51"), std::string::npos) << m;
  }
  EXPECT_EQ(expectedCodes().size(), std::size_t{IBV_WC_TM_RNDV_INCOMPLETE});
}

TEST(RdmaCompletionTest, RetryExceededSaysThePeerIsGone) {
  EXPECT_ERROR(completionStatus(IBV_WC_RETRY_EXC_ERR, 0, "write", "rank 0", "rank 1"), kRemoteError,
               "transport retry counter exceeded (wc status 12, vendor error 0x0): "
               "no ACK after COHORT_RDMA_RETRY_CNT retries: peer dead or unreachable");
}

TEST(RdmaCompletionTest, UnknownStatusIsStillAnError) {
  const Status s =
      completionStatus(static_cast<ibv_wc_status>(99), 0, "receive", "rank 0", "rank 1");
  EXPECT_EQ(s.code(), ErrorCode::kConnectionError);
  EXPECT_NE(s.message().find("unknown completion status"), std::string::npos) << s.toString();
}

}  // namespace
}  // namespace cohort::transport::rdma

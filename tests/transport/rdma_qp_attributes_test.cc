// Queue pair attributes from COHORT_RDMA_*: the exact ibv_qp_attr values and
// masks of each state change.
#include "transport/rdma/rdma_qp_attributes.h"

#include <cstring>

#include "test_util.h"

namespace cohort::transport::rdma {
namespace {

TEST(RdmaQpAttributesTest, DefaultsMatchHccl) {
  QpSettings s;
  ASSERT_OK(QpSettings::fromConfig(Config::parse({}), &s));
  EXPECT_EQ(s.trafficClass, 132);
  EXPECT_EQ(s.serviceLevel, 4);
  EXPECT_EQ(s.timeout, 20);
  EXPECT_EQ(s.retryCount, 7);
  EXPECT_NEAR(ackTimeoutSeconds(20), 4.294967, 1e-5);
  EXPECT_NEAR(ackTimeoutSeconds(14), 0.0671088, 1e-6);
}

TEST(RdmaQpAttributesTest, EnvironmentOverridesEveryValue) {
  QpSettings s;
  ASSERT_OK(QpSettings::fromConfig(Config::parse({{"COHORT_RDMA_TC", "96"},
                                                  {"COHORT_RDMA_SL", "3"},
                                                  {"COHORT_RDMA_TIMEOUT", "14"},
                                                  {"COHORT_RDMA_RETRY_CNT", "5"}}),
                                   &s));
  EXPECT_EQ(s.trafficClass, 96);
  EXPECT_EQ(s.serviceLevel, 3);
  EXPECT_EQ(s.timeout, 14);
  EXPECT_EQ(s.retryCount, 5);
}

TEST(RdmaQpAttributesTest, OutOfRangeValuesNameTheVariable) {
  QpSettings s;
  Config c;
  c.rdmaTc = 256;
  EXPECT_ERROR(QpSettings::fromConfig(c, &s), kConfigError, "COHORT_RDMA_TC=256");
  c = Config();
  c.rdmaSl = 8;
  EXPECT_ERROR(QpSettings::fromConfig(c, &s), kConfigError, "COHORT_RDMA_SL=8");
  c = Config();
  c.rdmaTimeout = 31;
  EXPECT_ERROR(QpSettings::fromConfig(c, &s), kConfigError, "COHORT_RDMA_TIMEOUT=31");
  c = Config();
  c.rdmaRetryCnt = 0;
  EXPECT_ERROR(QpSettings::fromConfig(c, &s), kConfigError, "[1, 7]");
  EXPECT_EQ(s.trafficClass, 132);  // untouched on error
}

TEST(RdmaQpAttributesTest, InitAllowsRemoteWrites) {
  LocalPort local;
  local.port = 2;
  const QpTransition t = initTransition(local);
  EXPECT_EQ(t.attr.qp_state, IBV_QPS_INIT);
  EXPECT_EQ(t.attr.port_num, 2);
  EXPECT_EQ(t.attr.pkey_index, 0);
  EXPECT_EQ(t.attr.qp_access_flags, unsigned(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
  EXPECT_EQ(t.mask, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

TEST(RdmaQpAttributesTest, RtrOnRoceCarriesGrhWithTrafficClass) {
  LocalPort local{1, 3, IBV_MTU_4096, true};
  RemoteQp remote;
  remote.qpn = 0x1a2b;
  remote.psn = 0x123456;
  remote.gid = Gid{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2};
  remote.mtu = IBV_MTU_1024;
  QpSettings settings;
  settings.trafficClass = 106;
  settings.serviceLevel = 5;
  const QpTransition t = rtrTransition(local, remote, settings);
  EXPECT_EQ(t.attr.qp_state, IBV_QPS_RTR);
  EXPECT_EQ(t.attr.path_mtu, IBV_MTU_1024);  // the smaller of both ports
  EXPECT_EQ(t.attr.dest_qp_num, 0x1a2bu);
  EXPECT_EQ(t.attr.rq_psn, 0x123456u);
  EXPECT_EQ(t.attr.max_dest_rd_atomic, 1);
  EXPECT_EQ(t.attr.min_rnr_timer, kMinRnrTimer);
  EXPECT_EQ(t.attr.ah_attr.is_global, 1);
  EXPECT_EQ(t.attr.ah_attr.port_num, 1);
  EXPECT_EQ(t.attr.ah_attr.sl, 5);
  EXPECT_EQ(t.attr.ah_attr.dlid, 0);
  EXPECT_EQ(t.attr.ah_attr.grh.sgid_index, 3);
  EXPECT_EQ(t.attr.ah_attr.grh.traffic_class, 106);
  EXPECT_EQ(t.attr.ah_attr.grh.hop_limit, kHopLimit);
  EXPECT_EQ(std::memcmp(t.attr.ah_attr.grh.dgid.raw, remote.gid.data(), 16), 0);
  EXPECT_EQ(t.mask, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                        IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  remote.mtu = IBV_MTU_4096;
  local.activeMtu = IBV_MTU_2048;
  EXPECT_EQ(rtrTransition(local, remote, settings).attr.path_mtu, IBV_MTU_2048);
}

TEST(RdmaQpAttributesTest, RtrOnInfiniBandRoutesByLid) {
  LocalPort local{1, 0, IBV_MTU_4096, false};
  RemoteQp remote;
  remote.lid = 0x42;
  remote.mtu = IBV_MTU_4096;
  const QpTransition t = rtrTransition(local, remote, QpSettings());
  EXPECT_EQ(t.attr.ah_attr.is_global, 0);
  EXPECT_EQ(t.attr.ah_attr.dlid, 0x42);
  EXPECT_EQ(t.attr.ah_attr.sl, 4);
}

TEST(RdmaQpAttributesTest, RtsUsesTimeoutAndRetryCount) {
  QpSettings settings;
  settings.timeout = 18;
  settings.retryCount = 6;
  const QpTransition t = rtsTransition(0xabcdef, settings);
  EXPECT_EQ(t.attr.qp_state, IBV_QPS_RTS);
  EXPECT_EQ(t.attr.sq_psn, 0xabcdefu);
  EXPECT_EQ(t.attr.timeout, 18);
  EXPECT_EQ(t.attr.retry_cnt, 6);
  EXPECT_EQ(t.attr.rnr_retry, kRnrRetryInfinite);
  EXPECT_EQ(t.attr.max_rd_atomic, 1);
  EXPECT_EQ(t.mask, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                        IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

TEST(RdmaQpAttributesTest, MtuBytes) {
  EXPECT_EQ(mtuBytes(IBV_MTU_256), 256);
  EXPECT_EQ(mtuBytes(IBV_MTU_1024), 1024);
  EXPECT_EQ(mtuBytes(IBV_MTU_4096), 4096);
  EXPECT_EQ(mtuBytes(static_cast<ibv_mtu>(9)), 0);
}

}  // namespace
}  // namespace cohort::transport::rdma

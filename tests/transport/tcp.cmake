# The TCP transport, the generic wait loop and the link probe. Ranks are threads
# of one test process over 127.0.0.1 (COHORT_IF_IP pins the interface), except in
# tcp_multiprocess_test, which forks real processes.
set(tcp_test_env "COHORT_IF_IP=127.0.0.1;COHORT_CONNECT_TIMEOUT=10")
cohort_add_test(transport_tcp_test
  SOURCES tcp_pair.cc tcp_frame_test.cc tcp_connection_test.cc tcp_connect_test.cc
          tcp_link_probe_test.cc tcp_wait_idle_test.cc
  LIBS cohort_transport nlohmann_json::nlohmann_json LABELS tsan
  ENV "${tcp_test_env}")
cohort_add_test(transport_tcp_multiprocess_test
  SOURCES tcp_pair.cc tcp_multiprocess_test.cc
  LIBS cohort_transport
  ENV "${tcp_test_env}")
cohort_add_test(transport_tcp_retry_test
  SOURCES tcp_pair.cc tcp_retry_test.cc
  LIBS cohort_transport LABELS tsan
  ENV "${tcp_test_env};HCCL_OP_RETRY_ENABLE=L0:1,L1:1;HCCL_OP_RETRY_PARAMS=MaxCnt:3,HoldTime:2000,IntervalTime:100")

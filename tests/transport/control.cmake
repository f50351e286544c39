# Bootstrap control plane: store protocol, TCP store, root info, interfaces,
# whitelist. Network tests use 127.0.0.1 only.
cohort_add_test(control_unit_test
  SOURCES control_protocol_test.cc control_root_info_test.cc control_netif_test.cc
          control_pending_waits_test.cc
  LIBS cohort_transport)
cohort_add_test(control_store_test SOURCES control_store_test.cc
  LIBS cohort_transport LABELS tsan)
cohort_add_test(control_hostile_test SOURCES control_hostile_test.cc
  LIBS cohort_transport LABELS tsan)
# The whitelist file is written by the test itself before each server starts.
cohort_add_test(control_whitelist_test SOURCES control_whitelist_test.cc
  LIBS cohort_transport
  ENV "COHORT_WHITELIST_FILE=${CMAKE_CURRENT_BINARY_DIR}/control_whitelist.txt")
# The base port range lies below the kernel's ephemeral range (32768 and up
# here), so no other test's client socket is ever handed one of its ports.
cohort_add_test(control_root_test SOURCES control_root_test.cc
  LIBS cohort_transport LABELS tsan
  ENV "COHORT_IF_IP=127.0.0.1;COHORT_IF_BASE_PORT=31310")

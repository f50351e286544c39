# The rdma transport's tests: the pure parts (setup blob, QP attributes, GID
# choice, completion mapping, wire format, registration cache), the connection
# protocol over in-memory queue pairs, and the device tests (which skip, saying
# why, where ibv_devices lists no device).
if(IBVERBS_FOUND)
  cohort_add_test(transport_rdma_test
    SOURCES rdma_setup_blob_test.cc rdma_qp_attributes_test.cc rdma_gid_test.cc
            rdma_completion_test.cc rdma_wire_test.cc rdma_registration_test.cc
            rdma_connection_test.cc rdma_rejoin_test.cc rdma_device_test.cc
    LIBS cohort_transport PkgConfig::IBVERBS
    ENV "COHORT_DEVICE_COUNT=2;COHORT_DEVICE_MEMORY=64M")
endif()

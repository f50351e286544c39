# The rdma transport (RoCE over rdma-core libibverbs): compiled only when
# libibverbs is found; transport/CMakeLists.txt turns COHORT_HAVE_RDMA into a
# compile definition so that the selection code offers it.
if(IBVERBS_FOUND)
  list(APPEND sources
    rdma/rdma_wire.cc rdma/rdma_gid.cc rdma/rdma_qp_attributes.cc rdma/rdma_completion.cc
    rdma/rdma_setup_blob.cc rdma/rdma_registration.cc rdma/rdma_device.cc
    rdma/rdma_connection.cc rdma/rdma_data_path.cc rdma/rdma_connection_retry.cc
    rdma/rdma_rejoin.cc rdma/rdma_transport.cc)
  list(APPEND transport_private_deps PkgConfig::IBVERBS)
  set(COHORT_HAVE_RDMA ON)
endif()

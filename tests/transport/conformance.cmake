# The transport conformance suite (issue 4): the Connection contract, one TEST_P
# over every transport available here (shm, tcp; rdma only where a device exists,
# otherwise its cases skip saying why). Ranks are threads of the test process,
# except for peer death, where rank 1 is conformance_peer, a process of its own
# that the test kills. tcp runs over 127.0.0.1 only.
set(conformance_dir ${CMAKE_CURRENT_LIST_DIR})
set(conformance_defs "")
if(IBVERBS_FOUND)
  list(APPEND conformance_defs COHORT_HAVE_RDMA=1)
endif()

add_executable(conformance_peer
  ${conformance_dir}/conformance_peer.cc ${conformance_dir}/conformance_util.cc)
target_include_directories(conformance_peer PRIVATE ${PROJECT_SOURCE_DIR})
target_compile_definitions(conformance_peer PRIVATE ${conformance_defs})
target_link_libraries(conformance_peer PRIVATE cohort_transport)

cohort_add_test(transport_conformance_test
  SOURCES ${conformance_dir}/conformance_test.cc ${conformance_dir}/conformance_death_test.cc
          ${conformance_dir}/shm_protocol_check_test.cc ${conformance_dir}/shm_region_test.cc
          ${conformance_dir}/conformance_util.cc
  LIBS cohort_transport LABELS tsan
  DEFS ${conformance_defs} COHORT_CONFORMANCE_PEER="$<TARGET_FILE:conformance_peer>"
  ENV "COHORT_IF_IP=127.0.0.1;COHORT_CONNECT_TIMEOUT=10;COHORT_DEVICE_COUNT=2;COHORT_DEVICE_MEMORY=1G")
add_dependencies(transport_conformance_test conformance_peer)

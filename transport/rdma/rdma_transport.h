// The RoCE transport (rdma-core libibverbs): RC queue pairs, registered receive
// rings, RDMA WRITE WITH IMMEDIATE. Compiled only when libibverbs is found
// (COHORT_HAVE_RDMA); used only where an RDMA device exists.
#pragma once

#include <memory>

#include "cohort/status.h"
#include "transport/transport.h"

namespace cohort::transport {

/// Opens the first RDMA device with an active port and a usable GID and returns
/// the "rdma" transport over it. With no device: kUnavailable whose message,
/// "no RDMA device: ibv_get_device_list returned none[ (errno text)]", is the
/// reason the selection code reports; with devices but no usable port:
/// kUnavailable listing each port's reason. kConfigError for an out-of-range
/// COHORT_RDMA_* value.
Status makeRdmaTransport(const TransportContext& context, std::unique_ptr<Transport>* out);

}  // namespace cohort::transport

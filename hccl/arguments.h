// Checking and converting the arguments of HCCL calls: communicator handles,
// streams, data types, reduction operations, ranks and count arrays. Every
// refusal is an Outcome naming the function, the parameter and its value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "acl/acl_base.h"
#include "cohort/communicator.h"
#include "hccl/api_call.h"
#include "hccl/comm_registry.h"

namespace cohort::hccl {

/// A call on one communicator: its entry, held (in use) for the call, and the
/// caller's stream.
struct CallContext {
  std::shared_ptr<CommEntry> entry;
  runtime::Stream* stream = nullptr;

  Communicator& comm() const { return *entry->comm; }
};

/// "0x4843434c00000010"
std::string pointerText(const void* p);

/// The live communicator behind `comm`: HCCL_E_PTR for null, HCCL_E_PARA (EI0003)
/// for a handle that is not live (destroyed, or never made).
Outcome lookupComm(const char* function, HcclComm comm, std::shared_ptr<CommEntry>* out);

/// lookupComm, and the stream, which must not be null (HCCL_E_PTR).
Outcome beginCall(const char* function, HcclComm comm, aclrtStream stream, CallContext* out);

/// HCCL_E_NOT_SUPPORT for INT128, HIF8 and the FP8 types, and (as HCCL) for values
/// that are no HcclDataType, with EI0003's text.
Outcome toDataType(const char* function, HcclDataType type, const char* parameter, DataType* out);

/// HCCL_E_NOT_SUPPORT (as HCCL) for values that are no reduction (RESERVED included),
/// with EI0003's text.
Outcome toReduceOp(const char* function, HcclReduceOp op, ReduceOp* out);

/// HCCL_E_PARA unless value < size.
Outcome checkRank(const char* function, std::uint32_t value, const char* parameter, int size);

/// HCCL_E_PTR for the first null pointer of the list (name, pointer).
Outcome requirePointers(const char* function,
                        std::initializer_list<std::pair<const char*, const void*>> pointers);

/// HCCL_E_PARA (EI0003) for the first non-null pointer of the list that no device can
/// reach: neither device memory nor host memory made for a device (aclrtMallocHost,
/// aclrtHostRegister). An NPU cannot address such memory, so a program that passes it
/// is wrong there; HCCL itself does not check it at the call.
Outcome requireDeviceReachable(const char* function,
                               std::initializer_list<std::pair<const char*, const void*>> buffers);

/// requirePointers, then requireDeviceReachable, over the same list.
Outcome requireBuffers(const char* function,
                       std::initializer_list<std::pair<const char*, const void*>> buffers);

/// The first n entries of a uint64_t array as sizes.
std::vector<std::size_t> readCounts(const void* counts, int n);

}  // namespace cohort::hccl

// Labels (aclrtCreateLabel ... aclrtSwitchLabelByIndex). A label marks a place in a
// stream bound to a model runtime instance, and a switch jumps there: Cohort's streams
// are queues run once in order and cannot jump, so labels and label lists are made,
// checked and destroyed for real, and setting or switching to them is not supported.
#include <atomic>
#include <vector>

#include "acl/entry_names.h"

namespace {

using cohort::acl::HandleTable;

constexpr std::size_t kMaxLabels = 65535;  // per process, as CANN
constexpr std::size_t kMaxListLength = 65535;

struct Label {
  int device;
};

struct LabelList {
  std::vector<void*> labels;
};

HandleTable<Label>& labels() {
  static auto* table = new HandleTable<Label>();
  return *table;
}

HandleTable<LabelList>& labelLists() {
  static auto* table = new HandleTable<LabelList>();
  return *table;
}

Outcome needLabel(const char* fn, aclrtLabel label) {
  return labels().lookup(fn, "label", label, "label");
}

}  // namespace

aclError aclrtCreateLabel(aclrtLabel* label) {
  const char* fn = "aclrtCreateLabel";
  return apiCall(fn, [&]() -> Outcome {
    if (label == nullptr) return nullArgument(fn, "label");
    ACL_RETURN_IF_FAILED(requireDevice(fn));
    if (labels().size() >= kMaxLabels) {
      return Outcome(
          ACL_ERROR_RT_RESOURCE_ALLOC_FAIL,
          cohort::makeError(ErrorCode::kUnavailable,
                            "{}: {} labels exist, the most a process may have", fn, kMaxLabels));
    }
    int device = -1;
    COHORT_RETURN_IF_ERROR(cohort::runtime::getDevice(&device));
    *label = labels().add(std::make_shared<Label>(Label{device}));
    return Status::Ok();
  });
}

aclError aclrtDestroyLabel(aclrtLabel label) {
  const char* fn = "aclrtDestroyLabel";
  return apiCall(fn, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(needLabel(fn, label));
    labels().remove(label);
    return Status::Ok();
  });
}

aclError aclrtSetLabel(aclrtLabel label, aclrtStream stream) {
  const char* fn = "aclrtSetLabel";
  (void)stream;
  return apiCall(fn, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(needLabel(fn, label));
    return unsupportedCase(fn,
                        "labels mark places in streams bound to a model runtime instance, "
                        "and Cohort's streams do not jump");
  });
}

aclError aclrtCreateLabelList(aclrtLabel* list, size_t num, aclrtLabelList* labelList) {
  const char* fn = "aclrtCreateLabelList";
  return apiCall(fn, [&]() -> Outcome {
    if (list == nullptr) return nullArgument(fn, "labels");
    if (labelList == nullptr) return nullArgument(fn, "labelList");
    if (num == 0 || num > kMaxListLength) {
      return invalidArgument(fn, "num {} is out of range (0, {}]", num, kMaxListLength);
    }
    auto created = std::make_shared<LabelList>();
    created->labels.reserve(num);
    for (size_t i = 0; i < num; ++i) {
      if (list[i] == nullptr || !labels().find(list[i])) {
        return Status(ErrorCode::kInvalidHandle,
                      fmt::format("{}: labels[{}] ({}) is not a live label", fn, i, list[i]));
      }
      created->labels.push_back(list[i]);
    }
    *labelList = labelLists().add(std::move(created));
    return Status::Ok();
  });
}

aclError aclrtDestroyLabelList(aclrtLabelList labelList) {
  const char* fn = "aclrtDestroyLabelList";
  return apiCall(fn, [&]() -> Outcome {
    if (labelList == nullptr) return nullArgument(fn, "labelList");
    if (!labelLists().remove(labelList)) {
      return Status(ErrorCode::kInvalidHandle,
                    fmt::format("{}: {} is not a live label list", fn, labelList));
    }
    return Status::Ok();
  });
}

aclError aclrtSwitchLabelByIndex(void* ptr, uint32_t maxValue, aclrtLabelList labelList,
                                 aclrtStream stream) {
  const char* fn = "aclrtSwitchLabelByIndex";
  (void)ptr, (void)maxValue, (void)stream;
  return apiCall(fn, [&]() -> Outcome {
    COHORT_RETURN_IF_ERROR(labelLists().lookup(fn, "labelList", labelList, "label list"));
    return unsupportedCase(fn, "Cohort's streams run their tasks once, in order, and do not jump");
  });
}

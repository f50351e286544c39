// Labels (aclrtCreateLabel ... aclrtSwitchLabelByIndex). A label marks a place in a
// stream bound to a model being built (aclmdlRIBindStream), and a switch there jumps
// to one of a list's labels at each launch (the runtime's labelSet and
// labelSwitchByIndex, keyed by the label's handle): Cohort jumps within one stream.
#include <atomic>
#include <vector>

#include "acl/entry_names.h"
#include "cohort/runtime_capture.h"

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
  return apiCall(fn, [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(needLabel(fn, label));
    if (stream == nullptr) return nullArgument(fn, "stream");
    return withName(fn, cohort::runtime::labelSet(label, toStream(stream)));
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
  return apiCall(fn, [&]() -> Outcome {
    COHORT_RETURN_IF_ERROR(labelLists().lookup(fn, "labelList", labelList, "label list"));
    if (ptr == nullptr) return nullArgument(fn, "ptr");
    if (stream == nullptr) return nullArgument(fn, "stream");
    if (reinterpret_cast<std::uintptr_t>(ptr) % alignof(uint32_t) != 0) {
      return invalidArgument(fn, "ptr {} is not aligned for its uint32 index", ptr);
    }
    std::shared_ptr<LabelList> list = labelLists().find(labelList);
    if (maxValue == 0 || maxValue > list->labels.size()) {
      return invalidArgument(fn, "maxValue {} is not in [1, {}] (the labels in the list)",
                             maxValue, list->labels.size());
    }
    std::vector<const void*> targets(list->labels.begin(), list->labels.end());
    return withName(fn, cohort::runtime::labelSwitchByIndex(static_cast<const uint32_t*>(ptr),
                                                            maxValue, std::move(targets),
                                                            toStream(stream)));
  });
}

// External allocators (aclrtAllocatorCreateDesc ... aclrtAllocatorGetByStream).
//
// What uses a registered allocator in Cohort: nothing. CANN's runtime may take
// workspace for single-operator and dynamic-shape model execution from the
// allocator registered on the stream; Cohort runs no operators or models and never
// allocates memory on a program's behalf, so registrations are recorded, kept per
// stream and answered by aclrtAllocatorGetByStream (the callbacks are never
// called), which is all CANN's contract promises.
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "acl/acl.h"
#include "acl/acl_rt_allocator.h"
#include "acl/entry_names.h"
#include "cohort/runtime.h"
#include "common/error.h"

namespace {

// What an aclrtAllocatorDesc points to.
struct Description {
  aclrtAllocator object = nullptr;
  aclrtAllocatorAllocFunc alloc = nullptr;
  aclrtAllocatorFreeFunc free = nullptr;
  aclrtAllocatorAllocAdviseFunc allocAdvise = nullptr;
  aclrtAllocatorGetAddrFromBlockFunc getAddrFromBlock = nullptr;
};

// The live descriptions and the registrations by stream. A registration keeps the
// handle it was made from and a copy of what the description held then, so that
// changing or destroying the description later leaves it alone (as in CANN).
// Process-wide and thread-safe; lives as long as the process.
class Allocators {
 public:
  static Allocators& get() {
    static Allocators* allocators = new Allocators;  // never destroyed: usable at exit
    return *allocators;
  }

  aclrtAllocatorDesc create() {
    auto description = std::make_unique<Description>();
    std::lock_guard<std::mutex> lock(mu_);
    descriptions_.insert(description.get());
    return description.release();
  }

  Outcome destroy(aclrtAllocatorDesc handle) {
    std::lock_guard<std::mutex> lock(mu_);
    Description* description = nullptr;
    ACL_RETURN_IF_FAILED(findLocked("aclrtAllocatorDestroyDesc", handle, &description));
    descriptions_.erase(description);
    delete description;
    return Status::Ok();
  }

  // Runs `set` on the live description `handle` under the lock.
  template <typename Set>
  Outcome update(const char* function, aclrtAllocatorDesc handle, const void* value,
                 const char* valueName, Set set) {
    std::lock_guard<std::mutex> lock(mu_);
    Description* description = nullptr;
    ACL_RETURN_IF_FAILED(findLocked(function, handle, &description));
    if (value == nullptr) return nullArgument(function, valueName);
    set(description);
    return Status::Ok();
  }

  Outcome enroll(aclrtStream stream, aclrtAllocatorDesc handle) {
    const char* fn = "aclrtAllocatorRegister";
    if (stream == nullptr) return nullArgument(fn, "stream");
    StreamIdentity identity;
    ACL_RETURN_IF_FAILED(identify(fn, stream, &identity));
    std::lock_guard<std::mutex> lock(mu_);
    Description* description = nullptr;
    ACL_RETURN_IF_FAILED(findLocked(fn, handle, &description));
    const struct {
      const void* value;
      const char* name;
    } required[] = {
        {description->object, "allocatorDesc's allocator (aclrtAllocatorSetObjToDesc)"},
        {reinterpret_cast<const void*>(description->alloc),
         "allocatorDesc's alloc function (aclrtAllocatorSetAllocFuncToDesc)"},
        {reinterpret_cast<const void*>(description->free),
         "allocatorDesc's free function (aclrtAllocatorSetFreeFuncToDesc)"},
        {reinterpret_cast<const void*>(description->getAddrFromBlock),
         "allocatorDesc's get-address function (aclrtAllocatorSetGetAddrFromBlockFuncToDesc)"},
    };
    for (const auto& item : required) {
      if (item.value == nullptr) {
        return cohort::makeError(ErrorCode::kInvalidArgument, "{}: {} is not set", fn, item.name);
      }
    }
    registered_[stream] = Registration{identity, handle, *description};
    return Status::Ok();
  }

  Outcome lookup(aclrtStream stream, aclrtAllocatorDesc* handle, Description* copy) {
    const char* fn = "aclrtAllocatorGetByStream";
    if (handle == nullptr) return nullArgument(fn, "allocatorDesc");
    if (stream == nullptr) return nullArgument(fn, "stream");
    StreamIdentity identity;
    const Status live = identify(fn, stream, &identity);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = registered_.find(stream);
    // A registration of a stream that is gone, or of an earlier stream at this address.
    if (it != registered_.end() && (!live.ok() || !(it->second.stream == identity))) {
      registered_.erase(it);
      it = registered_.end();
    }
    if (!live.ok()) return live;
    if (it == registered_.end()) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: no allocator is registered on stream {}", fn, stream);
    }
    *handle = it->second.handle;
    *copy = it->second.copy;
    return Status::Ok();
  }

  void forget(aclrtStream stream) {
    std::lock_guard<std::mutex> lock(mu_);
    registered_.erase(stream);
  }

 private:
  // Which stream a registration is for: a later stream may reuse the address of a
  // destroyed one, but never its (device, id).
  struct StreamIdentity {
    int device = -1;
    int id = -1;
    bool operator==(const StreamIdentity& other) const {
      return device == other.device && id == other.id;
    }
  };
  struct Registration {
    StreamIdentity stream;
    aclrtAllocatorDesc handle;
    Description copy;
  };

  static Status identify(const char* function, aclrtStream stream, StreamIdentity* identity) {
    rt::StreamDescription description;
    if (!rt::streamDescribe(toStream(stream), &description).ok()) {
      return cohort::makeError(ErrorCode::kInvalidHandle, "{}: stream {} is not a live stream",
                               function, stream);
    }
    identity->device = description.device;
    identity->id = description.id;
    return Status::Ok();
  }

  Outcome findLocked(const char* function, aclrtAllocatorDesc handle, Description** out) {
    if (handle == nullptr) return nullArgument(function, "allocatorDesc");
    auto* description = static_cast<Description*>(handle);
    if (descriptions_.count(description) == 0) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: allocatorDesc {} is not a live allocator description "
                               "(destroyed, or not made by aclrtAllocatorCreateDesc)",
                               function, handle);
    }
    *out = description;
    return Status::Ok();
  }

  std::mutex mu_;
  std::unordered_set<Description*> descriptions_;
  std::unordered_map<aclrtStream, Registration> registered_;
};

}  // namespace

aclrtAllocatorDesc aclrtAllocatorCreateDesc(void) {
  aclrtAllocatorDesc created = nullptr;
  apiCallAnyTime("aclrtAllocatorCreateDesc", [&]() -> Outcome {
    created = Allocators::get().create();
    return Status::Ok();
  });
  return created;
}

aclError aclrtAllocatorDestroyDesc(aclrtAllocatorDesc allocatorDesc) {
  return apiCallAnyTime("aclrtAllocatorDestroyDesc",
                        [&]() -> Outcome { return Allocators::get().destroy(allocatorDesc); });
}

aclError aclrtAllocatorSetObjToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocator allocator) {
  const char* fn = "aclrtAllocatorSetObjToDesc";
  return apiCallAnyTime(fn, [&]() -> Outcome {
    return Allocators::get().update(fn, allocatorDesc, allocator, "allocator",
                                    [&](Description* d) { d->object = allocator; });
  });
}

aclError aclrtAllocatorSetAllocFuncToDesc(aclrtAllocatorDesc allocatorDesc,
                                          aclrtAllocatorAllocFunc func) {
  const char* fn = "aclrtAllocatorSetAllocFuncToDesc";
  return apiCallAnyTime(fn, [&]() -> Outcome {
    return Allocators::get().update(fn, allocatorDesc, reinterpret_cast<const void*>(func), "func",
                                    [&](Description* d) { d->alloc = func; });
  });
}

aclError aclrtAllocatorSetFreeFuncToDesc(aclrtAllocatorDesc allocatorDesc,
                                         aclrtAllocatorFreeFunc func) {
  const char* fn = "aclrtAllocatorSetFreeFuncToDesc";
  return apiCallAnyTime(fn, [&]() -> Outcome {
    return Allocators::get().update(fn, allocatorDesc, reinterpret_cast<const void*>(func), "func",
                                    [&](Description* d) { d->free = func; });
  });
}

aclError aclrtAllocatorSetAllocAdviseFuncToDesc(aclrtAllocatorDesc allocatorDesc,
                                                aclrtAllocatorAllocAdviseFunc func) {
  const char* fn = "aclrtAllocatorSetAllocAdviseFuncToDesc";
  return apiCallAnyTime(fn, [&]() -> Outcome {
    return Allocators::get().update(fn, allocatorDesc, reinterpret_cast<const void*>(func), "func",
                                    [&](Description* d) { d->allocAdvise = func; });
  });
}

aclError aclrtAllocatorSetGetAddrFromBlockFuncToDesc(aclrtAllocatorDesc allocatorDesc,
                                                     aclrtAllocatorGetAddrFromBlockFunc func) {
  const char* fn = "aclrtAllocatorSetGetAddrFromBlockFuncToDesc";
  return apiCallAnyTime(fn, [&]() -> Outcome {
    return Allocators::get().update(fn, allocatorDesc, reinterpret_cast<const void*>(func), "func",
                                    [&](Description* d) { d->getAddrFromBlock = func; });
  });
}

aclError aclrtAllocatorRegister(aclrtStream stream, aclrtAllocatorDesc allocatorDesc) {
  return apiCall("aclrtAllocatorRegister",
                 [&]() -> Outcome { return Allocators::get().enroll(stream, allocatorDesc); });
}

aclError aclrtAllocatorGetByStream(aclrtStream stream, aclrtAllocatorDesc* allocatorDesc,
                                   aclrtAllocator* allocator, aclrtAllocatorAllocFunc* allocFunc,
                                   aclrtAllocatorFreeFunc* freeFunc,
                                   aclrtAllocatorAllocAdviseFunc* allocAdviseFunc,
                                   aclrtAllocatorGetAddrFromBlockFunc* getAddrFromBlockFunc) {
  return apiCall("aclrtAllocatorGetByStream", [&]() -> Outcome {
    Description copy;
    ACL_RETURN_IF_FAILED(Allocators::get().lookup(stream, allocatorDesc, &copy));
    if (allocator != nullptr) *allocator = copy.object;
    if (allocFunc != nullptr) *allocFunc = copy.alloc;
    if (freeFunc != nullptr) *freeFunc = copy.free;
    if (allocAdviseFunc != nullptr) *allocAdviseFunc = copy.allocAdvise;
    if (getAddrFromBlockFunc != nullptr) *getAddrFromBlockFunc = copy.getAddrFromBlock;
    return Status::Ok();
  });
}

aclError aclrtAllocatorUnregister(aclrtStream stream) {
  return apiCall("aclrtAllocatorUnregister", [&]() -> Outcome {
    if (stream == nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "aclrtAllocatorUnregister: stream "
                               "is null");
    }
    Allocators::get().forget(stream);
    return Status::Ok();
  });
}

// Host functions (aclrtLaunchHostFunc, aclrtSubscribeHostFunc ...). They go through
// the same hub as aclrtLaunchCallback (report_hub.h): a stream has one thread that
// runs its host code, whichever call subscribed it. A host function launched on a
// stream nobody subscribed runs on the stream's worker, the runtime's own thread.
#include <pthread.h>

#include "acl/entry_names.h"
#include "acl/report_hub.h"

namespace {

using cohort::acl::ReportHub;

}  // namespace

aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void* args) {
  const char* name = "aclrtLaunchHostFunc";
  return apiCall(name, [&]() -> Outcome {
    if (fn == nullptr) return nullArgument(name, "fn");
    ACL_RETURN_IF_FAILED(needStream(name, stream));
    Outcome handed = ReportHub::get().launch(fn, args, /*blocking=*/true, toStream(stream));
    if (handed.code != ACL_ERROR_STREAM_NOT_SUBSCRIBE) return handed;
    // Nobody subscribed: the worker runs it, and so later tasks wait for it.
    return rt::launchCallback(
        toStream(stream), [fn, args] { fn(args); }, rt::CallbackMode::kBlocking);
  });
}

aclError aclrtSubscribeHostFunc(uint64_t hostFuncThreadId, aclrtStream exeStream) {
  const char* name = "aclrtSubscribeHostFunc";
  return apiCall(name, [&]() -> Outcome {
    if (exeStream == nullptr) return nullArgument(name, "exeStream");
    return ReportHub::get().subscribe(hostFuncThreadId, toStream(exeStream));
  });
}

aclError aclrtProcessHostFunc(int32_t timeout) {
  const char* name = "aclrtProcessHostFunc";
  return apiCall(name, [&]() -> Outcome {
    if (timeout < -1) {
      return invalidArgument(name, "timeout {} ms is invalid (-1 waits forever, >= 0 ms)", timeout);
    }
    return ReportHub::get().process(static_cast<uint64_t>(pthread_self()), timeout);
  });
}

aclError aclrtUnSubscribeHostFunc(uint64_t hostFuncThreadId, aclrtStream exeStream) {
  const char* name = "aclrtUnSubscribeHostFunc";
  return apiCall(name, [&]() -> Outcome {
    if (exeStream == nullptr) return nullArgument(name, "exeStream");
    return ReportHub::get().unsubscribe(hostFuncThreadId, toStream(exeStream));
  });
}

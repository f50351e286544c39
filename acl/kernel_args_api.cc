// Argument lists of the binary path (aclrtKernelArgs*): built value by value or as
// placeholders for one function, in the runtime's memory or under a handle in the
// caller's, then finalized for aclrtLaunchKernelWithConfig (kernel_launch_api.cc).
#include <cstring>
#include <memory>

#include "acl/acl.h"
#include "acl/entry_names.h"
#include "acl/kernel_objects.h"

namespace {
using cohort::acl::kernels::Args;
using cohort::acl::kernels::Function;
using cohort::acl::kernels::argLists;
using cohort::acl::kernels::argsMemBytes;
using cohort::acl::kernels::findArgs;
using cohort::acl::kernels::findFunction;
using cohort::acl::kernels::kArgsHandleBytes;
}  // namespace

aclError aclrtKernelArgsInit(aclrtFuncHandle funcHandle, aclrtArgsHandle* argsHandle) {
  const char* fn = "aclrtKernelArgsInit";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<Function> f;
    COHORT_RETURN_IF_ERROR(findFunction(fn, funcHandle, &f));
    if (argsHandle == nullptr) return nullArgument(fn, "argsHandle");
    auto args = std::make_shared<Args>();
    args->function = std::move(f);
    *argsHandle = argLists().add(std::move(args));
    return Status::Ok();
  });
}

aclError aclrtKernelArgsGetHandleMemSize(aclrtFuncHandle funcHandle, size_t* memSize) {
  const char* fn = "aclrtKernelArgsGetHandleMemSize";
  return apiCall(fn, [&]() -> Outcome {
    COHORT_RETURN_IF_ERROR(findFunction(fn, funcHandle, nullptr));
    if (memSize == nullptr) return nullArgument(fn, "memSize");
    *memSize = kArgsHandleBytes;
    return Status::Ok();
  });
}

aclError aclrtKernelArgsGetMemSize(aclrtFuncHandle funcHandle, size_t userArgsSize,
                                   size_t* actualArgsSize) {
  const char* fn = "aclrtKernelArgsGetMemSize";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<Function> f;
    COHORT_RETURN_IF_ERROR(findFunction(fn, funcHandle, &f));
    if (actualArgsSize == nullptr) return nullArgument(fn, "actualArgsSize");
    *actualArgsSize = argsMemBytes(*f, userArgsSize);
    return Status::Ok();
  });
}

aclError aclrtKernelArgsInitByUserMem(aclrtFuncHandle funcHandle, aclrtArgsHandle argsHandle,
                                      void* userHostMem, size_t actualArgsSize) {
  const char* fn = "aclrtKernelArgsInitByUserMem";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<Function> f;
    COHORT_RETURN_IF_ERROR(findFunction(fn, funcHandle, &f));
    if (argsHandle == nullptr) return nullArgument(fn, "argsHandle");
    if (userHostMem == nullptr) return nullArgument(fn, "userHostMem");
    size_t bytes = 0;
    for (uint32_t i = 0; i < f->entry.paramCount; ++i) bytes += f->entry.paramSizes[i];
    const size_t needed = argsMemBytes(*f, bytes);
    if (actualArgsSize < needed) {
      return invalidArgument(fn,
                             "actualArgsSize {} is less than the {} bytes the arguments of {} "
                             "need (aclrtKernelArgsGetMemSize with userArgsSize {})",
                             actualArgsSize, needed, f->entry.name, bytes);
    }
    // The list is kept here; the caller's memory names it (and holds no bytes of it).
    auto args = std::make_shared<Args>();
    args->function = std::move(f);
    argLists().addAt(argsHandle, std::move(args));
    return Status::Ok();
  });
}

namespace {

// The list behind `argsHandle`, still open for parameters.
Outcome openList(const char* fn, aclrtArgsHandle argsHandle, std::shared_ptr<Args>* args) {
  COHORT_RETURN_IF_ERROR(findArgs(fn, argsHandle, args));
  if ((*args)->finalized) {
    return invalidArgument(fn, "the argument list of {} is finalized already",
                           (*args)->function->entry.name);
  }
  if ((*args)->params.size() >= (*args)->function->entry.paramCount) {
    return invalidArgument(fn, "{} takes {} parameters: the list is full",
                           (*args)->function->entry.name, (*args)->function->entry.paramCount);
  }
  return Status::Ok();
}

Outcome findParam(const char* fn, Args& args, aclrtParamHandle paramHandle, Args::Param** param,
                  size_t* index) {
  for (size_t i = 0; i < args.params.size(); ++i) {
    if (&args.params[i] == paramHandle) {
      *param = &args.params[i];
      *index = i;
      return Status::Ok();
    }
  }
  return cohort::makeError(ErrorCode::kInvalidHandle, "{}: {} is not a parameter of this list",
                           fn, paramHandle);
}

}  // namespace

aclError aclrtKernelArgsAppend(aclrtArgsHandle argsHandle, void* param, size_t paramSize,
                               aclrtParamHandle* paramHandle) {
  const char* fn = "aclrtKernelArgsAppend";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<Args> args;
    ACL_RETURN_IF_FAILED(openList(fn, argsHandle, &args));
    if (param == nullptr) return nullArgument(fn, "param");
    if (paramHandle == nullptr) return nullArgument(fn, "paramHandle");
    const size_t index = args->params.size();
    const uint32_t expected = args->function->entry.paramSizes[index];
    if (paramSize != expected) {
      return invalidArgument(fn, "parameter {} of {} has {} bytes, not paramSize {}", index,
                             args->function->entry.name, expected, paramSize);
    }
    Args::Param p;
    p.value.assign(static_cast<unsigned char*>(param),
                   static_cast<unsigned char*>(param) + paramSize);
    args->params.push_back(std::move(p));
    *paramHandle = &args->params.back();
    return Status::Ok();
  });
}

aclError aclrtKernelArgsAppendPlaceHolder(aclrtArgsHandle argsHandle,
                                          aclrtParamHandle* paramHandle) {
  const char* fn = "aclrtKernelArgsAppendPlaceHolder";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<Args> args;
    ACL_RETURN_IF_FAILED(openList(fn, argsHandle, &args));
    if (paramHandle == nullptr) return nullArgument(fn, "paramHandle");
    const size_t index = args->params.size();
    if (args->function->entry.paramSizes[index] != sizeof(void*)) {
      return invalidArgument(fn, "parameter {} of {} is not a pointer: no placeholder", index,
                             args->function->entry.name);
    }
    Args::Param p;
    p.placeholder = true;
    args->params.push_back(std::move(p));
    *paramHandle = &args->params.back();
    return Status::Ok();
  });
}

aclError aclrtKernelArgsGetPlaceHolderBuffer(aclrtArgsHandle argsHandle,
                                             aclrtParamHandle paramHandle, size_t dataSize,
                                             void** bufferAddr) {
  const char* fn = "aclrtKernelArgsGetPlaceHolderBuffer";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<Args> args;
    COHORT_RETURN_IF_ERROR(
        findArgs(fn, argsHandle, &args));
    if (bufferAddr == nullptr) return nullArgument(fn, "bufferAddr");
    if (dataSize == 0) return invalidArgument(fn, "dataSize is 0");
    Args::Param* p = nullptr;
    size_t index = 0;
    ACL_RETURN_IF_FAILED(findParam(fn, *args, paramHandle, &p, &index));
    if (!p->placeholder) return invalidArgument(fn, "parameter {} is not a placeholder", index);
    p->data.assign(dataSize, 0);
    *bufferAddr = p->data.data();
    return Status::Ok();
  });
}

aclError aclrtKernelArgsParaUpdate(aclrtArgsHandle argsHandle, aclrtParamHandle paramHandle,
                                   void* param, size_t paramSize) {
  const char* fn = "aclrtKernelArgsParaUpdate";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<Args> args;
    COHORT_RETURN_IF_ERROR(
        findArgs(fn, argsHandle, &args));
    if (param == nullptr) return nullArgument(fn, "param");
    Args::Param* p = nullptr;
    size_t index = 0;
    ACL_RETURN_IF_FAILED(findParam(fn, *args, paramHandle, &p, &index));
    if (p->placeholder || paramSize != p->value.size()) {
      return invalidArgument(fn, "parameter {} takes {} bytes, not {}", index,
                             p->placeholder ? 0 : p->value.size(), paramSize);
    }
    p->value.assign(static_cast<unsigned char*>(param),
                    static_cast<unsigned char*>(param) + paramSize);
    return Status::Ok();
  });
}

aclError aclrtKernelArgsFinalize(aclrtArgsHandle argsHandle) {
  const char* fn = "aclrtKernelArgsFinalize";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<Args> args;
    COHORT_RETURN_IF_ERROR(
        findArgs(fn, argsHandle, &args));
    const CohortKernelEntry& e = args->function->entry;
    if (args->params.size() != e.paramCount) {
      return invalidArgument(fn, "{} takes {} parameters, the list has {}", e.name, e.paramCount,
                             args->params.size());
    }
    for (size_t i = 0; i < args->params.size(); ++i) {
      if (args->params[i].placeholder && args->params[i].data.empty()) {
        return invalidArgument(fn, "placeholder {} of {} has no buffer "
                               "(aclrtKernelArgsGetPlaceHolderBuffer)", i, e.name);
      }
    }
    args->finalized = true;
    return Status::Ok();
  });
}


#include "acl/stream_attrs.h"

#include <vector>

#include "common/error.h"

namespace cohort::acl {

namespace rt = cohort::runtime;

namespace {

Status keyOf(aclrtStream stream, std::pair<int, int>* key) {
  rt::StreamDescription d;
  COHORT_RETURN_IF_ERROR(rt::streamDescribe(static_cast<rt::Stream*>(stream), &d));
  *key = {d.device, d.id};
  return Status::Ok();
}

}  // namespace

StreamAttrs& StreamAttrs::get() {
  static StreamAttrs* attrs = new StreamAttrs();  // never destroyed: streams outlive statics
  return *attrs;
}

StreamAttrs::StreamAttrs() {
  rt::setStreamObserver([this](rt::Stream* stream, bool created) { onStream(stream, created); });
}

void StreamAttrs::created(aclrtStream stream, std::uint32_t flags, std::uint32_t priority) {
  Key key;
  if (!keyOf(stream, &key).ok()) return;
  std::lock_guard<std::mutex> lock(mu_);
  StreamSettings& s = settings_[key];
  s = StreamSettings{};
  s.flags = flags;
  s.priority = priority;
}

Status StreamAttrs::read(aclrtStream stream, StreamSettings* out) {
  Key key;
  COHORT_RETURN_IF_ERROR(keyOf(stream, &key));
  std::lock_guard<std::mutex> lock(mu_);
  auto it = settings_.find(key);
  *out = it == settings_.end() ? StreamSettings{} : it->second;
  return Status::Ok();
}

Status StreamAttrs::update(aclrtStream stream, const std::function<void(StreamSettings&)>& change) {
  Key key;
  COHORT_RETURN_IF_ERROR(keyOf(stream, &key));
  std::lock_guard<std::mutex> lock(mu_);
  change(settings_[key]);
  return Status::Ok();
}

Outcome StreamAttrs::registerCallback(const char* name, aclrtStreamStateCallback callback,
                                      void* args) {
  const char* fn = "aclrtRegStreamStateCallback";
  if (name == nullptr || name[0] == '\0') {
    return makeError(ErrorCode::kInvalidArgument, "{}: regName is null or empty", fn);
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = callbacks_.find(name);
  if (callback == nullptr) {
    if (it == callbacks_.end()) {
      return makeError(ErrorCode::kInvalidArgument,
                       "{}: no callback is registered under \"{}\" to remove", fn, name);
    }
    callbacks_.erase(it);
    return Status::Ok();
  }
  if (it != callbacks_.end()) {
    return makeError(ErrorCode::kInvalidArgument,
                     "{}: a callback is already registered under \"{}\" (remove it first by "
                     "registering NULL)",
                     fn, name);
  }
  callbacks_[name] = Callback{callback, args};
  return Status::Ok();
}

void StreamAttrs::onStream(rt::Stream* stream, bool created) {
  std::vector<Callback> callbacks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!created) {
      Key key;
      if (keyOf(stream, &key).ok()) settings_.erase(key);
    }
    for (const auto& entry : callbacks_) callbacks.push_back(entry.second);
  }
  const aclrtStreamState state =
      created ? ACL_RT_STREAM_STATE_CREATE_POST : ACL_RT_STREAM_STATE_DESTROY_PRE;
  for (const Callback& c : callbacks) c.fn(stream, state, c.args);
}

}  // namespace cohort::acl

#include "ranktable/json_fields.h"

#include <fmt/format.h>

#include "ranktable/text_util.h"

namespace cohort::ranktable {

const char* jsonTypeName(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return "a number";
    case Json::value_t::binary:
      return "binary data";
    case Json::value_t::discarded:
      return "nothing";
  }
  return "an unknown value";
}

namespace {

std::string numberText(const Json& value) {
  if (value.is_number_unsigned()) return std::to_string(value.get<std::uint64_t>());
  if (value.is_number_integer()) return std::to_string(value.get<std::int64_t>());
  return value.dump();
}

}  // namespace

RawValue JsonFields::scalar(const Json& object, const std::string& pointer, const char* key,
                            bool required, const char* expected) const {
  RawValue out;
  out.location = at(pointer + "/" + key);
  const auto it = object.find(key);
  if (it == object.end()) {
    if (required) diagnostics_->error(Rule::kMissingKey, out.location, "(missing)", expected);
    return out;
  }
  out.keyFound = true;
  if (it->is_string()) {
    out.present = true;
    out.text = it->get<std::string>();
  } else if (it->is_number()) {
    out.present = true;
    out.text = numberText(*it);
    diagnostics_->warning(
        Rule::kNumberValue, out.location, out.text + " (a number)",
        fmt::format("a string such as {}, as HCCL writes it", quoteValue(out.text)));
  } else {
    diagnostics_->error(Rule::kWrongType, out.location, jsonTypeName(*it),
                        fmt::format("a string: {}", expected));
  }
  return out;
}

const Json* JsonFields::array(const Json& object, const std::string& pointer, const char* key,
                              bool required, const char* expected) const {
  const Location location = at(pointer + "/" + key);
  const auto it = object.find(key);
  if (it == object.end()) {
    if (required) diagnostics_->error(Rule::kMissingKey, location, "(missing)", expected);
    return nullptr;
  }
  if (!it->is_array()) {
    diagnostics_->error(Rule::kWrongType, location, jsonTypeName(*it),
                        fmt::format("an array: {}", expected));
    return nullptr;
  }
  return &*it;
}

bool JsonFields::isObject(const Json& value, const std::string& pointer,
                          const char* expected) const {
  if (value.is_object()) return true;
  diagnostics_->error(Rule::kWrongType, at(pointer), jsonTypeName(value),
                      fmt::format("an object: {}", expected));
  return false;
}

}  // namespace cohort::ranktable

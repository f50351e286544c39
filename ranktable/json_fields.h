// Reading rank table JSON values with diagnostics: a value of the wrong type or
// a missing key becomes an error with its JSON pointer; a number where HCCL
// writes a string is accepted with a warning.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "ranktable/raw_table.h"

namespace cohort::ranktable {

using Json = nlohmann::json;

/// The readers of one document share its diagnostics.
class JsonFields {
 public:
  explicit JsonFields(Diagnostics* diagnostics) : diagnostics_(diagnostics) {}

  Diagnostics* diagnostics() const { return diagnostics_; }

  /// object[key] as text. Absent: an error if `required` (expected says what to
  /// write). A number: its text and a warning. Any other type: an error.
  RawValue scalar(const Json& object, const std::string& pointer, const char* key, bool required,
                  const char* expected) const;

  /// object[key] when it is an array, else nullptr (with an error when it is
  /// absent and required, or of another type).
  const Json* array(const Json& object, const std::string& pointer, const char* key, bool required,
                    const char* expected) const;

  /// True when value is an object; else reports wrong-type at pointer.
  bool isObject(const Json& value, const std::string& pointer, const char* expected) const;

 private:
  Diagnostics* diagnostics_;
};

/// "a string", "an array"... for diagnostics.
const char* jsonTypeName(const Json& value);

/// A Location holding only a JSON pointer.
inline Location at(std::string pointer) { return Location{std::move(pointer), 0, 0}; }

/// Reads a "1.0" or "1.2" table (root is an object).
void readConciseTable(const Json& root, const std::string& version, const JsonFields& fields,
                      RawTable* table);
/// Reads the legacy template without version (root is an object).
void readLegacyTemplate(const Json& root, const JsonFields& fields, RawTable* table);

}  // namespace cohort::ranktable

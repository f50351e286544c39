// Small text helpers shared by the readers, the validator and the writers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cohort::ranktable {

/// A value as shown in a diagnostic: in double quotes, control characters and
/// bytes that are not UTF-8 escaped, long values cut ("...", then the length).
std::string quoteValue(std::string_view value);

/// Parses a decimal integer in [lo, hi]: digits only (no sign, no spaces).
bool parseBoundedInt(std::string_view text, long lo, long hi, int* out);

/// Offset of the first byte that is not part of valid UTF-8 (no overlong forms,
/// no surrogates, nothing above U+10FFFF), or npos when the text is valid.
std::size_t invalidUtf8Offset(std::string_view text);

/// Offset and code point of the first character of valid UTF-8 text that is not
/// printable in YAML's sense: C0 and C1 controls, DEL, U+FFFE, U+FFFF; tab, LF,
/// CR and NEL pass only when `allowLineBreaks`. npos when there is none.
std::size_t nonPrintableOffset(std::string_view utf8, bool allowLineBreaks,
                               std::uint32_t* codePoint);

/// Valid UTF-8 without any non-printable character (ids, names).
bool isPrintableText(std::string_view text);

/// "server" / "servers" after a count: "3 servers".
std::string countOf(std::size_t n, const char* singular, const char* plural);

}  // namespace cohort::ranktable

#include "ranktable/text_util.h"

#include <fmt/format.h>

namespace cohort::ranktable {

namespace {
constexpr std::size_t kMaxShown = 72;
}  // namespace

std::string quoteValue(std::string_view value) {
  std::string out = "\"";
  const std::size_t shown = value.size() > kMaxShown ? kMaxShown : value.size();
  std::size_t i = 0;
  while (i < shown) {
    const unsigned char c = static_cast<unsigned char>(value[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c >= 0x80) {
      // One whole UTF-8 character is copied; a byte that starts none is escaped.
      const std::size_t length = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
      if (invalidUtf8Offset(value.substr(i, length)) == std::string_view::npos) {
        out.append(value.substr(i, length));
        i += length;
        continue;
      }
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
    ++i;
  }
  out += '"';
  if (shown < value.size()) out += fmt::format("... ({} characters)", value.size());
  return out;
}

bool parseBoundedInt(std::string_view text, long lo, long hi, int* out) {
  if (text.empty() || text.size() > 10) return false;
  long value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  if (value < lo || value > hi) return false;
  *out = static_cast<int>(value);
  return true;
}

std::size_t invalidUtf8Offset(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    std::size_t length = 0;
    unsigned char low = 0x80;  // range of the second byte
    unsigned char high = 0xbf;
    if (c < 0x80) {
      length = 1;
    } else if (c >= 0xc2 && c <= 0xdf) {
      length = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      length = 3;
      if (c == 0xe0) low = 0xa0;   // overlong
      if (c == 0xed) high = 0x9f;  // surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      length = 4;
      if (c == 0xf0) low = 0x90;   // overlong
      if (c == 0xf4) high = 0x8f;  // above U+10FFFF
    } else {
      return i;
    }
    if (i + length > text.size()) return i;
    for (std::size_t k = 1; k < length; ++k) {
      const unsigned char next = static_cast<unsigned char>(text[i + k]);
      const unsigned char lo = k == 1 ? low : 0x80;
      const unsigned char hi = k == 1 ? high : 0xbf;
      if (next < lo || next > hi) return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

std::size_t nonPrintableOffset(std::string_view utf8, bool allowLineBreaks,
                               std::uint32_t* codePoint) {
  std::size_t i = 0;
  while (i < utf8.size()) {
    const unsigned char c = static_cast<unsigned char>(utf8[i]);
    const std::size_t length = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    std::uint32_t cp = length == 1 ? c : c & (0x7f >> length);
    for (std::size_t k = 1; k < length && i + k < utf8.size(); ++k) {
      cp = (cp << 6) | (static_cast<unsigned char>(utf8[i + k]) & 0x3f);
    }
    const bool lineBreak = cp == 0x09 || cp == 0x0a || cp == 0x0d || cp == 0x85;
    const bool printable = (allowLineBreaks && lineBreak) || (cp >= 0x20 && cp <= 0x7e) ||
                           (cp >= 0xa0 && cp <= 0xfffd) || cp >= 0x10000;
    if (!printable) {
      *codePoint = cp;
      return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

bool isPrintableText(std::string_view text) {
  std::uint32_t codePoint = 0;
  return invalidUtf8Offset(text) == std::string_view::npos &&
         nonPrintableOffset(text, false, &codePoint) == std::string_view::npos;
}

std::string countOf(std::size_t n, const char* singular, const char* plural) {
  return fmt::format("{} {}", n, n == 1 ? singular : plural);
}

}  // namespace cohort::ranktable

// FNV-1a, for names that must hash the same in every process and run (device UUIDs,
// job tokens, profiling ids): not for hash tables, nor against an adversary.
#pragma once

#include <cstdint>
#include <string_view>

namespace cohort {

inline constexpr std::uint64_t kFnv1aBasis = 0xcbf29ce484222325ull;

/// The 64-bit FNV-1a hash of `text`, from `basis` (another basis gives another,
/// independent-looking hash of the same text).
inline std::uint64_t fnv1a(std::string_view text, std::uint64_t basis = kFnv1aBasis) {
  std::uint64_t h = basis;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace cohort

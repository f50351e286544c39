#include "collective/tuning.h"

#include <fstream>
#include <limits>

#include "common/config.h"
#include "common/wait.h"

namespace cohort::collective {

namespace {

// The last-level cache: COHORT_CACHE_BYTES, or sysfs (32 MiB when it does not say).
std::size_t lastLevelCacheBytes() {
  if (Config::global().cacheBytes > 0) return Config::global().cacheBytes;
  std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index3/size");
  std::size_t value = 0;
  char unit = 0;
  if (!(in >> value) || value == 0) return 32 << 20;
  in >> unit;
  return unit == 'K' ? value << 10 : unit == 'M' ? value << 20 : value;
}

}  // namespace

Tuning Tuning::forNode(int ranksOnNode, long processors, std::size_t cacheBytes) {
  Tuning t;
  t.meshStreamingBytes = cacheBytes;
  t.crowded = moreThanProcessors(ranksOnNode, processors);
  if (!t.crowded) return t;
  // Every hand-off to another thread is a wait for a processor, and so is a
  // barrier: more runs pulled (TUNING.md, "crowded").
  t.ringChunkBytes = 256 << 10;
  t.meshPulledBroadcastMax = ranksOnNode > 2 * processors ? std::numeric_limits<std::size_t>::max()
                                                          : std::size_t{128} << 10;
  t.meshQuickLooks = 0;
  return t;
}

Tuning Tuning::forThisNode(int ranksOnNode) {
  static const std::size_t cache = lastLevelCacheBytes();
  return forNode(ranksOnNode, processors(), cache);
}

}  // namespace cohort::collective

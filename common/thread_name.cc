#include "common/thread_name.h"

#include <pthread.h>

namespace cohort {

void nameThisThread(const std::string& name) {
  // pthread_setname_np refuses a longer name (ERANGE) instead of cutting it.
  constexpr std::size_t kMax = 15;
  (void)pthread_setname_np(pthread_self(), name.substr(0, kMax).c_str());
}

}  // namespace cohort

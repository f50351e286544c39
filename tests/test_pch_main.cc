// The holder of the tests' precompiled header (tests/CMakeLists.txt): every test binary
// reuses the header compiled for this one, which runs no test of its own.
#include <gtest/gtest.h>

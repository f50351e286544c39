// Which CANN Cohort's ACL and HCCL layers implement. The number itself has one home,
// the top-level CMakeLists.txt's COHORT_CANN_VERSION, which also writes the install's
// version files (cmake/CohortCannLayout.cmake).
//
// Cohort's headers follow the public headers of hicann/runtime at snapshot 681ef761
// (2026-08-22), which build CANN's npu-runtime package 9.1.0 and declare AscendCL API
// version 1.17.0 (ACL_MAJOR_VERSION etc. in acl/acl_rt.h). Programs written for
// CANN 8.x (hccl_test was written for 8.1.RC1) use a subset of that API. Cohort's
// own version is COHORT_VERSION_STRING (cohort/version.h).
#pragma once

namespace cohort::acl {

/// What aclsysGetVersionStr reports for the "runtime", "cann" and "hccl" packages.
inline constexpr const char kCannVersion[] = COHORT_CANN_VERSION;

}  // namespace cohort::acl

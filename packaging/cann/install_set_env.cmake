# Install-time step (install(SCRIPT)) of the runtime component: writes set_env.sh
# with the prefix being installed to, the script's fallback in shells that cannot
# locate it, and installs it. COHORT_CANN_SET_ENV_IN (the template, with everything
# else already filled in) and COHORT_CANN_OUT come from the install(CODE) before it.
set(COHORT_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
# One file per destination, so that two installs to different prefixes never
# write the same file.
string(MD5 cohort_cann_tag "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
set(cohort_cann_script "${COHORT_CANN_OUT}/set_env-${cohort_cann_tag}/set_env.sh")
configure_file("${COHORT_CANN_SET_ENV_IN}" "${cohort_cann_script}" @ONLY)
file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}" TYPE FILE
     PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
     FILES "${cohort_cann_script}")

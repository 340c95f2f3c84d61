# Run by `cmake --install` (see refgate_install.cmake, which sets the REFGATE_* variables): installs
# deploy/systemd/refgate.service with ExecStart pointing at the installed binary.
if(IS_ABSOLUTE "${REFGATE_UNIT_DIR}")
  set(unit_dir "${REFGATE_UNIT_DIR}")
else()
  set(unit_dir "${CMAKE_INSTALL_PREFIX}/${REFGATE_UNIT_DIR}")
endif()
if(IS_ABSOLUTE "${REFGATE_INSTALL_BINDIR}")
  set(binary "${REFGATE_INSTALL_BINDIR}/refgate")
else()
  set(binary "${CMAKE_INSTALL_PREFIX}/${REFGATE_INSTALL_BINDIR}/refgate")
endif()
file(READ "${REFGATE_UNIT_SOURCE}" unit)
string(REPLACE "ExecStart=/usr/bin/refgate " "ExecStart=${binary} " unit "${unit}")
file(WRITE "${REFGATE_UNIT_STAGING}" "${unit}")
# file(INSTALL) adds DESTDIR and records the file in install_manifest.txt.
file(INSTALL DESTINATION "${unit_dir}" TYPE FILE PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
     FILES "${REFGATE_UNIT_STAGING}")

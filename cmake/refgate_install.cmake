# `cmake --install`: the binary, the systemd unit, an example settings file, the LICENSE and the
# monitoring files. SQL migrations need no files: they are compiled into the binary.
include(GNUInstallDirs)

set(REFGATE_SYSTEMD_UNIT_DIR "lib/systemd/system" CACHE STRING
    "Where refgate.service is installed: relative to the install prefix, or absolute")

install(TARGETS refgate RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The unit names the binary; its ExecStart is rewritten at install time, so that a prefix given
# to `cmake --install --prefix` is honoured too.
install(CODE "
  set(REFGATE_UNIT_SOURCE \"${PROJECT_SOURCE_DIR}/deploy/systemd/refgate.service\")
  set(REFGATE_UNIT_STAGING \"${PROJECT_BINARY_DIR}/install/refgate.service\")
  set(REFGATE_UNIT_DIR \"${REFGATE_SYSTEMD_UNIT_DIR}\")
  set(REFGATE_INSTALL_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
")
install(SCRIPT ${CMAKE_CURRENT_LIST_DIR}/install_systemd_unit.cmake)

install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_SOURCE_DIR}/deploy/systemd/refgate.env DESTINATION ${CMAKE_INSTALL_DOCDIR}
        RENAME refgate.env.example)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/prometheus/rules.yml
              ${PROJECT_SOURCE_DIR}/deploy/prometheus/prometheus.yml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/refgate/prometheus)
# The scanner networks and (when built) the ASN and country databases with their compact ranges: `serve` finds them in ../share/refgate
# beside its binary.
install(FILES ${PROJECT_SOURCE_DIR}/deploy/scanner-networks.txt
        DESTINATION ${CMAKE_INSTALL_DATADIR}/refgate)
if(REFGATE_ASN_DATABASE)
  install(FILES ${PROJECT_BINARY_DIR}/asn.mmdb ${PROJECT_BINARY_DIR}/asn.ranges DESTINATION ${CMAKE_INSTALL_DATADIR}/refgate)
endif()
if(REFGATE_COUNTRY_DATABASE)
  install(FILES ${PROJECT_BINARY_DIR}/country.mmdb ${PROJECT_BINARY_DIR}/country.ranges DESTINATION ${CMAKE_INSTALL_DATADIR}/refgate)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/deploy/grafana/refgate-dashboard.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/refgate/grafana)

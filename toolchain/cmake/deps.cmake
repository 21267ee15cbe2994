# Imported targets for every third-party library cachebox links.
# pkg-config for the packages that ship a .pc file; mbedTLS 2.28 and wslay ship
# none on Debian 12, so they are found with find_path/find_library.
find_package(PkgConfig REQUIRED)

pkg_check_modules(CJSON     REQUIRED IMPORTED_TARGET libcjson)
pkg_check_modules(SQLITE3   REQUIRED IMPORTED_TARGET sqlite3)
pkg_check_modules(SECP256K1 REQUIRED IMPORTED_TARGET libsecp256k1)
pkg_check_modules(MHD       REQUIRED IMPORTED_TARGET libmicrohttpd)
pkg_check_modules(CARES     REQUIRED IMPORTED_TARGET libcares)
if(CACHEBOX_WITH_POSTGRES)
  pkg_check_modules(PQ      REQUIRED IMPORTED_TARGET libpq)
endif()
if(CACHEBOX_TESTS)
  pkg_check_modules(CMOCKA  REQUIRED IMPORTED_TARGET cmocka)
endif()

function(cachebox_find_plain name header)
  cmake_parse_arguments(P "" "" "LIBS" ${ARGN})
  find_path(${name}_INCLUDE_DIR ${header} REQUIRED)
  set(libs "")
  foreach(l IN LISTS P_LIBS)
    find_library(${name}_${l}_LIBRARY ${l} REQUIRED)
    list(APPEND libs ${${name}_${l}_LIBRARY})
  endforeach()
  add_library(cachebox::${name} INTERFACE IMPORTED GLOBAL)
  target_include_directories(cachebox::${name} INTERFACE ${${name}_INCLUDE_DIR})
  target_link_libraries(cachebox::${name} INTERFACE ${libs})
endfunction()

# Order matters for static linking: tls depends on x509 depends on crypto.
cachebox_find_plain(mbedtls mbedtls/ssl.h LIBS mbedtls mbedx509 mbedcrypto)
cachebox_find_plain(wslay wslay/wslay.h LIBS wslay)

add_library(cachebox::pq INTERFACE IMPORTED GLOBAL)
if(CACHEBOX_WITH_POSTGRES)
  # Headers only: src/uplink/pg.c loads libpq.so.5 when a Postgres uplink
  # starts (dlopen), so a box without one never maps it.
  target_include_directories(cachebox::pq INTERFACE ${PQ_INCLUDE_DIRS})
  target_link_libraries(cachebox::pq INTERFACE ${CMAKE_DL_LIBS})
  target_compile_definitions(cachebox::pq INTERFACE CACHEBOX_WITH_POSTGRES=1)
endif()

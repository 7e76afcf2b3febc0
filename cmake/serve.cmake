# pairsight serve (src/serve): HTTP on libmicrohttpd (Debian libmicrohttpd-dev,
# which brings GnuTLS for TLS). It is a front end: it includes only
# include/pairsight.h and its own headers, and links the library like any
# other program.
find_package(PkgConfig REQUIRED)
pkg_check_modules(MHD REQUIRED IMPORTED_TARGET libmicrohttpd>=0.9.71)
file(GLOB PS_SERVE_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/serve/*.c)
add_library(pairsight_serve STATIC ${PS_SERVE_SOURCES})
target_include_directories(pairsight_serve PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(pairsight_serve PUBLIC pairsight PkgConfig::MHD Threads::Threads)
if(OpenMP_C_FOUND)
  target_link_libraries(pairsight_serve PRIVATE OpenMP::OpenMP_C)
endif()

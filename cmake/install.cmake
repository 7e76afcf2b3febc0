# What `cmake --install build --prefix P` puts in place (README "Install"):
#   P/bin/pairsight, P/include/pairsight.h (+ pairsight_core.h, _collect, _eval, _colocate, _overlap),
#   P/lib/libpairsight.so.0 (+ the .so link) and P/lib/libpairsight.a,
#   P/lib/pkgconfig/pairsight.pc (+ pairsight-libdir.pc, and for --static the
#   link P/lib/pairsight/static/libpairsight.a), P/lib/cmake/pairsight/ (pairsight::pairsight),
#   P/share/man/man1/pairsight.1 and P/share/bash-completion/completions/pairsight
#   (both generated from the CLI's own help texts by cmake/gen_docs.sh),
#   and P/lib/pairsight/libpairsight_cuda.so where the CUDA module is built.
# Every path is relative to the prefix, so that --prefix at install time works.

include(CMakePackageConfigHelpers)

set_target_properties(pairsight_shared PROPERTIES EXPORT_NAME pairsight)
set_target_properties(pairsight PROPERTIES EXPORT_NAME pairsight_static)
install(TARGETS pairsight_shared pairsight EXPORT pairsightTargets
  LIBRARY DESTINATION lib ARCHIVE DESTINATION lib RUNTIME DESTINATION bin
  INCLUDES DESTINATION include)
install(TARGETS pairsight_cli RUNTIME DESTINATION bin)
# pairsight.h is the umbrella of the headers of each audience (docs/ARCHITECTURE.md);
# pairsight_serve.h is the server's, which is not installed.
foreach(h pairsight pairsight_core pairsight_collect pairsight_eval pairsight_colocate pairsight_overlap)
  install(FILES ${PROJECT_SOURCE_DIR}/include/${h}.h DESTINATION include)
endforeach()

# pkg-config: the shared library needs nothing more at link time; a static
# link (pkg-config --static) takes the private dependencies.
set(PS_PC_REQUIRES_PRIVATE "xgboost sqlite3 libcjson openblas zlib")
set(PS_PC_LIBS_PRIVATE "-lpthread -lm")
if(CMAKE_DL_LIBS)
  string(APPEND PS_PC_LIBS_PRIVATE " -l${CMAKE_DL_LIBS}")
endif()
set(PS_FIND_OPENMP "")
if(OpenMP_C_FOUND)
  string(APPEND PS_PC_LIBS_PRIVATE " ${OpenMP_C_FLAGS}")
  set(PS_FIND_OPENMP "find_dependency(OpenMP)")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/pairsight.pc.in ${PROJECT_BINARY_DIR}/pairsight.pc @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/pairsight-libdir.pc.in ${PROJECT_BINARY_DIR}/pairsight-libdir.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pairsight.pc ${PROJECT_BINARY_DIR}/pairsight-libdir.pc
  DESTINATION lib/pkgconfig)
# P/lib/pairsight/static/libpairsight.a -> ../../libpairsight.a: a folder
# with no libpairsight.so, which pkg-config --static puts first.
install(CODE "set(d \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/pairsight/static\")
  file(MAKE_DIRECTORY \"\${d}\")
  file(CREATE_LINK ../../libpairsight.a \"\${d}/libpairsight.a\" SYMBOLIC)")

install(EXPORT pairsightTargets NAMESPACE pairsight:: DESTINATION lib/cmake/pairsight)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/pairsightConfig.cmake.in
  ${PROJECT_BINARY_DIR}/pairsightConfig.cmake INSTALL_DESTINATION lib/cmake/pairsight)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pairsightConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pairsightConfig.cmake
  ${PROJECT_BINARY_DIR}/pairsightConfigVersion.cmake DESTINATION lib/cmake/pairsight)

# The man page and the bash completion, generated from `pairsight --help` and
# `pairsight help CMD` each time the CLI is rebuilt, so they cannot drift.
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/pairsight.1 ${PROJECT_BINARY_DIR}/pairsight.bash
  COMMAND sh ${PROJECT_SOURCE_DIR}/cmake/gen_docs.sh $<TARGET_FILE:pairsight_cli>
    ${PROJECT_BINARY_DIR}/pairsight.1 ${PROJECT_BINARY_DIR}/pairsight.bash
  DEPENDS pairsight_cli ${PROJECT_SOURCE_DIR}/cmake/gen_docs.sh
  COMMENT "Generating pairsight.1 and the bash completion from the CLI's help")
add_custom_target(pairsight_docs ALL DEPENDS ${PROJECT_BINARY_DIR}/pairsight.1
  ${PROJECT_BINARY_DIR}/pairsight.bash)
install(FILES ${PROJECT_BINARY_DIR}/pairsight.1 DESTINATION share/man/man1)
install(FILES ${PROJECT_BINARY_DIR}/pairsight.bash DESTINATION share/bash-completion/completions
  RENAME pairsight)

# install.cmake — what `cmake --install` (and `make install`) puts under the prefix:
#   bin/graphmem                               the command
#   <libdir>/libgraphmem.a                     the library (static: see below)
#   include/graphmem/*.h                       the public headers, and nothing from src/
#   share/man/man1/graphmem.1                  the manual page
#   <libdir>/pkgconfig/graphmem.pc             pkg-config (generated at install time: right prefix)
#   <libdir>/cmake/graphmem/                   find_package(graphmem): graphmem::graphmem
#   share/doc/graphmem/examples/               the example program and its CMake project
#
# The library is installed static only. A shared libgraphmem would fix an ABI this version does
# not have: the public structs (gm_plan, gm_plan_options, gm_pass_report...) grow fields from one
# release to the next, and every internal function is visible (no export map yet). The static
# library carries its link needs instead: cJSON, protobuf-c, threads, libm and, when the CUDA
# backend is built, the CUDA runtime, in the .pc file's Requires.private/Libs.private (so
# `pkg-config --static`) and as the exported target's link interface. A library built with
# sanitizers needs their runtime at link time: that goes into both too.
include(CMakePackageConfigHelpers)

set(GM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/graphmem)

install(TARGETS graphmem EXPORT graphmemTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS graphmem_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The command is linked with its install RPATH from the start: the directories of the shared
# libraries it links outside the build tree (the CUDA runtime's), so the installed command finds
# libcudart wherever ld.so does not look. Rewriting the build RPATH at install instead fails on
# this toolchain: CMake expects the trailing ':' it passed to the linker, which ld 2.40 drops.
set_target_properties(graphmem_cli PROPERTIES BUILD_WITH_INSTALL_RPATH ON INSTALL_RPATH_USE_LINK_PATH ON)
file(GLOB GM_PUBLIC_HEADERS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/include/graphmem/*.h)
install(FILES ${GM_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/graphmem)
install(FILES ${CMAKE_SOURCE_DIR}/docs/graphmem.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_SOURCE_DIR}/examples/plan_model.c ${CMAKE_SOURCE_DIR}/examples/CMakeLists.txt
              ${CMAKE_SOURCE_DIR}/examples/README.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

# Sanitizer runtimes: only consumers of the installed library need them spelled out (in the
# tree, add_link_options already links every program with them).
set(GM_PKG_SANITIZE "")
if(GM_SANITIZE)
  set(GM_PKG_SANITIZE -fsanitize=address,undefined)
elseif(GM_TSAN)
  set(GM_PKG_SANITIZE -fsanitize=thread)
endif()
if(GM_PKG_SANITIZE)
  target_link_options(graphmem INTERFACE $<INSTALL_INTERFACE:${GM_PKG_SANITIZE}>)
endif()
# The CUDA kernels are C++ objects (nvcc): a consumer that does not enable CUDA itself, and so
# does not get CMake's CUDA link line, needs the C++ runtime named.
if(GM_HAVE_CUDA)
  target_link_libraries(graphmem INTERFACE $<INSTALL_INTERFACE:stdc++>)
endif()

# ---- CMake package ------------------------------------------------------------------------
install(EXPORT graphmemTargets NAMESPACE graphmem:: DESTINATION ${GM_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/graphmemConfig.cmake.in
  ${CMAKE_BINARY_DIR}/graphmemConfig.cmake INSTALL_DESTINATION ${GM_CMAKE_DIR})
# 0.x: a minor release may change the API, so only the same minor version is compatible.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/graphmemConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/graphmemConfig.cmake ${CMAKE_BINARY_DIR}/graphmemConfigVersion.cmake
        DESTINATION ${GM_CMAKE_DIR})

# ---- pkg-config ---------------------------------------------------------------------------
# Everything but the prefix is known now; the prefix only at install time (cmake --install
# --prefix overrides CMAKE_INSTALL_PREFIX), so the file is generated in two steps.
set(GM_PC_LIBS_PRIVATE "-pthread -lm")
if(GM_HAVE_CUDA)
  # The kernels are C++ objects compiled by nvcc: they also need the C++ runtime.
  string(APPEND GM_PC_LIBS_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart -lstdc++")
endif()
if(GM_PKG_SANITIZE)
  string(APPEND GM_PC_LIBS_PRIVATE " ${GM_PKG_SANITIZE}")
endif()
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(GM_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(GM_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
set(GM_PC_PREFIX "@GM_PC_PREFIX@") # left for the install step
configure_file(${CMAKE_SOURCE_DIR}/cmake/graphmem.pc.in ${CMAKE_BINARY_DIR}/graphmem.pc.stage @ONLY)
install(CODE "
  set(GM_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${CMAKE_BINARY_DIR}/graphmem.pc.stage\" \"${CMAKE_BINARY_DIR}/graphmem.pc\" @ONLY)
")
install(FILES ${CMAKE_BINARY_DIR}/graphmem.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

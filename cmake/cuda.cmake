# The collector's CUDA backend (src/collect/*.cu, *_cuda.c, *_cuda.cpp), built
# when PS_CUDA is on. PS_CUDA defaults to ON where nvcc is found, so a machine
# with the CUDA toolkit builds the GPU path even without a GPU (it compiles for
# CMAKE_CUDA_ARCHITECTURES; the device commands then fail with a message and
# the device tests skip).
#
# The backend is a loadable module, libpairsight_cuda.so, written beside the
# CLI; the pairsight library links no CUDA library and dlopen()s the module
# (src/collect/module.c) only when a device backend is opened, so that
# `pairsight --version`, the host commands and the tests load none of the
# ~230 MB of cuBLAS/cuDNN/CUPTI, and run where those are missing.
#
# The driver library (libcuda) is not linked even by the module: the backend
# takes its driver entry points from the CUDA runtime
# (cudaGetDriverEntryPointByVersion), so that the module loads on machines
# that have the toolkit but no driver and reports that instead.

# dlopen (in libc since glibc 2.34; libdl before) is in PS_PRIVATE_LIBS.

set(_ps_nvcc "")
if(EXISTS /usr/local/cuda/bin/nvcc)
  set(_ps_nvcc /usr/local/cuda/bin/nvcc)
else()
  find_program(_ps_nvcc_found nvcc)
  if(_ps_nvcc_found)
    set(_ps_nvcc ${_ps_nvcc_found})
  endif()
endif()

if(_ps_nvcc)
  option(PS_CUDA "Build the collector's CUDA backend" ON)
else()
  option(PS_CUDA "Build the collector's CUDA backend" OFF)
endif()

if(PS_CUDA)
  if(NOT _ps_nvcc)
    message(FATAL_ERROR "PS_CUDA is ON but no nvcc was found (/usr/local/cuda/bin/nvcc or PATH)")
  endif()
  if(NOT CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_COMPILER ${_ps_nvcc})
  endif()
  if(NOT CMAKE_CUDA_ARCHITECTURES)
    # A100 (8.0) and H100/H200 (9.0); override with -DCMAKE_CUDA_ARCHITECTURES.
    set(CMAKE_CUDA_ARCHITECTURES "80;90")
  endif()
  enable_language(CXX)
  enable_language(CUDA)
  set(CMAKE_CXX_STANDARD 17)
  set(CMAKE_CUDA_STANDARD 17)
  find_package(CUDAToolkit REQUIRED)

  file(GLOB PS_CUDA_SOURCES CONFIGURE_DEPENDS
    ${PROJECT_SOURCE_DIR}/src/collect/*.cu
    ${PROJECT_SOURCE_DIR}/src/collect/*_cuda.c
    ${PROJECT_SOURCE_DIR}/src/collect/*_cuda.cpp)
  add_library(pairsight_cuda MODULE ${PS_CUDA_SOURCES})
  set_target_properties(pairsight_cuda PROPERTIES
    PREFIX lib
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}
    CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}"
    CUDA_SEPARABLE_COMPILATION OFF
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_include_directories(pairsight_cuda PRIVATE ${PROJECT_SOURCE_DIR}/include
    ${PROJECT_SOURCE_DIR}/src ${CUDAToolkit_INCLUDE_DIRS})
  # The project's flags (-Wall -Wextra -Werror, sanitizers) are gcc flags:
  # keep them for C and C++ and give nvcc its own, with warnings as errors
  # for its host and device passes alike.
  get_target_property(_ps_opts pairsight_cuda COMPILE_OPTIONS)
  if(_ps_opts)
    set(_ps_wrapped "")
    foreach(_o IN LISTS _ps_opts)
      list(APPEND _ps_wrapped "$<$<COMPILE_LANGUAGE:C,CXX>:${_o}>")
    endforeach()
    set_property(TARGET pairsight_cuda PROPERTY COMPILE_OPTIONS ${_ps_wrapped})
  endif()
  target_compile_options(pairsight_cuda PRIVATE
    "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra;-Werror=all-warnings>")
  # Every symbol the module uses must resolve in the module or its CUDA
  # libraries: it takes the host's helpers through module.h's table only.
  target_link_options(pairsight_cuda PRIVATE -Wl,--no-undefined)

  find_library(PS_CUDNN_LIB cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} REQUIRED)
  find_library(PS_NVPERF_HOST_LIB nvperf_host HINTS ${CUDAToolkit_LIBRARY_DIR})
  target_link_libraries(pairsight_cuda PRIVATE CUDA::cudart_static CUDA::cublas CUDA::cublasLt
    ${PS_CUDNN_LIB} CUDA::cupti)
  if(PS_NVPERF_HOST_LIB)
    target_link_libraries(pairsight_cuda PRIVATE ${PS_NVPERF_HOST_LIB})
  endif()
  # Whatever links pairsight (the CLI, tests, benchmarks) finds the module
  # beside it, built.
  add_dependencies(pairsight_obj pairsight_cuda)
  # Installed, the module goes where the loader looks from bin/pairsight
  # (../lib/pairsight/), and keeps finding the CUDA libraries it was built with.
  set_target_properties(pairsight_cuda PROPERTIES INSTALL_RPATH "${CUDAToolkit_LIBRARY_DIR}")
  get_filename_component(_ps_cudnn_dir ${PS_CUDNN_LIB} DIRECTORY)
  if(NOT "${_ps_cudnn_dir}" STREQUAL "${CUDAToolkit_LIBRARY_DIR}")
    set_property(TARGET pairsight_cuda APPEND PROPERTY INSTALL_RPATH "${_ps_cudnn_dir}")
  endif()
  install(TARGETS pairsight_cuda LIBRARY DESTINATION lib/pairsight)
  # The host's messages say the module was built and how to point at it.
  target_compile_definitions(pairsight_obj PRIVATE PS_HAVE_CUDA=1)
  message(STATUS "pairsight: CUDA collector ON as module libpairsight_cuda.so "
                 "(nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
else()
  message(STATUS "pairsight: CUDA collector OFF (no nvcc or -DPS_CUDA=OFF); "
                 "`pairsight collect` device actions will say so")
endif()

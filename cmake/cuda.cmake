# The collector's CUDA backend (src/collect/*.cu, *_cuda.c, *_cuda.cpp), built
# when PS_CUDA is on. PS_CUDA defaults to ON where nvcc is found, so a machine
# with the CUDA toolkit builds the GPU path even without a GPU (it compiles for
# CMAKE_CUDA_ARCHITECTURES; the device commands then fail with a message and
# the device tests skip).
#
# The driver library (libcuda) is not linked: the backend takes its driver
# entry points from the CUDA runtime (cudaGetDriverEntryPointByVersion), so
# that pairsight and its tests load on machines that have the toolkit but no
# driver. cuBLAS, cuBLASLt, cuDNN and CUPTI do not need the driver to load.

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
    ${CMAKE_SOURCE_DIR}/src/collect/*.cu
    ${CMAKE_SOURCE_DIR}/src/collect/*_cuda.c
    ${CMAKE_SOURCE_DIR}/src/collect/*_cuda.cpp)
  target_sources(pairsight PRIVATE ${PS_CUDA_SOURCES})
  # pairsight was created before CUDA was enabled: set what CMake would have.
  set_property(TARGET pairsight PROPERTY CUDA_ARCHITECTURES ${CMAKE_CUDA_ARCHITECTURES})
  set_property(TARGET pairsight PROPERTY CUDA_SEPARABLE_COMPILATION OFF)
  target_compile_definitions(pairsight PUBLIC PS_HAVE_CUDA=1)
  target_include_directories(pairsight PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  # The project's flags (-Wall -Wextra -Werror, sanitizers) are gcc flags:
  # keep them for C and C++ and give nvcc its own, with warnings as errors
  # for its host and device passes alike.
  get_target_property(_ps_opts pairsight COMPILE_OPTIONS)
  if(_ps_opts)
    set(_ps_wrapped "")
    foreach(_o IN LISTS _ps_opts)
      list(APPEND _ps_wrapped "$<$<COMPILE_LANGUAGE:C,CXX>:${_o}>")
    endforeach()
    set_property(TARGET pairsight PROPERTY COMPILE_OPTIONS ${_ps_wrapped})
  endif()
  target_compile_options(pairsight PRIVATE
    "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra;-Werror=all-warnings>")

  find_library(PS_CUDNN_LIB cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} REQUIRED)
  find_library(PS_NVPERF_HOST_LIB nvperf_host HINTS ${CUDAToolkit_LIBRARY_DIR})
  target_link_libraries(pairsight PUBLIC CUDA::cudart_static CUDA::cublas CUDA::cublasLt
    ${PS_CUDNN_LIB} CUDA::cupti)
  if(PS_NVPERF_HOST_LIB)
    target_link_libraries(pairsight PUBLIC ${PS_NVPERF_HOST_LIB})
  endif()
  message(STATUS "pairsight: CUDA collector ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, "
                 "architectures ${CMAKE_CUDA_ARCHITECTURES})")
else()
  message(STATUS "pairsight: CUDA collector OFF (no nvcc or -DPS_CUDA=OFF); "
                 "`pairsight collect` device actions will say so")
endif()

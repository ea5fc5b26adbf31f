# Optional cuDNN baseline for the grader and benchmarks.
#
# include() this from grader/CMakeLists.txt after find_package(CUDAToolkit)
# and find_package(CUDNN); it does nothing when cuDNN was not found (the
# caller says so in the configure output). Paths are taken relative to this
# file, so it works whichever directory includes it.
#
# Defines:
#   convlab_cudnn (alias convlab::cudnn)  static library, CONVLAB_HAVE_CUDNN=1
#                                         (uses convlab::options if defined)
#   convlab_cudnn_tests                   GoogleTest binary, tests named
#                                         grader.cudnn.*, labelled grader;gpu;
#                                         built when GTest::gtest_main exists
#                                         and BUILD_TESTING is not OFF.

if(CUDNN_FOUND AND TARGET CUDNN::cudnn)
  # The anchor is a complete cuDNN pipeline, the answer to lab 06's conv_cudnn slot: a student
  # copy holds it compiled only (cmake/ConvlabPrebuilt.cmake), and none when the release was made
  # without cuDNN.
  set(convlab_cudnn_scope PUBLIC)
  if(EXISTS "${CMAKE_CURRENT_LIST_DIR}/device/src/cudnn_conv.cpp")
    add_library(convlab_cudnn STATIC "${CMAKE_CURRENT_LIST_DIR}/device/src/cudnn_conv.cpp")
    set_target_properties(convlab_cudnn PROPERTIES OPTIMIZE_DEPENDENCIES ON)  # `convlab release` builds it alone
    if(TARGET convlab::options)
      target_link_libraries(convlab_cudnn PRIVATE convlab::options)
    endif()
  else()
    set(convlab_cudnn_scope INTERFACE)  # an imported library takes usage requirements only
    convlab_prebuilt_library(convlab_cudnn OPTIONAL)
    if(NOT convlab_cudnn_PREBUILT_FOUND)
      message(STATUS "convlab: this copy holds no prebuilt cuDNN anchor (its release was made without cuDNN) — "
                     "cuDNN comparisons disabled")
      return()
    endif()
  endif()
  add_library(convlab::cudnn ALIAS convlab_cudnn)
  target_include_directories(convlab_cudnn ${convlab_cudnn_scope} "${CMAKE_CURRENT_LIST_DIR}/device/include")
  target_compile_features(convlab_cudnn ${convlab_cudnn_scope} cxx_std_17)
  target_compile_definitions(convlab_cudnn ${convlab_cudnn_scope} CONVLAB_HAVE_CUDNN=1)
  target_link_libraries(convlab_cudnn ${convlab_cudnn_scope} CUDA::cudart CUDNN::cudnn)

  if(TARGET GTest::gtest_main AND (NOT DEFINED BUILD_TESTING OR BUILD_TESTING))
    include(GoogleTest)
    add_executable(convlab_cudnn_tests "${CMAKE_CURRENT_LIST_DIR}/tests/test_cudnn_conv.cpp")
    target_link_libraries(convlab_cudnn_tests PRIVATE convlab::cudnn GTest::gtest_main)
    if(TARGET convlab::options)
      target_link_libraries(convlab_cudnn_tests PRIVATE convlab::options)
    endif()
    # - LABELS once per label: gtest_discover_tests flattens PROPERTIES, so
    #   LABELS "grader;gpu" would lose "gpu" (CMake issue 17812); CTest
    #   appends repeated LABELS.
    # - No SKIP_REGULAR_EXPRESSION here: gtest_discover_tests already sets
    #   "\\[  SKIPPED \\]" itself (3.25 and 4.x), and CMake 4.4 wraps each
    #   property in [[...]], so a value ending in "]" breaks the generated
    #   file ("Argument not separated from preceding token").
    # - NO_PRETTY_VALUES keeps "# GetParam() = <bytes>" out of CTest names.
    # - PRE_TEST: listing the tests loads libcudnn; do it at ctest time.
    gtest_discover_tests(convlab_cudnn_tests
      TEST_PREFIX "grader.cudnn."
      DISCOVERY_MODE PRE_TEST
      NO_PRETTY_VALUES
      PROPERTIES LABELS grader LABELS gpu)
  endif()
endif()

# convlab_add_lab(TESTS <files> [BENCHMARK <file>] [SM90A])
#
# Called once from labs/NN-slug/CMakeLists.txt. Reads the lab's grading spec
# (labs/NN-slug/grading.json) for its id, its kernel files and its time limits,
# so that no number is written twice. It builds:
#
#   <lab>_graders          the judge: the tests, the golden models, the records, and no
#                          student code; CTest tests <lab>.correctness.*, <lab>.speedup.*,
#                          <lab>.cpu.*. It starts a runner for the kernels (see
#                          grader/judge/include/convlab/remote.hpp).
#   <lab>_runner           the runner: CONVLAB_IMPL's kernels (starter_code/NN-slug or
#                          reference/NN-slug), the harness's runner library and the lab's
#                          remote_<lab>.cpp table
#   <lab>_bench            the benchmark (BENCHMARK), not a test
# and with CONVLAB_SELFTEST (the same judge, other runners):
#   <lab>_runner_starter   the untouched starter; each test selftest.starter.<grader test>
#                          passes only if that grader FAILS (an assertion, not a crash)
#   <lab>_runner_mutant_<name>
#                          the reference with one planted bug
#                          (reference/NN-slug/mutants/mutants.json, applied as a
#                          find/replace on the reference at configure time); the test
#                          selftest.mutant.<lab>.<name> passes only if a grader
#                          fails with the expected message ('expect'; on the CPU
#                          backend 'expect_cpu' if given, with AddressSanitizer
#                          'expect_asan' if given; with AddressSanitizer only the
#                          mutants that have one, unless CONVLAB_ASAN_ALL_MUTANTS).
#                          A mutant may name the backends
#                          that catch it for certain ("backends": ["cpu"]), or live
#                          in the sm_90a code ("sm90a": true, SM90A below); speed
#                          mutants are left out on the CPU backend.
# SM90A: every variant's kernels are built for sm_90a where the architectures hold 90 (Hopper's
# wgmma: convlab_cuda_sm90a() below), and their technique facts read from that code's PTX.
# convlab_cuda_sources(<target> [UNCOUNTED] <files.cu>...)
#
# Adds CUDA sources to a target for the configured backend: compiled by nvcc
# (CONVLAB_BACKEND=cuda), or rewritten by cu2cpp into C++ and compiled by the
# host compiler (CONVLAB_BACKEND=cpu; a #line directive keeps compiler and
# sanitizer messages pointing at the .cu file).
#
# On the CPU backend the files are also built to count their kernels' memory
# accesses (convlab_cpu/records.hpp): GCC's -fsanitize=thread instrumentation calls
# the CPU runtime for every load, store and atomic; no ThreadSanitizer runtime is
# linked (the CPU runtime defines the __tsan_* functions). UNCOUNTED leaves that out
# (the harness's own kernels: baselines, helpers), and so does a build with
# AddressSanitizer, which cannot be combined with it, and -DCONVLAB_CPU_COUNTING=OFF
# (the records then say that counts are unavailable).
set(CONVLAB_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}")  # this folder, for the scripts the rules below run

# convlab_cuda_sm90a(<target>)
#
# <target>'s CUDA code built for sm_90a, Hopper's architecture-specific target (wgmma,
# convlab/wgmma.hpp), in place of 90 where the build's architectures hold it (90, 90-real,
# 90-virtual; "native" on a GPU of compute capability 9.0); the others stay. It becomes 90a-real,
# without compute_90 PTX: on a GPU of compute capability 9.0 what runs is then the sm_90a code, or
# a just-in-time compilation of an older target's PTX, which convlab::wgmma::loaded() tells apart.
# Defines CONVLAB_SM90A for <target>'s sources where it did; does nothing on the CPU backend,
# with a toolkit before CUDA 12, or with "all", "all-major" or no architectures.
function(convlab_cuda_sm90a target)
  if(NOT CONVLAB_BACKEND STREQUAL "cuda" OR CMAKE_CUDA_COMPILER_VERSION VERSION_LESS 12.0)
    return()
  endif()
  set(archs ${CMAKE_CUDA_ARCHITECTURES})
  if(archs STREQUAL "native" AND CMAKE_CUDA_ARCHITECTURES_NATIVE)
    set(archs ${CMAKE_CUDA_ARCHITECTURES_NATIVE})
  endif()
  set(mapped "")
  set(found FALSE)
  foreach(a IN LISTS archs)
    if(a MATCHES "^90a?(-real|-virtual)?$")
      if(NOT found)
        list(APPEND mapped 90a-real)
      endif()
      set(found TRUE)
    elseif(a MATCHES "^[0-9]+[a-z]?(-real|-virtual)?$")
      list(APPEND mapped "${a}")
    else()
      return()  # all, all-major, native without a GPU, OFF: left as they are
    endif()
  endforeach()
  if(found)
    set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${mapped}")
    target_compile_definitions(${target} PRIVATE CONVLAB_SM90A=1)
  endif()
endfunction()

function(convlab_cuda_sources target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "UNCOUNTED" "" "")
  set(files ${ARG_UNPARSED_ARGUMENTS})
  if(CONVLAB_BACKEND STREQUAL "cuda")
    target_sources(${target} PRIVATE ${files})
    return()
  endif()
  set(count_accesses OFF)
  if(NOT ARG_UNCOUNTED AND NOT CONVLAB_SANITIZE STREQUAL "address" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU"
     AND (NOT DEFINED CONVLAB_CPU_COUNTING OR CONVLAB_CPU_COUNTING))
    set(count_accesses ON)
  endif()
  foreach(src IN LISTS files)
    get_filename_component(abs "${src}" ABSOLUTE)
    get_filename_component(stem "${src}" NAME_WE)
    set(out "${CMAKE_CURRENT_BINARY_DIR}/cpu_backend/${target}/${stem}.cpp")
    add_custom_command(OUTPUT "${out}"
      COMMAND convlab_cu2cpp "${abs}" "${out}"
      DEPENDS "${abs}" convlab_cu2cpp
      COMMENT "cu2cpp: ${src} for the CPU backend" VERBATIM)
    target_sources(${target} PRIVATE "${out}")
    if(count_accesses)
      # Not -fsanitize=kernel-address: its optimiser drops the check of a store to an address
      # just loaded (out[i] += x would count no store). No calls at function entry and exit.
      set_source_files_properties("${out}" PROPERTIES
        COMPILE_OPTIONS "-fsanitize=thread;--param=tsan-instrument-func-entry-exit=0"
        COMPILE_DEFINITIONS CONVLAB_CPU_COUNT_ACCESSES=1)
    endif()
  endforeach()
  target_link_libraries(${target} PUBLIC convlab::cuda_runtime)
endfunction()

# ---- the symbol fence (grader/fence; docs/grading.md, "The symbol fence") ----------------
# _convlab_fence(<kernels> <runner> <spec> <runner_obj> [TEST <name>])
#
# Runs convlab_fence on the kernels library <kernels> once it is built: what the
# kernels reference, define and run before main must be allowed for the lab
# (<spec>'s "fence" section and the common list), or the build fails with one line
# per finding. The kernels run inside <runner>, next to the code that uploads, launches,
# times and compares for the judge; <runner> depends on the fence, so neither
# `cmake --build` nor `convlab check` builds a runner around refused kernels. TEST also
# registers a CTest test that runs it, so that ctest shows the verdict too. The runner's
# own code (<runner_obj>, the runner library, the lab-side libraries (harness_cuda, device_cuda,
# bench_cuda, baselines, harness, report, device, bench, protocol), the CPU runtime, and any
# file a lab appends to the runner's CONVLAB_FENCE_HARNESS property) is given to it: the
# kernels may not define a name it defines.
function(_convlab_fence kernels runner spec runner_obj)
  cmake_parse_arguments(F "" "TEST" "" ${ARGN})
  set(harness "$<TARGET_OBJECTS:${runner_obj}>" "$<TARGET_FILE:convlab_runner>")
  foreach(lib IN ITEMS harness_cuda device_cuda bench_cuda baselines harness report device bench protocol)
    list(APPEND harness "$<TARGET_FILE:convlab_${lib}>")
  endforeach()
  if(CONVLAB_BACKEND STREQUAL "cpu")
    list(APPEND harness "$<TARGET_FILE:convlab_cpu_runtime>")
  endif()
  list(APPEND harness "$<GENEX_EVAL:$<TARGET_PROPERTY:${runner},CONVLAB_FENCE_HARNESS>>")
  set(args --spec "${spec}" --backend ${CONVLAB_BACKEND} --harness ${harness} -- "$<TARGET_FILE:${kernels}>")
  set(stamp "${CMAKE_CURRENT_BINARY_DIR}/fence/${kernels}.ok")
  add_custom_command(OUTPUT "${stamp}"
    COMMAND convlab_fence ${args}
    COMMAND "${CMAKE_COMMAND}" -E touch "${stamp}"
    DEPENDS ${kernels} convlab_fence "${spec}" ${runner_obj} ${harness}
    COMMENT "convlab fence: ${kernels}" COMMAND_EXPAND_LISTS VERBATIM)
  # fence_<kernels>, not <kernels>_fence: a lab's CMakeLists may match "labNN_kernels*" (lab 06 does).
  add_custom_target(fence_${kernels} ALL DEPENDS "${stamp}")
  add_dependencies(${runner} fence_${kernels})
  if(F_TEST)
    string(REGEX MATCH "^lab[0-9]+" lab_id "${kernels}")
    add_test(NAME ${F_TEST} COMMAND convlab_fence ${args} COMMAND_EXPAND_LISTS)
    set_tests_properties(${F_TEST} PROPERTIES LABELS "${lab_id};cpu")
  endif()
endfunction()
# ---- end of the symbol fence ------------------------------------------------------------

function(convlab_add_lab)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "SM90A" "BENCHMARK" "TESTS")
  if(NOT ARG_TESTS)
    message(FATAL_ERROR "convlab_add_lab: TESTS is required")
  endif()
  get_filename_component(slug "${CMAKE_CURRENT_SOURCE_DIR}" NAME)
  set(spec_file "${CMAKE_CURRENT_SOURCE_DIR}/grading.json")
  if(NOT EXISTS "${spec_file}")
    message(FATAL_ERROR "convlab: ${slug} has no grading spec (${spec_file})")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${spec_file}")
  file(READ "${spec_file}" spec)
  string(JSON lab ERROR_VARIABLE err GET "${spec}" lab)
  if(err)
    message(FATAL_ERROR "convlab: ${spec_file}: ${err}")
  endif()
  string(JSON test_timeout ERROR_VARIABLE err GET "${spec}" time_limits_s test)
  string(JSON nfiles ERROR_VARIABLE err2 LENGTH "${spec}" submission files)
  if(err OR err2)
    message(FATAL_ERROR "convlab: ${spec_file}: needs time_limits_s.test and submission.files")
  endif()
  set(kernel_files "")
  math(EXPR last "${nfiles} - 1")
  foreach(i RANGE ${last})
    string(JSON f GET "${spec}" submission files ${i})
    list(APPEND kernel_files "${f}")
  endforeach()

  set(starter_dir "${PROJECT_SOURCE_DIR}/starter_code/${slug}")
  set(reference_dir "${PROJECT_SOURCE_DIR}/reference/${slug}")
  set(results_root "${CMAKE_BINARY_DIR}/results")
  # gtest_discover_tests sets this skip rule on the tests it discovers; CMake 4
  # cannot take a property value that ends in ']' through it, so only add_test
  # tests set it explicitly.
  set(skip_regex "\\[  SKIPPED \\]")
  # gtest_discover_tests flattens PROPERTIES, so a list of labels cannot pass
  # through it. Labels are set instead by a CTest script that runs after the
  # discovery scripts, on the test lists they define (TEST_LIST).
  set(labels_script "${CMAKE_CURRENT_BINARY_DIR}/${lab}_labels.cmake")
  set(labels_text "# Generated by convlab_add_lab(): labels of the discovered tests.\n")
  # A student's build (their kernels, no self-test) runs the labs in order: the test presets
  # default-next and cpu-next (the student workflows) select the label 'next', which a lab's
  # tests carry once every earlier lab's correctness graders pass (its marker, written by the
  # summary after each run: grader/cli/CMakeLists.txt); so the first run checks lab 01 and says
  # what to do next. Every test needs the fixture convlab_run (convlab.run_start before,
  # convlab.run_end after).
  set(student_run FALSE)
  if(CONVLAB_IMPL STREQUAL "student" AND NOT CONVLAB_SELFTEST)
    set(student_run TRUE)
  endif()
  get_property(earlier_labs GLOBAL PROPERTY CONVLAB_LABS)
  set_property(GLOBAL APPEND PROPERTY CONVLAB_LABS ${lab})
  set(student_props "")
  if(student_run)
    string(APPEND labels_text "set(convlab_next \";next\")\n")
    foreach(earlier IN LISTS earlier_labs)
      string(APPEND labels_text "if(NOT EXISTS \"${results_root}/student/${earlier}.done\")\n  set(convlab_next \"\")\nendif()\n")
    endforeach()
    # GoogleTest's brief output (failures and the summary only): a student's run is read, not parsed.
    set(student_props " FIXTURES_REQUIRED convlab_run ENVIRONMENT GTEST_BRIEF=1")
  endif()
  macro(_convlab_labels test_list)
    set(_labels ${ARGN})
    string(APPEND labels_text
      "if(${test_list})\n  set_tests_properties(\${${test_list}} PROPERTIES LABELS \"${_labels}\${convlab_next}\"${student_props})\nendif()\n")
  endmacro()

  # The judge: the tests and the proxies of the contract (remote_<lab>.cpp), no student code.
  # One judge serves every variant; a variant is a runner (--convlab-runner=PATH).
  set(remote_file "${CMAKE_CURRENT_SOURCE_DIR}/remote_${lab}.cpp")
  if(NOT EXISTS "${remote_file}")
    message(FATAL_ERROR "convlab: ${slug} has no remote_${lab}.cpp (the contract's table for the judge and runner)")
  endif()
  add_library(${lab}_tests_obj OBJECT ${ARG_TESTS} "${remote_file}")
  target_include_directories(${lab}_tests_obj PUBLIC "${CMAKE_CURRENT_SOURCE_DIR}")
  # The graders' code drives tests and compares (the golden models are convlab::harness's, built at
  # the build type's level): -O1 like the command-line tools, which shortens every build with the
  # labs, a student's first too.
  target_link_libraries(${lab}_tests_obj PUBLIC convlab::judge PRIVATE convlab::options convlab::tool_options)
  target_compile_definitions(${lab}_tests_obj PRIVATE
    CONVLAB_LAB_ID="${lab}" CONVLAB_SPEC_PATH="${spec_file}")
  add_executable(${lab}_graders $<TARGET_OBJECTS:${lab}_tests_obj>)
  target_link_libraries(${lab}_graders PRIVATE convlab::judge)
  # The runners' half of remote_<lab>.cpp: the table that calls the student's functions.
  add_library(${lab}_remote_runner OBJECT "${remote_file}")
  target_include_directories(${lab}_remote_runner PUBLIC "${CMAKE_CURRENT_SOURCE_DIR}")
  target_link_libraries(${lab}_remote_runner PUBLIC convlab::runner PRIVATE convlab::options)

  # _convlab_variant(<suffix> <dir> [REPLACE <file> WITH <path>]) -> <lab>_kernels<suffix>, <lab>_runner<suffix>
  macro(_convlab_variant suffix dir)
    cmake_parse_arguments(V "" "REPLACE;WITH" "" ${ARGN})
    set(sources "")
    foreach(f IN LISTS kernel_files)
      if(V_REPLACE AND f STREQUAL V_REPLACE)
        list(APPEND sources "${V_WITH}")
      elseif(NOT EXISTS "${dir}/${f}")
        message(FATAL_ERROR "convlab: ${dir}/${f} is missing (grading.json lists it in submission.files)")
      else()
        list(APPEND sources "${dir}/${f}")
      endif()
    endforeach()
    add_library(${lab}_kernels${suffix} STATIC)
    convlab_cuda_sources(${lab}_kernels${suffix} ${sources})
    # CONVLAB_DEVICE_OPT (issue 18): the kernels at a lowered device optimisation (flags set in the top CMakeLists).
    if(CONVLAB_BACKEND STREQUAL "cuda" AND CONVLAB_DEVICE_OPT_FLAGS)
      target_compile_options(${lab}_kernels${suffix} PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:${CONVLAB_DEVICE_OPT_FLAGS}>")
    endif()
    target_include_directories(${lab}_kernels${suffix} PUBLIC "${CMAKE_CURRENT_SOURCE_DIR}")
    target_link_libraries(${lab}_kernels${suffix} PUBLIC convlab::harness_cuda PRIVATE convlab::options)
    if(ARG_SM90A)
      convlab_cuda_sm90a(${lab}_kernels${suffix})
    endif()
    add_executable(${lab}_runner${suffix} $<TARGET_OBJECTS:${lab}_remote_runner>)
    target_link_libraries(${lab}_runner${suffix} PRIVATE ${lab}_kernels${suffix} convlab::runner)
    if(CONVLAB_BACKEND STREQUAL "cuda")
      # The technique graders read what each kernel's code does with each memory space from its
      # PTX (one architecture is enough): <runner>.facts.json, next to the runner. The PTX is the
      # one nvcc made when it compiled the kernels (kept with --keep, issue 29: a second
      # compilation for the PTX alone doubled a grading build's time); the facts step reads it and
      # removes nvcc's other intermediate files (ConvlabPtxFacts.cmake). A build at lowered device
      # optimisation (CONVLAB_DEVICE_OPT: -G changes the PTX) reads the facts from a PTX compile of
      # its own at the default optimisation, as every other build's are.
      set(keep_dir "${CMAKE_CURRENT_BINARY_DIR}/${lab}_ptx${suffix}")
      # The first architecture's PTX ("90" of "90;80"; "native" is the GPU's); another list
      # ("all", OFF) leaves the choice to the facts step: the newest PTX nvcc kept.
      list(GET CMAKE_CUDA_ARCHITECTURES 0 ptx_arch)
      if(ptx_arch STREQUAL "native" AND CMAKE_CUDA_ARCHITECTURES_NATIVE)
        list(GET CMAKE_CUDA_ARCHITECTURES_NATIVE 0 ptx_arch)
      endif()
      string(REGEX MATCH "^[0-9]+[a-z]?" ptx_arch "${ptx_arch}")
      if(ARG_SM90A AND ptx_arch STREQUAL "90")
        get_target_property(kernel_archs ${lab}_kernels${suffix} CUDA_ARCHITECTURES)
        if("90a-real" IN_LIST kernel_archs)
          set(ptx_arch 90a)  # the sm_90a code's PTX, which holds the wgmma code
        endif()
      endif()
      set(facts "${CMAKE_CURRENT_BINARY_DIR}/${lab}_runner${suffix}.facts.json")
      if(CONVLAB_DEVICE_OPT_FLAGS)
        add_library(${lab}_ptx${suffix} OBJECT ${sources})
        if(ptx_arch STREQUAL "")
          set(ptx_arch 90)
        endif()
        set_target_properties(${lab}_ptx${suffix} PROPERTIES CUDA_PTX_COMPILATION ON CUDA_ARCHITECTURES "${ptx_arch}")
        target_include_directories(${lab}_ptx${suffix} PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}")
        target_link_libraries(${lab}_ptx${suffix} PRIVATE convlab::harness_cuda convlab::options)
        add_custom_command(OUTPUT "${facts}"
          COMMAND convlab_ptxfacts "${facts}" "$<TARGET_OBJECTS:${lab}_ptx${suffix}>"
          DEPENDS ${lab}_ptx${suffix} convlab_ptxfacts "$<TARGET_OBJECTS:${lab}_ptx${suffix}>"
          COMMAND_EXPAND_LISTS VERBATIM COMMENT "ptxfacts: the code facts of ${lab}_runner${suffix}")
      else()
        file(MAKE_DIRECTORY "${keep_dir}")
        target_compile_options(${lab}_kernels${suffix} PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:--keep;--keep-dir=${keep_dir}>")
        set(stems "")
        foreach(s IN LISTS sources)
          get_filename_component(stem "${s}" NAME_WLE)
          if(stem IN_LIST stems)
            message(FATAL_ERROR "convlab: two kernel files of ${lab}${suffix} are named ${stem}.*: nvcc's kept PTX would collide")
          endif()
          list(APPEND stems "${stem}")
        endforeach()
        string(JOIN "," stem_list ${stems})
        add_custom_command(OUTPUT "${facts}"
          COMMAND "${CMAKE_COMMAND}" "-DPTXFACTS=$<TARGET_FILE:convlab_ptxfacts>" "-DOUT=${facts}" "-DKEEP_DIR=${keep_dir}"
                  "-DSTEMS=${stem_list}" "-DARCH=${ptx_arch}" -P "${CONVLAB_CMAKE_DIR}/ConvlabPtxFacts.cmake"
          DEPENDS ${lab}_kernels${suffix} convlab_ptxfacts "${CONVLAB_CMAKE_DIR}/ConvlabPtxFacts.cmake"
          VERBATIM COMMENT "ptxfacts: the code facts of ${lab}_runner${suffix}")
      endif()
      add_custom_target(${lab}_facts${suffix} DEPENDS "${facts}")
      add_dependencies(${lab}_runner${suffix} ${lab}_facts${suffix})
    endif()
    # The symbol fence on every variant (a reference or a planted bug it refuses is a bug there).
    set(fence_test "")
    if("${suffix}" STREQUAL "")
      set(fence_test TEST ${lab}.fence)
    endif()
    _convlab_fence(${lab}_kernels${suffix} ${lab}_runner${suffix} "${spec_file}" ${lab}_remote_runner ${fence_test})
  endmacro()

  # --- the graders, against the kernels CONVLAB_IMPL names --------------------
  if(CONVLAB_IMPL STREQUAL "reference")
    _convlab_variant("" "${reference_dir}")
  else()
    _convlab_variant("" "${starter_dir}")
  endif()
  # Building the graders builds the runner they start (what `convlab check` and `grade` build).
  add_dependencies(${lab}_graders ${lab}_runner)
  set(main_labels "${lab}")
  if(CONVLAB_IMPL STREQUAL "reference")
    list(APPEND main_labels selftest)  # the reference passing is half of the self-test
  endif()
  # GPU graders carry 'gpu'; on the CPU backend they run on the CPU and carry 'cpu'.
  if(CONVLAB_BACKEND STREQUAL "cpu")
    set(device cpu)
  else()
    set(device gpu)
  endif()
  _convlab_labels(${lab}_correctness ${main_labels} correctness ${device})
  _convlab_labels(${lab}_technique ${main_labels} technique ${device})
  _convlab_labels(${lab}_speedup ${main_labels} speedup ${device})
  _convlab_labels(${lab}_cpu ${lab} cpu)
  _convlab_labels(${lab}_starter ${lab} selftest ${device})
  if(student_run)
    # A speed test waits for the correctness and technique tests of its lab: when one of the
    # graders that gate it failed in this build it then skips at once, with that reason
    # (convlab/gate.hpp).
    string(APPEND labels_text
      "set(convlab_gates \${${lab}_correctness} \${${lab}_technique})\n"
      "if(${lab}_speedup AND convlab_gates)\n"
      "  set_tests_properties(\${${lab}_speedup} PROPERTIES DEPENDS \"\${convlab_gates}\")\nendif()\n")
  endif()
  # The judge finds its runner next to itself (<lab>_runner); the self-tests name theirs.
  set(run_args "--convlab-impl=${CONVLAB_IMPL}" "--convlab-results=${results_root}/${CONVLAB_IMPL}")
  gtest_discover_tests(${lab}_graders EXTRA_ARGS ${run_args}
    TEST_FILTER "${lab}.correctness.*" TEST_LIST ${lab}_correctness DISCOVERY_MODE PRE_TEST
    PROPERTIES TIMEOUT ${test_timeout})
  gtest_discover_tests(${lab}_graders EXTRA_ARGS ${run_args}
    TEST_FILTER "${lab}.technique.*" TEST_LIST ${lab}_technique DISCOVERY_MODE PRE_TEST
    PROPERTIES TIMEOUT ${test_timeout})
  gtest_discover_tests(${lab}_graders EXTRA_ARGS ${run_args}
    TEST_FILTER "${lab}.speedup.*" TEST_LIST ${lab}_speedup DISCOVERY_MODE PRE_TEST
    PROPERTIES TIMEOUT ${test_timeout} RUN_SERIAL TRUE)  # timing needs the GPU alone
  gtest_discover_tests(${lab}_graders EXTRA_ARGS ${run_args}
    TEST_FILTER "${lab}.cpu.*" TEST_LIST ${lab}_cpu DISCOVERY_MODE PRE_TEST
    PROPERTIES TIMEOUT ${test_timeout})

  # --- the self-test: the starter must fail every grader ------------------------
  if(CONVLAB_SELFTEST)
    _convlab_variant("_starter" "${starter_dir}")
    gtest_discover_tests(${lab}_graders
      EXTRA_ARGS "--convlab-impl=starter" "--convlab-results=${results_root}/starter"
                 "--convlab-runner=${CMAKE_CURRENT_BINARY_DIR}/${lab}_runner_starter"
      TEST_PREFIX "selftest.starter." TEST_FILTER "${lab}.correctness.*:${lab}.technique.*:${lab}.speedup.*"
      TEST_LIST ${lab}_starter DISCOVERY_MODE PRE_TEST
      PROPERTIES PASS_REGULAR_EXPRESSION "\\[  FAILED  \\] ${lab}\\." TIMEOUT ${test_timeout} RUN_SERIAL TRUE)

    # --- planted bugs: each must be caught with a message that locates it -------
    set(mutants_file "${reference_dir}/mutants/mutants.json")
    if(EXISTS "${mutants_file}" AND CONVLAB_PLANTED_BUGS)
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${mutants_file}")
      file(READ "${mutants_file}" mutants)
      string(JSON count LENGTH "${mutants}" mutants)
      math(EXPR last "${count} - 1")
      foreach(i RANGE ${last})
        foreach(key name file find replace graders expect)
          string(JSON m_${key} ERROR_VARIABLE err GET "${mutants}" mutants ${i} ${key})
          if(err)
            message(FATAL_ERROR "convlab: ${mutants_file}: mutant ${i}: ${err}")
          endif()
        endforeach()
        # 'graders_cpu' (optional): the graders that catch it on the CPU backend, where no speed
        # test runs (a size switch in the kernel: the CPU backend's counts on a large correctness case).
        if(CONVLAB_BACKEND STREQUAL "cpu")
          string(JSON m_graders_cpu ERROR_VARIABLE m_no_graders_cpu GET "${mutants}" mutants ${i} graders_cpu)
          if(NOT m_no_graders_cpu)
            set(m_graders "${m_graders_cpu}")
          endif()
        endif()
        if(CONVLAB_BACKEND STREQUAL "cpu" AND m_graders MATCHES "[.]speedup[.]")
          continue()  # speed is not graded on the CPU backend
        endif()
        # 'backends' (optional): where the bug is caught for certain (a missing
        # barrier: on the CPU backend, whose schedule is shuffled, not on every GPU run).
        string(JSON m_backends ERROR_VARIABLE no_backends GET "${mutants}" mutants ${i} backends)
        if(NOT no_backends AND NOT m_backends MATCHES "\"${CONVLAB_BACKEND}\"")
          continue()
        endif()
        # 'sm90a' (optional): the bug lives in code that only the sm_90a build runs (a lab built with
        # SM90A, for architectures that hold 90: its kernels on a GPU of compute capability 9.0).
        string(JSON m_sm90a ERROR_VARIABLE no_sm90a GET "${mutants}" mutants ${i} sm90a)
        if(NOT no_sm90a AND m_sm90a)
          get_target_property(m_archs ${lab}_kernels CUDA_ARCHITECTURES)
          if(NOT "90a-real" IN_LIST m_archs)
            continue()
          endif()
        endif()
        # The CPU backend can say more about some bugs (a missing barrier reads its NaN
        # for unwritten shared memory): 'expect_cpu'. Without guard zones, AddressSanitizer
        # may be the one to catch it: 'expect_asan'. The later key wins where both apply.
        set(m_more_keys "")
        if(CONVLAB_BACKEND STREQUAL "cpu")
          list(APPEND m_more_keys expect_cpu)
        endif()
        if(CONVLAB_SANITIZE STREQUAL "address")
          list(APPEND m_more_keys expect_asan)
          string(JSON m_asan ERROR_VARIABLE m_no_asan GET "${mutants}" mutants ${i} expect_asan)
          if(m_no_asan AND NOT CONVLAB_ASAN_ALL_MUTANTS)
            continue()  # caught as in the plain CPU build: not planted again (CONVLAB_ASAN_ALL_MUTANTS)
          endif()
        endif()
        foreach(key IN LISTS m_more_keys)
          string(JSON m_more ERROR_VARIABLE m_missing GET "${mutants}" mutants ${i} ${key})
          if(NOT m_missing)
            set(m_expect "${m_more}")
          endif()
        endforeach()
        # Plant the bug: the reference with exactly one edit (made again when the reference changes).
        set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${reference_dir}/${m_file}")
        file(READ "${reference_dir}/${m_file}" source)
        string(FIND "${source}" "${m_find}" at)
        string(FIND "${source}" "${m_find}" at_last REVERSE)
        if(at EQUAL -1 OR NOT at EQUAL at_last)
          message(FATAL_ERROR "convlab: ${mutants_file}: mutant '${m_name}': '${m_find}' must occur exactly "
                              "once in reference/${slug}/${m_file} (did the reference change?)")
        endif()
        string(REPLACE "${m_find}" "${m_replace}" source "${source}")
        set(mutant_path "${CMAKE_CURRENT_BINARY_DIR}/mutants/${m_name}/${m_file}")
        file(WRITE "${mutant_path}.tmp" "${source}")
        configure_file("${mutant_path}.tmp" "${mutant_path}" COPYONLY)  # rewritten only when it changes
        _convlab_variant("_mutant_${m_name}" "${reference_dir}" REPLACE "${m_file}" WITH "${mutant_path}")
        add_test(NAME selftest.mutant.${lab}.${m_name}
                 COMMAND ${lab}_graders "--gtest_filter=${m_graders}"
                         "--convlab-runner=${CMAKE_CURRENT_BINARY_DIR}/${lab}_runner_mutant_${m_name}"
                         "--convlab-impl=mutant:${m_name}" "--convlab-results=${results_root}/mutant-${m_name}")
        set_tests_properties(selftest.mutant.${lab}.${m_name} PROPERTIES
          LABELS "${lab};selftest;${device}" SKIP_REGULAR_EXPRESSION "${skip_regex}"
          PASS_REGULAR_EXPRESSION "${m_expect}" TIMEOUT ${test_timeout} RUN_SERIAL TRUE)
        # 'honest': true marks a variant that is not a bug (another block shape, dynamic shared
        # memory, a strided tile fill): its graders must all pass, and any failure fails the test.
        string(JSON m_honest ERROR_VARIABLE m_not_honest GET "${mutants}" mutants ${i} honest)
        if(NOT m_not_honest AND m_honest)
          set_tests_properties(selftest.mutant.${lab}.${m_name} PROPERTIES FAIL_REGULAR_EXPRESSION "\\[  FAILED  \\]")
        endif()
      endforeach()
    endif()
  endif()

  file(GENERATE OUTPUT "${labels_script}" CONTENT "${labels_text}")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${labels_script}")

  # --- the seed: CONVLAB_SEED replays a run, and garbage in it is refused -------
  add_test(NAME ${lab}.cpu.seed.replayed_from_env
           COMMAND ${lab}_graders "--gtest_filter=${lab}.cpu.*" "--convlab-impl=${CONVLAB_IMPL}")
  set_tests_properties(${lab}.cpu.seed.replayed_from_env PROPERTIES
    LABELS "${lab};cpu" ENVIRONMENT "CONVLAB_SEED=0x1092"
    PASS_REGULAR_EXPRESSION "base seed 4242 \\(from CONVLAB_SEED\\)")
  add_test(NAME ${lab}.cpu.seed.garbage_refused COMMAND ${lab}_graders "--gtest_filter=${lab}.cpu.*")
  set_tests_properties(${lab}.cpu.seed.garbage_refused PROPERTIES
    LABELS "${lab};cpu" ENVIRONMENT "CONVLAB_SEED=12ab"
    PASS_REGULAR_EXPRESSION "CONVLAB_SEED must be a non-negative integer, got '12ab'")

  # --- benchmark -------------------------------------------------------------
  if(ARG_BENCHMARK AND CONVLAB_BENCHMARKS AND CONVLAB_BACKEND STREQUAL "cuda")
    add_executable(${lab}_bench "${ARG_BENCHMARK}")
    target_link_libraries(${lab}_bench PRIVATE ${lab}_kernels convlab::bench_driver convlab::options)
    target_compile_definitions(${lab}_bench PRIVATE CONVLAB_LAB_ID="${lab}" CONVLAB_SPEC_PATH="${spec_file}"
                                                    CONVLAB_IMPL_NAME="${CONVLAB_IMPL}")
    # cuDNN's best algorithm is timed next to the lab's kernels where cuDNN was found
    # (CONVLAB_HAVE_CUDNN comes with the target).
    if(TARGET convlab::cudnn)
      target_link_libraries(${lab}_bench PRIVATE convlab::cudnn)
    endif()
    # A short run of the benchmark is a test too: it must run and check its own results.
    add_test(NAME ${lab}.bench.quick COMMAND ${lab}_bench --quick)
    set_tests_properties(${lab}.bench.quick PROPERTIES
      LABELS "${lab};bench;gpu" SKIP_RETURN_CODE 77 TIMEOUT ${test_timeout} RUN_SERIAL TRUE)
  endif()
endfunction()

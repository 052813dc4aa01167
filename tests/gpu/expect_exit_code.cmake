# Runs BINARY with no CUDA driver to load (KILN_LIBCUDA names a file that does not exist) and
# fails unless it exits with EXPECTED: the GPU tests' "skipped" code (tests/gpu/gpu_main.cpp).
set(ENV{KILN_LIBCUDA} "${CMAKE_CURRENT_LIST_DIR}/no-such-libcuda.so.1")
execute_process(COMMAND ${BINARY} --gtest_brief=1 RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL EXPECTED)
  message(FATAL_ERROR "kiln_gpu_tests without a GPU exited with ${rc}, not ${EXPECTED} (skipped):\n${out}")
endif()
message(STATUS "kiln_gpu_tests without a GPU exited with ${rc} (skipped)")

// The translation unit that precompiles Catch2's header for the test executables
// (tests/CMakeLists.txt, mtperf_test_pch): it has no code of its own.

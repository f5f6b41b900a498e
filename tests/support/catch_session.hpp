#pragma once

namespace mtperf::test {

// Runs every registered test case with Catch2's command line (catch_session.cpp).
int run_catch_session(int argc, char* argv[]);

}  // namespace mtperf::test

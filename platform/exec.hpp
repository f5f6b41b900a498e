#pragma once
// A small fork/exec helper for the setup paths of platform/ (iproute2, tc). Commands run with an
// argv vector, never through a shell, so names and addresses need no quoting.
//
// Thread-safety: every function may be called from any thread. Not for the data path: each call
// forks a process.
#include <string>
#include <vector>

namespace mtperf {

struct ExecResult {
  int exit_code = -1;  // the child's exit status; 128 + signal number when a signal ended it
  std::string out;     // everything the child wrote to stdout
  std::string err;     // everything the child wrote to stderr
};

// Where the child runs. An empty netns means the caller's network namespace; otherwise the child
// enters /run/netns/<netns> with setns() before exec.
struct ExecOptions {
  std::string netns;
  bool capture = true;  // false: the child inherits stdout/stderr
  // With capture: a child still writing after timeout_ms (-1: no deadline), or writing more than
  // max_output bytes (0: no bound), is killed (SIGKILL) and the call throws std::runtime_error.
  int timeout_ms = -1;
  size_t max_output = 0;
};

// Runs argv[0] (looked up in PATH) with argv and waits for it. Throws std::runtime_error when the
// program cannot be found or started; a non-zero exit is reported in the result, not thrown.
ExecResult run_program(const std::vector<std::string>& argv, const ExecOptions& options = {});

// As run_program, but a non-zero exit throws std::runtime_error naming the command and quoting
// its stderr. Returns the child's stdout.
std::string run_checked(const std::vector<std::string>& argv, const ExecOptions& options = {});

// The full path of a program found in PATH (or the standard sbin folders, which PATH often
// lacks for non-root shells), or "" when it is not installed.
std::string find_program(const std::string& name);

// "ip -n ns link add ..." as one line, for error messages and logs.
std::string join_argv(const std::vector<std::string>& argv);

}  // namespace mtperf

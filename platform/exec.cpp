#include "platform/exec.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace mtperf {
namespace {

// Closes a descriptor on scope exit; the setup paths throw, and leaked pipes would leave
// children blocked on a write.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

void make_pipe(Fd& read_end, Fd& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe2 failed: ") + std::strerror(errno));
  read_end.reset(fds[0]);
  write_end.reset(fds[1]);
}

bool is_executable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// Everything between fork() and exec() must be async-signal-safe, so the child only calls
// setns, dup2, execv and _exit; on failure it reports errno through the CLOEXEC pipe.
[[noreturn]] void child_exec(const char* path, char* const* argv, int netns_fd, int out_fd,
                             int err_fd, int status_fd) {
  int step = 0;
  if (netns_fd >= 0 && ::setns(netns_fd, CLONE_NEWNET) != 0) step = 1;
  if (step == 0 && out_fd >= 0 && ::dup2(out_fd, STDOUT_FILENO) < 0) step = 2;
  if (step == 0 && err_fd >= 0 && ::dup2(err_fd, STDERR_FILENO) < 0) step = 2;
  if (step == 0) {
    ::execv(path, argv);
    step = 3;
  }
  int report[2] = {step, errno};
  ssize_t ignored = ::write(status_fd, report, sizeof report);
  (void)ignored;
  ::_exit(127);
}

// Reads the child's stdout and stderr to their ends. Returns "" when it did; else why it stopped
// reading (the deadline, the output's bound), and the caller kills the child.
std::string drain(int out_fd, int err_fd, std::string& out, std::string& err,
                  const ExecOptions& options) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&out, &err};
  int open = 2;
  char buf[4096];
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options.timeout_ms);
  while (open > 0) {
    int wait_ms = -1;
    if (options.timeout_ms >= 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0)
        return "did not finish within " + std::to_string(options.timeout_ms) + " ms";
      wait_ms = int(left.count());
    }
    if (::poll(fds, 2, wait_ms) < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("poll failed: ") + std::strerror(errno));
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
        if (options.max_output > 0 && out.size() + err.size() > options.max_output)
          return "wrote more than " + std::to_string(options.max_output) + " bytes";
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open;
      }
    }
  }
  return "";
}

int wait_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// The descriptor of network namespace `name` (/run/netns/NAME), for the child to enter.
void open_netns(const std::string& name, Fd& netns) {
  std::string ns_path = "/run/netns/" + name;
  netns.reset(::open(ns_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (netns.get() < 0)
    throw std::runtime_error("cannot open network namespace " + ns_path + ": " +
                             std::strerror(errno));
}

// What the child reported before it could run the program: the step that failed, and errno.
[[noreturn]] void throw_child_failure(const int report[2], const std::vector<std::string>& argv,
                                      const ExecOptions& options) {
  std::string what = report[0] == 1   ? "entering network namespace " + options.netns + " for"
                     : report[0] == 2 ? "redirecting output of"
                                      : "executing";
  throw std::runtime_error(what + " '" + join_argv(argv) + "' failed: " + std::strerror(report[1]));
}

}  // namespace

std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return is_executable(name) ? name : "";
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  path += ":/usr/sbin:/sbin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (!dir.empty() && is_executable(dir + "/" + name)) return dir + "/" + name;
    start = end + 1;
  }
  return "";
}

std::string join_argv(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& arg : argv) {
    if (!line.empty()) line += ' ';
    line += arg;
  }
  return line;
}

ExecResult run_program(const std::vector<std::string>& argv, const ExecOptions& options) {
  if (argv.empty()) throw std::runtime_error("run_program: empty argv");
  std::string path = find_program(argv[0]);
  if (path.empty())
    throw std::runtime_error("'" + argv[0] + "' not found in PATH; install it (iproute2 provides " +
                             "ip and tc)");
  Fd netns;
  if (!options.netns.empty()) open_netns(options.netns, netns);
  // argv is prepared before fork(): the child must not allocate.
  std::vector<char*> cargv;
  for (const auto& arg : argv)
    cargv.push_back(const_cast<char*>(arg.c_str()));
  cargv.push_back(nullptr);

  Fd out_r, out_w, err_r, err_w, status_r, status_w;
  if (options.capture) {
    make_pipe(out_r, out_w);
    make_pipe(err_r, err_w);
  }
  make_pipe(status_r, status_w);

  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0)
    child_exec(path.c_str(), cargv.data(), netns.get(), out_w.get(), err_w.get(), status_w.get());

  out_w.reset();
  err_w.reset();
  status_w.reset();
  ExecResult result;
  if (options.capture) {
    const std::string stopped = drain(out_r.get(), err_r.get(), result.out, result.err, options);
    if (!stopped.empty()) {
      ::kill(pid, SIGKILL);
      wait_child(pid);
      throw std::runtime_error("'" + join_argv(argv) + "' " + stopped + "; it was killed");
    }
  }
  int report[2] = {0, 0};
  ssize_t got = ::read(status_r.get(), report, sizeof report);
  result.exit_code = wait_child(pid);
  if (got == static_cast<ssize_t>(sizeof report)) throw_child_failure(report, argv, options);
  return result;
}

std::string run_checked(const std::vector<std::string>& argv, const ExecOptions& options) {
  ExecResult result = run_program(argv, options);
  if (result.exit_code != 0) {
    std::string err = result.err;
    while (!err.empty() && (err.back() == '\n' || err.back() == ' '))
      err.pop_back();
    throw std::runtime_error("'" + join_argv(argv) + "'" +
                             (options.netns.empty() ? "" : " in namespace " + options.netns) +
                             " exited with " + std::to_string(result.exit_code) +
                             (err.empty() ? "" : ": " + err));
  }
  return result.out;
}

}  // namespace mtperf

#pragma once
// Runs the mtperf binary as a child, signals it mid-run, and collects its exit status and
// stdout (for the interrupt tests).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace mtperf::test {

struct Child {
  pid_t pid = -1;
  std::string out_path;
};

inline Child spawn_mtperf(const std::vector<std::string>& args) {
  Child c;
  c.out_path =
      "/tmp/mtperf-interrupt-" + std::to_string(getpid()) + "-" + std::to_string(clock()) + ".out";
  std::vector<std::string> words{MTPERF_BINARY};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words)
    argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, c.out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(posix_spawn(&c.pid, MTPERF_BINARY, &fa, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&fa);
  return c;
}

// Waits for the child at most `seconds`; returns its exit status, or -1 (and kills it) when it
// did not end in time.
inline int wait_exit(const Child& c, double seconds) {
  for (int i = 0; i < int(seconds * 20); ++i) {
    int status = 0;
    if (waitpid(c.pid, &status, WNOHANG) == c.pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    usleep(50'000);
  }
  kill(c.pid, SIGKILL);
  waitpid(c.pid, nullptr, 0);
  return -1;
}

// Waits at most `seconds` until the child holds `count` established TCP connections (its
// control and data connections to its own server: the test is under way); false when it did not.
inline bool wait_established(const Child& c, size_t count, double seconds) {
  const std::string proc = "/proc/" + std::to_string(c.pid);
  for (int i = 0; i < int(seconds * 50); ++i) {
    std::set<std::string> inodes;  // the child's sockets
    std::error_code ec;
    for (const auto& fd : std::filesystem::directory_iterator(proc + "/fd", ec)) {
      const std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
      if (target.rfind("socket:[", 0) == 0) inodes.insert(target.substr(8, target.size() - 9));
    }
    size_t established = 0;
    for (const char* table : {"/net/tcp", "/net/tcp6"}) {
      std::ifstream in(proc + table);
      std::string line;
      std::getline(in, line);  // the header
      while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string sl, local, remote, state, queues, timer, retr, uid, timeout, inode;
        f >> sl >> local >> remote >> state >> queues >> timer >> retr >> uid >> timeout >> inode;
        if (state == "01" && inodes.count(inode)) ++established;
      }
    }
    if (established >= count) return true;
    usleep(20'000);
  }
  return false;
}

inline std::string output_of(const Child& c) {
  std::ifstream in(c.out_path);
  std::stringstream s;
  s << in.rdbuf();
  std::remove(c.out_path.c_str());
  return s.str();
}

}  // namespace mtperf::test

#include "control/server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "control/session.hpp"
#include "control/session_log.hpp"
#include "platform/file_limit.hpp"
#include "platform/host_limits.hpp"
#include "transports/api/control_socket.hpp"
#include "workloads/memory.hpp"

namespace mtperf::control {

struct Server::Session {
  std::unique_ptr<ServerSession> session;
  std::thread thread;
  std::atomic<bool> finished{false};
  bool dropped = false;  // aborted to make room; no longer counted as pending
};

namespace {

// `t` added into the entry of its kind in `all` (a new entry for a new kind).
void add_traffic(std::vector<TrafficCounters>& all, const TrafficCounters& t) {
  for (TrafficCounters& a : all) {
    if (a.transport == t.transport && a.workload == t.workload && a.proto == t.proto &&
        a.protocol == t.protocol) {
      a.bytes_sent += t.bytes_sent;
      a.bytes_recv += t.bytes_recv;
      a.transactions += t.transactions;
      return;
    }
  }
  all.push_back(t);
}

}  // namespace

void log_to_stderr(const std::string& line) {
  std::fprintf(stderr, "%s\n", line.c_str());
}

std::string load_key(const std::string& path) {
  if (!path.empty()) return read_key_file(path);
  const char* env = std::getenv("MTPERF_KEY");
  if (env == nullptr) return "";
  std::string key(env);
  const char* space = " \t\r\n\v\f";
  const size_t first = key.find_first_not_of(space);
  if (first == std::string::npos) return "";
  if (key.size() > 4096) throw std::runtime_error("MTPERF_KEY: over 4 KiB; a key is one line");
  return key.substr(first, key.find_last_not_of(space) - first + 1);
}

std::string read_key_file(const std::string& path) {
  constexpr size_t kMaxBytes = 4096;
  const std::string what = "key file " + path;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(what + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    throw std::runtime_error(what + ": " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw std::runtime_error(what + ": not a regular file");
  }
  if ((st.st_mode & 077) != 0) {
    ::close(fd);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
    throw std::runtime_error(what + " is open to group or others (mode " + mode +
                             "); make it the server's own: chmod 600 " + path);
  }
  std::string text(kMaxBytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      throw std::runtime_error(what + ": " + std::strerror(e));
    }
    if (n == 0) break;
    got += size_t(n);
  }
  ::close(fd);
  if (got > kMaxBytes) throw std::runtime_error(what + ": over 4 KiB; a key is one line");
  text.resize(got);
  const char* space = " \t\r\n\v\f";
  size_t first = text.find_first_not_of(space);
  if (first == std::string::npos) throw std::runtime_error(what + " holds no key");
  size_t last = text.find_last_not_of(space);
  return text.substr(first, last - first + 1);
}

uint32_t default_max_flows(const FileLimit& limit) {
  // What ensure_open_files (platform/file_limit.hpp) can make room for: the hard limit, less a
  // margin, at one descriptor a flow (a listener, then the connection in its place; crr, which
  // keeps its listeners, is checked for two by the session).
  const uint64_t fds = limit.hard > 512 ? limit.hard - 512 : 0;
  return uint32_t(std::clamp<uint64_t>(fds, 1, kLimits.max_flows_total));
}

ServerOptions resolved(ServerOptions o) {
  if (o.max_memory == 0 || o.max_total_memory == 0) {
    uint64_t total = 0;
    try {
      total = mem_total_bytes(o.proc_root);
    } catch (const std::exception&) {
      total = 0;  // no /proc/meminfo: the fixed defaults
    }
    if (o.max_memory == 0) o.max_memory = default_test_memory(total);
    if (o.max_total_memory == 0)
      o.max_total_memory = std::max(default_total_memory(total), o.max_memory);
  }
  if (o.max_total_memory < o.max_memory) {
    throw std::invalid_argument("--max-total-memory (" + format_bytes(o.max_total_memory) +
                                ") is below --max-memory (" + format_bytes(o.max_memory) + ")");
  }
  if (o.max_flows == 0) o.max_flows = default_max_flows(file_limit());
  if (o.max_sessions == 0) throw std::invalid_argument("--max-sessions must be at least 1");
  if (o.max_pending == 0) throw std::invalid_argument("--max-pending must be at least 1");
  if (o.handshake_timeout_ms <= 0)
    throw std::invalid_argument("the handshake timeout must be positive");
  if (!o.key.empty() && !o.key_file.empty())
    throw std::invalid_argument("a key and a key file: give one of them");
  if (!o.log) o.log = log_to_stderr;
  return o;
}

Server::Server(ServerOptions opts)
    : opts_(resolved(std::move(opts))), admission_(opts_.max_sessions, opts_.max_total_memory) {
  key_.set(opts_.key_file.empty() ? opts_.key : read_key_file(opts_.key_file));
  control_socket::raise_fd_limit();
  SockAddr where = control_socket::resolve(opts_.bind, opts_.port);
  listen_fd_ = control_socket::listen(where, 128);
  port_ = control_socket::local_address(listen_fd_).port();
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    ::close(listen_fd_);
    throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  }
  if (!opts_.metrics.empty()) {
    try {
      metrics_ = std::make_unique<MetricsEndpoint>(opts_.metrics, [this] { return counters(); });
    } catch (...) {
      ::close(listen_fd_);
      ::close(wake_fd_);
      throw;
    }
  }
}

Server::~Server() {
  metrics_.reset();
  stop();
  reap(true);
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void Server::stop() {
  stop_.store(true);
}

void Server::reload_key() {
  if (opts_.key_file.empty())
    throw std::runtime_error("no key file to reload: the server was started without --key-file");
  key_.set(read_key_file(opts_.key_file));
}

ServerCounters Server::counters() const {
  ServerCounters c;
  c.refused = refused_.load();
  c.pending_dropped = pending_dropped_.load();
  c.running = admission_.running();
  c.tests_ok = tests_ok_.load();
  c.tests_error = tests_error_.load();
  c.tests_refused = tests_refused_.load();
  c.memory_in_use = admission_.memory_in_use();
  c.memory_budget = opts_.max_total_memory;
  std::lock_guard lock(mu_);
  c.traffic = traffic_;
  c.refusals = refusals_;
  for (const auto& s : sessions_) {
    if (s->finished.load()) continue;  // its traffic is in traffic_
    if (!s->dropped && !s->session->admitted()) ++c.pending;
    if (std::optional<TrafficCounters> t = s->session->live()) add_traffic(c.traffic, *t);
  }
  return c;
}

void Server::reap(bool all) {
  std::list<std::unique_ptr<Session>> done;
  {
    std::lock_guard lock(mu_);
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      if (all) (*it)->session->abort();
      if (all || (*it)->finished.load()) {
        done.push_back(std::move(*it));
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& s : done) {
    if (s->thread.joinable()) s->thread.join();
  }
}

void Server::record(const TestLog& log, Session* ended) {
  std::lock_guard lock(mu_);
  if (ended) ended->finished.store(true);
  if (log.spec && log.counted) {
    add_traffic(traffic_, {log.spec->transport, std::string(to_string(log.spec->workload)),
                           std::string(to_string(log.spec->proto)), log.bytes_sent, log.bytes_recv,
                           log.transactions, std::string(log.protocol)});
  }
  switch (log.result) {
    case TestLog::Result::ok:
      tests_ok_.fetch_add(1);
      break;
    case TestLog::Result::error:
      tests_error_.fetch_add(1);
      break;
    case TestLog::Result::refused: {
      tests_refused_.fetch_add(1);
      const std::string_view at = log.refused_at.empty() ? "handshake" : log.refused_at;
      auto it = std::find_if(refusals_.begin(), refusals_.end(),
                             [at](const auto& r) { return r.first == at; });
      if (it == refusals_.end()) {
        refusals_.emplace_back(std::string(at), 1);
      } else {
        ++it->second;
      }
      break;
    }
  }
}

void Server::record_peer_test(const TestLog& log) {
  if (log.result == TestLog::Result::refused && log.refused_at == "allow") refused_.fetch_add(1);
  record(log);
  opts_.log(format_test_log(log));
}

void Server::start_session(int fd) {
  auto s = std::make_unique<Session>();
  s->session = std::make_unique<ServerSession>(fd, opts_, admission_, key_);
  Session* raw = s.get();
  std::lock_guard lock(mu_);
  // Room for one more pending connection: the oldest pending ones go first. A dropped session
  // sees its connection shut down and ends on its own; reap() joins it.
  uint32_t pending = 0;
  for (const auto& p : sessions_) {
    if (!p->finished.load() && !p->dropped && !p->session->admitted()) ++pending;
  }
  for (auto it = sessions_.begin(); pending >= opts_.max_pending && it != sessions_.end(); ++it) {
    Session& p = **it;
    if (p.finished.load() || p.dropped || p.session->admitted()) continue;
    if (!p.session->drop_if_pending()) continue;  // admitted meanwhile: it is a test now
    p.dropped = true;
    --pending;
    pending_dropped_.fetch_add(1);
  }
  s->thread = std::thread([this, raw] {
    raw->session->run();
    record(raw->session->log(), raw);
    uint64_t one = 1;  // wake the accept loop: it frees the session at once
    [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
  });
  sessions_.push_back(std::move(s));
}

void Server::run() {
  while (!stop_.load()) {
    reap(false);
    if (reload_.exchange(false)) {
      std::string line = "event=reload key_file=" + log_value(opts_.key_file);
      try {
        reload_key();
        line += " result=ok";
      } catch (const std::exception& e) {
        line += " result=error error=" + log_value(e.what());
      }
      opts_.log(line);
    }
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (::poll(p, 2, 200) <= 0) continue;
    if (p[1].revents != 0) {
      uint64_t n;
      [[maybe_unused]] ssize_t r = ::read(wake_fd_, &n, sizeof n);
    }
    if (p[0].revents == 0) continue;
    int fd = control_socket::accept(listen_fd_, 0);
    if (fd < 0) continue;
    if (!opts_.allow.empty()) {
      bool ok = false;
      try {
        ok = allowed(opts_.allow, control_socket::peer_address(fd));
      } catch (const std::exception&) {
        ok = false;  // no peer address: it went away already
      }
      if (!ok) {
        TestLog log;
        try {
          log.client = control_socket::peer_address(fd).to_string();
        } catch (const std::exception&) {
          log.client = "(unknown peer)";
        }
        ::close(fd);
        refused_.fetch_add(1);
        log.result = TestLog::Result::refused;
        log.refused_at = "allow";
        log.why = "not from a network in --allow";
        record(log);
        opts_.log(format_test_log(log));
        continue;
      }
    }
    start_session(fd);
  }
}

}  // namespace mtperf::control

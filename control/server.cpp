#include "control/server.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>

#include "control/session.hpp"
#include "transports/inet/inet.hpp"

namespace mtperf::control {

struct Server::Session {
  std::unique_ptr<ServerSession> session;
  std::thread thread;
  std::atomic<bool> finished{false};
};

Server::Server(ServerOptions opts) : opts_(std::move(opts)) {
  inet::raise_fd_limit();
  SockAddr where = inet::resolve(opts_.bind, opts_.port);
  SocketOptions so;
  listen_fd_ = inet::listen_on(where, Proto::tcp, so, 64);
  port_ = inet::local_address(listen_fd_).port();
}

Server::~Server() {
  stop();
  reap(true);
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

void Server::stop() {
  stop_.store(true);
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

void Server::run() {
  while (!stop_.load()) {
    reap(false);
    int fd = inet::accept_within(listen_fd_, 200);
    if (fd < 0) continue;
    size_t active;
    {
      std::lock_guard lock(mu_);
      active = sessions_.size();
    }
    if (active >= opts_.max_sessions) {
      ::close(fd);  // busy: the client sees the connection close at once
      continue;
    }
    auto s = std::make_unique<Session>();
    s->session = std::make_unique<ServerSession>(fd, opts_);
    Session* raw = s.get();
    s->thread = std::thread([raw] {
      raw->session->run();
      raw->finished.store(true);
    });
    std::lock_guard lock(mu_);
    sessions_.push_back(std::move(s));
  }
}

}  // namespace mtperf::control

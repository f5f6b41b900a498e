#include "transports/rdma/oob.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "transports/rdma/settings.hpp"
#include "transports/rdma/setup.hpp"
#include "verbs/cm.hpp"
#include "verbs/oob_qp.hpp"
#include "verbs/tcp_exact.hpp"

namespace mtperf::rdma {

namespace {

// A connected socket's local address, as the errors name it.
std::string local_name(int fd) {
  SockAddr a;
  a.ss = local_address(fd);
  a.set_port(0);
  return a.to_string();
}

// The local half of a connection; the endpoint owns the QP from here on.
OobHello prepare(RdmaEndpoint& ep, const OobPort& p, const FlowSetup& s) {
  ep.port = p.port;
  return ep.res->oob_half(p, s.flow, s.cookie, ep.dev, ep.conn, ep.qp);
}

void check_landing(const RdmaEndpoint& ep) {
  if (std::string why = ep.res->landing_refusal(ep.peer); !why.empty()) {
    throw std::runtime_error(why);
  }
}

class OobListener final : public FlowListener {
 public:
  OobListener(const SockAddr& where, const FlowSetup& setup, std::shared_ptr<WorkerRes> res)
      : setup_(setup), res_(std::move(res)) {
    fd_ = tcp_listen(where.ss, 4,
                     flow_name(setup) + ": listening (out of band) on " + where.to_string());
  }
  ~OobListener() override {
    if (fd_ >= 0) ::close(fd_);
  }
  uint16_t port() const override {
    SockAddr a;
    a.ss = local_address(fd_);
    return a.port();
  }
  int wait_fd() const override { return fd_; }
  std::unique_ptr<Endpoint> accept(int64_t deadline_ns) override;
  std::unique_ptr<Endpoint> release() override {
    throw std::runtime_error(connect_refusal(ConnectMode::oob, true));
  }

 private:
  FlowSetup setup_;
  std::shared_ptr<WorkerRes> res_;
  int fd_ = -1;
};

std::unique_ptr<Endpoint> OobListener::accept(int64_t deadline_ns) {
  if (fd_ < 0) return nullptr;
  Fd conn(::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
  if (conn.fd < 0) return nullptr;
  int one = 1;
  setsockopt(conn.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const RdmaSettings& set = res_->settings();
  std::string what = flow_name(setup_) + ": accepting (out of band)";
  OobPort p = oob_port_of_socket(res_->verbs(), conn.fd, local_name(conn.fd), set);
  OobHello peer;
  if (!read_oob_hello(conn.fd, deadline_ns, setup_.cookie, setup_.flow, set.verb, p.link, peer)
           .empty()) {
    ++rejected_;  // a stranger, or a peer gone: dropped, as rdma_cm's path rejects it
    return nullptr;
  }
  auto ep = std::make_unique<RdmaEndpoint>();
  ep->res = res_;
  ep->peer = peer.conn;
  try {
    OobHello mine = prepare(*ep, p, setup_);
    check_landing(*ep);
    oob_rtr_rts(res_->verbs(), ep->qp, p, mine.qp, peer.qp, set);
    std::array<uint8_t, kOobBytes> out{};
    encode_oob(mine, out.data());
    send_exact(conn.fd, out.data(), out.size(), deadline_ns, what + ": sending our QP");
    std::array<uint8_t, 4> ready{};
    if (std::string why = recv_exact(conn.fd, ready.data(), ready.size(), deadline_ns);
        !why.empty()) {
      throw std::runtime_error("the client's ready: " + why);
    }
    if (!is_ready(ready.data())) throw std::runtime_error("the client's ready is not \"MTRY\"");
  } catch (const std::exception& e) {
    throw std::runtime_error(what + ": " + e.what());
  }
  ep->oob_fd = conn.release();
  // One connection per flow: the listener has served its purpose.
  ::close(fd_);
  fd_ = -1;
  return ep;
}

}  // namespace

std::unique_ptr<FlowListener> oob_listen(const SockAddr& where, const FlowSetup& setup,
                                         std::shared_ptr<WorkerRes> res) {
  if (std::string why = connect_refusal(ConnectMode::oob, setup.per_transaction); !why.empty()) {
    throw std::runtime_error(why);
  }
  return std::make_unique<OobListener>(where, setup, std::move(res));
}

std::unique_ptr<Endpoint> oob_connect(const SockAddr& server, const SockAddr& source,
                                      const FlowSetup& setup, std::shared_ptr<WorkerRes> res,
                                      int64_t deadline_ns) {
  if (std::string why = connect_refusal(ConnectMode::oob, setup.per_transaction); !why.empty()) {
    throw std::runtime_error(why);
  }
  std::string what = flow_name(setup) + ": connecting (out of band) to " + server.to_string();
  const RdmaSettings& set = res->settings();
  auto ep = std::make_unique<RdmaEndpoint>();
  ep->res = std::move(res);
  ep->setup = setup;
  ep->remote = server;
  ep->source = source;
  Fd fd(tcp_connect(server.ss, source.ss, deadline_ns, what));
  try {
    OobPort p = oob_port_of_socket(ep->res->verbs(), fd.fd, local_name(fd.fd), set);
    OobHello mine = prepare(*ep, p, setup);
    std::array<uint8_t, kOobBytes> out{};
    encode_oob(mine, out.data());
    send_exact(fd.fd, out.data(), out.size(), deadline_ns, "sending our QP");
    OobHello peer;
    if (std::string why =
            read_oob_hello(fd.fd, deadline_ns, setup.cookie, setup.flow, set.verb, p.link, peer);
        !why.empty()) {
      throw std::runtime_error("the server's answer is not ours: " + why);
    }
    ep->peer = peer.conn;
    check_landing(*ep);
    oob_rtr_rts(ep->res->verbs(), ep->qp, p, mine.qp, peer.qp, set);
    const std::array<uint8_t, 4> ready = encode_ready();
    send_exact(fd.fd, ready.data(), ready.size(), deadline_ns, "sending ready");
  } catch (const std::exception& e) {
    throw std::runtime_error(what + ": " + e.what());
  }
  ep->oob_fd = fd.release();
  return ep;
}

}  // namespace mtperf::rdma

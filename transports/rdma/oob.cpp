#include "transports/rdma/oob.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>

#include "transports/rdma/settings.hpp"
#include "transports/rdma/setup.hpp"
#include "verbs/cm.hpp"
#include "verbs/oob_qp.hpp"
#include "verbs/tcp_exact.hpp"

namespace mtperf::rdma {

namespace {

std::string flow_name(const FlowSetup& s) {
  return "flow " + std::to_string(s.flow);
}

int tcp_socket(int family, const std::string& what) {
  int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) throw_errno(what + ": socket", errno);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

SockAddr local_address(int fd) {
  SockAddr a;
  a.len = sizeof a.ss;
  if (getsockname(fd, a.get(), &a.len) != 0) throw_errno("getsockname", errno);
  return a;
}

// oob_port of a connected socket's local address: its device found from the address with port 0.
OobPort local_port(VerbsApi& v, const SockAddr& local, const RdmaSettings& s) {
  SockAddr any = local;
  any.set_port(0);
  return oob_port(v, any.ss, local.to_string(), s);
}

uint32_t random_psn() {
  std::random_device rd;
  return rd() & 0xffffff;
}

// The local half of a connection: the device's resources, the QP in INIT with its receives
// posted, and the hello that describes it. The endpoint owns the QP from here on.
OobHello prepare(RdmaEndpoint& ep, const OobPort& p, const FlowSetup& s) {
  WorkerRes& res = *ep.res;
  ep.dev = &res.device(p.ctx);
  ep.port = p.port;
  ep.conn = res.take_setup_conn();
  ep.qp = res.create_qp(*ep.dev);
  oob_init(res.verbs(), ep.qp, p);
  if (int rc = res.post_receives(*ep.dev, ep.qp, ep.conn, 0); rc != 0) {
    throw_errno("posting receives", rc);
  }
  OobHello h;
  h.qp.qpn = ep.qp->qp_num;
  h.qp.psn = random_psn();
  h.qp.lid = p.lid;
  h.qp.link = p.link;
  h.qp.mtu = p.mtu;
  h.qp.depths = local_depths(*ep.dev);
  h.qp.gid = p.gid;
  h.conn = res.local_info(ep.conn, *ep.dev, s);
  return h;
}

// The peer's hello, read and checked: "" or why it is not this flow's.
std::string read_hello(int fd, int64_t deadline_ns, const FlowSetup& s, Verb verb, uint8_t link,
                       OobHello& out) {
  std::array<uint8_t, kOobBytes> buf{};
  if (std::string why = recv_exact(fd, buf.data(), buf.size(), deadline_ns); !why.empty()) {
    return why;
  }
  if (OobError e = decode_oob(buf.data(), buf.size(), out); e != OobError::ok) {
    return std::string(to_string(e));
  }
  if (out.qp.link != link) return "the peer's port has another link layer";
  ConnInfo info;
  if (std::string why = check_peer(buf.data() + 40, kPdBytes, s, verb, info); !why.empty()) {
    return why;
  }
  return "";
}

void check_landing(const RdmaEndpoint& ep, Verb verb) {
  const Layout& l = ep.res->layout();
  if (verb != Verb::send && (ep.peer.slots == 0 || ep.peer.slot_size < l.slot_size)) {
    throw std::runtime_error("the peer's landing slots (" + std::to_string(ep.peer.slots) + " of " +
                             std::to_string(ep.peer.slot_size) + " bytes) cannot take " +
                             std::to_string(l.slot_size) + "-byte messages");
  }
}

class OobListener final : public FlowListener {
 public:
  OobListener(const SockAddr& where, const FlowSetup& setup, std::shared_ptr<WorkerRes> res)
      : setup_(setup), res_(std::move(res)) {
    std::string what = flow_name(setup) + ": listening (out of band) on " + where.to_string();
    Fd fd(tcp_socket(where.family(), what));
    int one = 1;
    setsockopt(fd.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.fd, where.get(), where.len) != 0) throw_errno(what + ": bind", errno);
    if (::listen(fd.fd, 4) != 0) throw_errno(what + ": listen", errno);
    fd_ = fd.release();
  }
  ~OobListener() override {
    if (fd_ >= 0) ::close(fd_);
  }
  uint16_t port() const override {
    SockAddr a = local_address(fd_);
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
  SockAddr local = local_address(conn.fd);
  OobPort p = local_port(res_->verbs(), local, set);
  OobHello peer;
  if (!read_hello(conn.fd, deadline_ns, setup_, set.verb, p.link, peer).empty()) {
    ++rejected_;  // a stranger, or a peer gone: dropped, as rdma_cm's path rejects it
    return nullptr;
  }
  auto ep = std::make_unique<RdmaEndpoint>();
  ep->res = res_;
  ep->peer = peer.conn;
  try {
    OobHello mine = prepare(*ep, p, setup_);
    check_landing(*ep, set.verb);
    oob_rtr_rts(res_->verbs(), ep->qp, p, mine.qp, peer.qp, set);
    std::array<uint8_t, kOobBytes> out{};
    encode_oob(mine, out.data());
    send_exact(conn.fd, out.data(), out.size(), deadline_ns, what + ": sending our QP");
    std::array<uint8_t, 4> ready{};
    if (std::string why = recv_exact(conn.fd, ready.data(), ready.size(), deadline_ns);
        !why.empty()) {
      throw std::runtime_error("the client's ready: " + why);
    }
    uint32_t word =
        uint32_t(ready[0]) << 24 | uint32_t(ready[1]) << 16 | uint32_t(ready[2]) << 8 | ready[3];
    if (word != kOobReady) throw std::runtime_error("the client's ready is not \"MTRY\"");
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
  Fd fd(tcp_socket(server.family(), what));
  if (source.family() != AF_UNSPEC && ::bind(fd.fd, source.get(), source.len) != 0) {
    throw_errno(what + ": bind to " + source.to_string(), errno);
  }
  if (::connect(fd.fd, server.get(), server.len) != 0) {
    if (errno != EINPROGRESS) throw_errno(what + ": connect", errno);
    if (!wait_for(fd.fd, POLLOUT, deadline_ns)) {
      throw std::runtime_error(what + ": no TCP connection by the deadline");
    }
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(fd.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) throw_errno(what + ": connect", err);
  }
  try {
    OobPort p = local_port(ep->res->verbs(), local_address(fd.fd), set);
    OobHello mine = prepare(*ep, p, setup);
    std::array<uint8_t, kOobBytes> out{};
    encode_oob(mine, out.data());
    send_exact(fd.fd, out.data(), out.size(), deadline_ns, "sending our QP");
    OobHello peer;
    if (std::string why = read_hello(fd.fd, deadline_ns, setup, set.verb, p.link, peer);
        !why.empty()) {
      throw std::runtime_error("the server's answer is not ours: " + why);
    }
    ep->peer = peer.conn;
    check_landing(*ep, set.verb);
    oob_rtr_rts(ep->res->verbs(), ep->qp, p, mine.qp, peer.qp, set);
    const uint8_t ready[4] = {uint8_t(kOobReady >> 24), uint8_t(kOobReady >> 16),
                              uint8_t(kOobReady >> 8), uint8_t(kOobReady)};
    send_exact(fd.fd, ready, sizeof ready, deadline_ns, "sending ready");
  } catch (const std::exception& e) {
    throw std::runtime_error(what + ": " + e.what());
  }
  ep->oob_fd = fd.release();
  return ep;
}

}  // namespace mtperf::rdma

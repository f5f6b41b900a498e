#pragma once
// Connection set-up for every transport that rides on kernel sockets (socket, uring, clip,
// lane): the endpoint their engines adopt, and the listen/connect half of Transport with the
// flow hello (flow_hello.hpp) as proof of the test's cookie and the flow id.
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "transports/api/registry.hpp"
#include "transports/inet/inet.hpp"

namespace mtperf::inet {

// A kernel socket as set-up made it: a connected data socket (TCP, or UDP connected to its
// peer), a listening socket (crr server), or only a target (crr client, fd -1).
struct SocketEndpoint final : Endpoint {
  int fd = -1;
  bool listener = false;
  Proto proto = Proto::tcp;
  SockAddr remote;  // crr client: where each transaction connects
  SockAddr source;  // crr client: the local address to connect from (AF_UNSPEC: any)
  SocketOptions opts;

  SocketEndpoint() = default;
  SocketEndpoint(const SocketEndpoint&) = delete;
  SocketEndpoint& operator=(const SocketEndpoint&) = delete;
  ~SocketEndpoint() override;
  int dup_stats_fd() const override;
  // Hands the descriptor over (to an engine); the endpoint no longer closes it.
  int take_fd() {
    int f = fd;
    fd = -1;
    return f;
  }
};

// The Endpoint calls of the engine contract, for engines that take descriptors: the engine
// owns the descriptor once it has adopted it.
template <class E>
int adopt_endpoint(E& engine, Endpoint& ep) {
  auto& s = static_cast<SocketEndpoint&>(ep);
  int id = engine.adopt(s.fd, s.proto);
  if (id >= 0) s.take_fd();
  return id;
}
template <class E>
int listen_endpoint(E& engine, Endpoint& ep) {
  auto& s = static_cast<SocketEndpoint&>(ep);
  int id = engine.listen_adopt(s.fd);
  if (id >= 0) s.take_fd();
  return id;
}
template <class E>
int open_endpoint(E& engine, const Endpoint& ep) {
  const auto& s = static_cast<const SocketEndpoint&>(ep);
  ConnectSpec cs;
  cs.remote = s.remote;
  cs.proto = s.proto;
  cs.opts = &s.opts;
  cs.source = &s.source;
  return engine.open(cs);
}

// The set-up half of Transport for socket-based transports; the engine half (caps, and
// make_engine of EngineHost<E>) is each transport's own.
struct SharedTcpListen;  // endpoint.cpp

// TCP flows of one test (one cookie) to one address share a listening socket and connect in
// any order; UDP flows and crr's listeners have a socket each.
class SocketSetup : public Transport {
 public:
  std::unique_ptr<FlowListener> listen(const SockAddr& where, const FlowSetup& setup) override;
  std::unique_ptr<Endpoint> connect(const SockAddr& server, const SockAddr& source,
                                    const FlowSetup& setup, int64_t deadline_ns) override;

 private:
  std::mutex shared_mu_;
  // "cookie address" -> the listening socket its flows share, while one of their listeners lives.
  std::map<std::string, std::weak_ptr<SharedTcpListen>> shared_;
};

}  // namespace mtperf::inet

#pragma once
// test::MemoryEngine: an IN-MEMORY ENGINE FOR UNIT TESTS, never a transport. It satisfies
// EngineType (transports/api/transport.hpp) with the completion semantics stated there, over
// byte pipes in memory instead of kernel sockets, so that the workload (Worker<E>) runs its
// real roles and its counts can be checked exactly: no kernel buffers, ports or timing between
// what was sent and what arrives.
//
// A test::MemoryNetwork is shared by the engines of both sides (each engine is used by one
// worker thread, as a real one is). It holds, all sized by its constructor:
//  - links: a TCP-like connection as two bounded byte rings, one per direction; end 0 is the
//    client's, end 1 the server's. Set-up (connect_pair) hands each side a test::MemoryEndpoint
//    that its engine adopts, as a transport's set-up does (transports/api/endpoint.hpp);
//  - listeners (crr): a listener per flow with a bounded backlog of links opened to it and not
//    yet accepted (listener_pair: the server's listener and the client's target).
// One mutex guards the whole network; one condition variable wakes an engine blocked in poll()
// whenever something changed (bytes written or read, a half-close, a close, a new connection).
// Nothing allocates after construction: post(), poll(), open(), accept(), shutdown_send() and
// close() only move bytes and indices (tests/workloads/test_no_allocation.cpp relies on it).
//
// Completion semantics (the socket engine's, over pipes):
//   send    completes once its whole buffer is in the pipe; a buffer larger than the free room
//           goes in pieces, in order, like a short write. -EPIPE once the peer has closed its
//           end, or after this end's shutdown_send().
//   recv    completes with 1..len bytes as soon as any are in the pipe; 0 once the peer has shut
//           its sending side down (or closed) and the pipe is drained, and 0 again after that.
//   accept  completes with the new ConnId once a client has opened a link to the listener;
//           -ENOSPC when this engine has no free connection (that link is dropped: its client
//           reads EOF). open() never waits: the link is queued on the listener's backlog.
//   shutdown_send: the peer's receives see EOF after the bytes already sent.
//   close   this end's queued work is dropped; the peer reads what was sent, then EOF, and its
//           sends fail with -EPIPE.
// Wait::none and Wait::spin: poll() makes what progress it can and returns at once (spin: the
// caller loops, never sleeping). Wait::block: when nothing can progress, poll() sleeps on the
// condition variable until something changes or timeout_ns has passed, then returns 0, so that
// the worker looks at its phase clock.
//
// Thread safety: an engine is used by one thread at a time; a network by any number of engines.
// Covered: what the TCP roles need — stream, maerts, bidir, rr and crr (open, listen, accept).
// Not modelled: datagrams (every link is a byte stream: UDP roles are not covered), TCP's reset
// (a close with unread data does not turn the peer's receive into -ECONNRESET), and the
// optional capabilities (provided receive buffers, linked or unsignaled sends, one-sided or
// passive transfers): caps() offers none of them.
#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "transports/api/endpoint.hpp"
#include "transports/api/transport.hpp"

namespace mtperf::test {

class MemoryNetwork;

// What set-up hands one side of a flow: an end of a link, a listener (crr server) or a
// listener's target (crr client). An end or listener never adopted is closed with the endpoint,
// so its peer sees EOF (or a refused connection). The network must outlive it.
struct MemoryEndpoint final : Endpoint {
  enum class Kind : uint8_t { conn, listener, target };
  MemoryNetwork* net = nullptr;
  Kind kind = Kind::conn;
  uint32_t index = 0;  // the link (conn) or the listener (listener, target)
  uint8_t end = 0;     // conn: 0 the client's end, 1 the server's
  bool adopted = false;
  ~MemoryEndpoint() override;
};

class MemoryNetwork {
 public:
  static constexpr uint32_t kDefaultPipeBytes = 256 * 1024;
  static constexpr uint32_t kBacklog = 4;

  // links: connections alive at once (a crr flow needs a few: one per transaction, and the
  // closing ones behind it); listeners: crr flows; pipe_bytes: capacity of each direction.
  explicit MemoryNetwork(uint32_t links, uint32_t listeners = 0,
                         uint32_t pipe_bytes = kDefaultPipeBytes)
      : links_(links),
        listeners_(listeners),
        storage_(size_t(links) * 2 * pipe_bytes),
        backlog_(size_t(listeners) * kBacklog) {
    for (uint32_t i = 0; i < links; ++i) {
      for (int d = 0; d < 2; ++d) {
        links_[i].pipe[d].ring = storage_.data() + (size_t(i) * 2 + d) * pipe_bytes;
        links_[i].pipe[d].cap = pipe_bytes;
      }
    }
  }
  MemoryNetwork(const MemoryNetwork&) = delete;
  MemoryNetwork& operator=(const MemoryNetwork&) = delete;

  // The next n connects (to any listener) fail with -err, as a storm's would: ECONNREFUSED,
  // ETIMEDOUT, EADDRNOTAVAIL.
  void fail_connects(uint32_t n, int err) {
    std::lock_guard lock(mu_);
    failing_connects_ = n;
    failing_errno_ = err;
  }

  // Set-up: a connected link for one flow; [0] is the client's end, [1] the server's.
  std::array<std::unique_ptr<MemoryEndpoint>, 2> connect_pair() {
    std::lock_guard lock(mu_);
    int link = take_link();
    if (link < 0) throw std::runtime_error("test::MemoryNetwork: every link is taken");
    std::array<std::unique_ptr<MemoryEndpoint>, 2> ends;
    for (uint8_t e = 0; e < 2; ++e)
      ends[e] = endpoint(MemoryEndpoint::Kind::conn, uint32_t(link), e);
    return ends;
  }
  // Set-up (crr): [0] the target the client opens connections to, [1] the server's listener.
  std::array<std::unique_ptr<MemoryEndpoint>, 2> listener_pair() {
    std::lock_guard lock(mu_);
    uint32_t l = 0;
    while (l < listeners_.size() && listeners_[l].made)
      ++l;
    if (l == listeners_.size())
      throw std::runtime_error("test::MemoryNetwork: every listener is taken");
    listeners_[l].made = true;
    listeners_[l].open = true;
    return {endpoint(MemoryEndpoint::Kind::target, l, 0),
            endpoint(MemoryEndpoint::Kind::listener, l, 1)};
  }

 private:
  friend class MemoryEngine;
  friend struct MemoryEndpoint;

  // A bounded byte ring; rd and wr count every byte ever read and written.
  struct Pipe {
    std::byte* ring = nullptr;
    uint32_t cap = 0;
    uint64_t rd = 0, wr = 0;
    bool shut = false;         // the writer is done: EOF once the ring is drained
    bool reader_gone = false;  // the reader closed its end: writes fail with EPIPE
    uint32_t used() const { return uint32_t(wr - rd); }
    uint32_t write(const std::byte* src, uint32_t n) {
      uint32_t k = std::min(n, cap - used());
      uint32_t at = uint32_t(wr % cap), first = std::min(k, cap - at);
      std::memcpy(ring + at, src, first);
      std::memcpy(ring, src + first, k - first);
      wr += k;
      return k;
    }
    uint32_t read(std::byte* dst, uint32_t n) {
      uint32_t k = std::min(n, used());
      uint32_t at = uint32_t(rd % cap), first = std::min(k, cap - at);
      std::memcpy(dst, ring + at, first);
      std::memcpy(dst + first, ring, k - first);
      rd += k;
      return k;
    }
  };
  // pipe[e] carries what end e writes to the other end.
  struct Link {
    Pipe pipe[2];
    bool open[2] = {false, false};
    bool used = false;
  };
  struct Listener {
    bool made = false, open = false;
    uint32_t head = 0, tail = 0;  // ring over this listener's slice of backlog_
  };

  std::unique_ptr<MemoryEndpoint> endpoint(MemoryEndpoint::Kind kind, uint32_t index, uint8_t end) {
    auto ep = std::make_unique<MemoryEndpoint>();
    ep->net = this;
    ep->kind = kind;
    ep->index = index;
    ep->end = end;
    return ep;
  }

  // Everything below: with mu_ held.
  void changed() {
    ++gen_;
    cv_.notify_all();
  }
  int take_link() {
    for (uint32_t i = 0; i < links_.size(); ++i) {
      Link& k = links_[i];
      if (k.used) continue;
      for (Pipe& p : k.pipe) {
        p.rd = p.wr = 0;
        p.shut = p.reader_gone = false;
      }
      k.open[0] = k.open[1] = true;
      k.used = true;
      return int(i);
    }
    return -1;
  }
  void shut_end(uint32_t link, uint8_t end) {
    links_[link].pipe[end].shut = true;
    changed();
  }
  void close_end(uint32_t link, uint8_t end) {
    Link& k = links_[link];
    if (!k.open[end]) return;
    k.open[end] = false;
    k.pipe[end].shut = true;
    k.pipe[1 - end].reader_gone = true;
    if (!k.open[1 - end]) k.used = false;
    changed();
  }
  // crr client: a new link, queued on the listener until the server accepts it.
  int connect(uint32_t l) {
    if (failing_connects_ > 0) {
      --failing_connects_;
      return -failing_errno_;
    }
    Listener& s = listeners_[l];
    if (!s.open) return -ECONNREFUSED;
    if (s.tail - s.head == kBacklog) return -ECONNREFUSED;  // as a full SYN queue would drop it
    int link = take_link();
    if (link < 0) return -ENOBUFS;
    backlog_[size_t(l) * kBacklog + s.tail++ % kBacklog] = uint32_t(link);
    changed();
    return link;
  }
  // The next link waiting on the listener, -1 when none is.
  int pop(uint32_t l) {
    Listener& s = listeners_[l];
    if (s.head == s.tail) return -1;
    changed();
    return int(backlog_[size_t(l) * kBacklog + s.head++ % kBacklog]);
  }
  void close_listener(uint32_t l) {
    for (int link = pop(l); link >= 0; link = pop(l))
      close_end(uint32_t(link), 1);  // never accepted: the client reads EOF
    listeners_[l].open = false;
    changed();
  }

  std::mutex mu_;
  uint32_t failing_connects_ = 0;  // fail_connects(), under mu_
  int failing_errno_ = 0;
  std::condition_variable cv_;
  uint64_t gen_ = 0;  // bumped at every change; a blocked poll() waits for it to move
  std::vector<Link> links_;
  std::vector<Listener> listeners_;
  std::vector<std::byte> storage_;  // the pipes' rings
  std::vector<uint32_t> backlog_;   // kBacklog link ids per listener
};

inline MemoryEndpoint::~MemoryEndpoint() {
  if (adopted || !net || kind == Kind::target) return;
  std::lock_guard lock(net->mu_);
  if (kind == Kind::conn) {
    net->close_end(index, end);
  } else {
    net->close_listener(index);
  }
}

class MemoryEngine {
 public:
  // What the engine offers, for sizing (engine_config) as well as from caps(): 16 operations
  // per connection and direction, so a stream keeps stream_depth() = 2 sends in flight.
  static Caps memory_caps() {
    Caps c;
    c.max_outstanding = 16;
    return c;
  }

  MemoryEngine(MemoryNetwork& net, const EngineConfig& cfg)
      : net_(net),
        depth_(std::bit_ceil(std::max<uint32_t>(cfg.queue_depth, 2))),
        conns_(std::max<uint32_t>(cfg.max_conns, 1)),
        ops_(conns_.size() * 2 * depth_),
        pool_(cfg.buffers, cfg.buffer_size) {}
  ~MemoryEngine() {
    for (size_t id = 0; id < conns_.size(); ++id)
      close(int(id));
  }
  MemoryEngine(const MemoryEngine&) = delete;
  MemoryEngine& operator=(const MemoryEngine&) = delete;

  int adopt(Endpoint& ep) { return adopt_as(ep, MemoryEndpoint::Kind::conn); }
  int listen_adopt(Endpoint& ep) { return adopt_as(ep, MemoryEndpoint::Kind::listener); }
  int open(const Endpoint& ep) {
    const auto* m = dynamic_cast<const MemoryEndpoint*>(&ep);
    if (!m || m->net != &net_ || m->kind != MemoryEndpoint::Kind::target) return -EINVAL;
    int id = free_slot();
    if (id < 0) return -ENOSPC;
    std::lock_guard lock(net_.mu_);
    int link = net_.connect(m->index);
    if (link < 0) return link;
    use(id, State::conn, uint32_t(link), 0);
    return id;
  }
  int accept(int listen_id) {
    if (!is(listen_id, State::listener)) return -EBADF;
    std::lock_guard lock(net_.mu_);
    int link = net_.pop(conns_[listen_id].index);
    if (link < 0) return -EAGAIN;
    int id = free_slot();
    if (id < 0) {
      net_.close_end(uint32_t(link), 1);  // taken and dropped: the client reads EOF
      return -ENOSPC;
    }
    use(id, State::conn, uint32_t(link), 1);
    return id;
  }
  void close(int id) {
    if (id < 0 || size_t(id) >= conns_.size() || conns_[id].state == State::free) return;
    Conn& c = conns_[id];
    {
      std::lock_guard lock(net_.mu_);
      if (c.state == State::conn) {
        net_.close_end(c.index, c.end);
      } else {
        net_.close_listener(c.index);
      }
    }
    c = Conn{};
  }
  void shutdown_send(int id) {
    if (!is(id, State::conn)) return;
    std::lock_guard lock(net_.mu_);
    net_.shut_end(conns_[id].index, conns_[id].end);
  }
  int post(int id, std::span<const WorkReq> reqs) {
    if (id < 0 || size_t(id) >= conns_.size() || conns_[id].state == State::free) return -EBADF;
    Conn& c = conns_[id];
    int n = 0;
    for (const WorkReq& r : reqs) {
      bool fits =
          c.state == State::listener ? r.op == Op::accept : r.op == Op::send || r.op == Op::recv;
      if (!fits) return n > 0 ? n : -EOPNOTSUPP;
      bool send = r.op == Op::send;
      Queue& q = send ? c.sq : c.rq;
      if (q.size() == depth_) break;
      slot(id, send, q.tail++) = r;
      ++n;
    }
    return n;
  }
  int flush() { return 0; }
  int poll(std::span<Completion> out, Wait wait, int64_t timeout_ns) {
    std::unique_lock lock(net_.mu_);
    size_t n = progress(out);
    if (n > 0 || wait != Wait::block || timeout_ns <= 0) return int(n);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
    while (n == 0) {
      uint64_t seen = net_.gen_;
      if (!net_.cv_.wait_until(lock, deadline, [&] { return net_.gen_ != seen; })) break;
      n = progress(out);
    }
    return int(n);
  }
  BufferPool& pool() { return pool_; }
  Caps caps() const { return memory_caps(); }

 private:
  enum class State : uint8_t { free, conn, listener };
  struct Queue {
    uint32_t head = 0, tail = 0;  // ring over the connection's slice of ops_
    uint32_t size() const { return tail - head; }
  };
  struct Conn {
    State state = State::free;
    uint32_t index = 0;  // link or listener
    uint8_t end = 0;
    uint32_t send_off = 0;  // bytes of the head send already in the pipe
    Queue sq, rq;           // sends; receives and accepts
  };

  bool is(int id, State s) const {
    return id >= 0 && size_t(id) < conns_.size() && conns_[id].state == s;
  }
  int free_slot() const {
    for (size_t id = 0; id < conns_.size(); ++id)
      if (conns_[id].state == State::free) return int(id);
    return -1;
  }
  void use(int id, State s, uint32_t index, uint8_t end) {
    conns_[id] = Conn{};
    conns_[id].state = s;
    conns_[id].index = index;
    conns_[id].end = end;
  }
  int adopt_as(Endpoint& ep, MemoryEndpoint::Kind kind) {
    auto* m = dynamic_cast<MemoryEndpoint*>(&ep);
    if (!m || m->net != &net_ || m->kind != kind || m->adopted) return -EINVAL;
    int id = free_slot();
    if (id < 0) return -ENOSPC;
    use(id, kind == MemoryEndpoint::Kind::conn ? State::conn : State::listener, m->index, m->end);
    m->adopted = true;
    return id;
  }
  WorkReq& slot(int id, bool send, uint32_t pos) {
    return ops_[(size_t(id) * 2 + (send ? 0 : 1)) * depth_ + (pos & (depth_ - 1))];
  }

  // With the network's mutex held: runs every connection's queued work that can complete now.
  size_t progress(std::span<Completion> out) {
    size_t n = 0;
    for (size_t id = 0; id < conns_.size() && n < out.size(); ++id) {
      if (conns_[id].state == State::listener) {
        n += run_accepts(int(id), out.subspan(n));
      } else if (conns_[id].state == State::conn) {
        n += run_sends(int(id), out.subspan(n));
        n += run_recvs(int(id), out.subspan(n));
      }
    }
    return n;
  }
  size_t run_sends(int id, std::span<Completion> out) {
    Conn& c = conns_[id];
    MemoryNetwork::Pipe& p = net_.links_[c.index].pipe[c.end];
    size_t n = 0;
    while (n < out.size() && c.sq.size() > 0) {
      const WorkReq& r = slot(id, true, c.sq.head);
      int32_t rc = -EPIPE;
      if (!p.reader_gone && !p.shut) {
        uint32_t k = p.write(r.buf.data + c.send_off, r.buf.len - c.send_off);
        if (k > 0) net_.changed();
        c.send_off += k;
        if (c.send_off < r.buf.len) break;  // the pipe is full: the rest goes later
        rc = int32_t(r.buf.len);
      }
      c.send_off = 0;
      out[n++] = Completion{r.cookie, rc, uint16_t(rc < 0 ? kCompError : 0), 0, nullptr};
      c.sq.head++;
    }
    return n;
  }
  size_t run_recvs(int id, std::span<Completion> out) {
    Conn& c = conns_[id];
    MemoryNetwork::Pipe& p = net_.links_[c.index].pipe[1 - c.end];
    size_t n = 0;
    while (n < out.size() && c.rq.size() > 0) {
      const WorkReq& r = slot(id, false, c.rq.head);
      int32_t rc = 0;
      if (p.used() > 0) {
        rc = int32_t(p.read(r.buf.data, r.buf.len));
        net_.changed();
      } else if (!p.shut) {
        break;  // nothing yet
      }
      out[n++] = Completion{r.cookie, rc, 0, 0, nullptr};
      c.rq.head++;
    }
    return n;
  }
  size_t run_accepts(int id, std::span<Completion> out) {
    size_t n = 0;
    while (n < out.size() && conns_[id].rq.size() > 0) {
      const WorkReq& r = slot(id, false, conns_[id].rq.head);
      int link = net_.pop(conns_[id].index);
      if (link < 0) break;  // nobody is connecting
      int32_t rc = free_slot();
      if (rc >= 0) {
        use(rc, State::conn, uint32_t(link), 1);
      } else {
        rc = -ENOSPC;
        net_.close_end(uint32_t(link), 1);  // taken and dropped: the client reads EOF
      }
      out[n++] = Completion{r.cookie, rc, uint16_t(rc < 0 ? kCompError : 0), 0, nullptr};
      conns_[id].rq.head++;
    }
    return n;
  }

  MemoryNetwork& net_;
  uint32_t depth_;  // power of two
  std::vector<Conn> conns_;
  std::vector<WorkReq> ops_;  // conns_.size() * 2 * depth_
  BufferPool pool_;
};

static_assert(EngineType<MemoryEngine>);

}  // namespace mtperf::test

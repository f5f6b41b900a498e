#pragma once
// The per-role steps of Worker<E> (included by worker_impl.hpp only).
#include <cstdlib>

namespace mtperf {

template <EngineType E>
void Worker<E>::pump_sender(Flow& f, int64_t now) {
  if (f.done || f.shut) return;
  if (phase_done()) {
    if (f.sends_out == 0) finish_sender(f);
    return;
  }
  if (passive_) return;
  uint32_t depth = f.nbufs - 1;
  uint32_t size = spec_.stream_msg_size();
  bool udp = f.slot->proto == Proto::udp;
  if (f.interval_ns > 0 && f.next_send_ns < now - kPacingCreditNs) {
    f.next_send_ns = now - kPacingCreditNs;  // a long stall does not turn into a burst
  }
  while (f.sends_out < depth && !f.done) {
    if (f.interval_ns > 0) {
      if (now < f.next_send_ns) break;
      f.next_send_ns += f.interval_ns;
    }
    Buf b = send_buf(f, size);
    if (udp) write_header(f, b, now);
    fill(f, b, udp, f.seq);
    f.seq += udp;
    post(f, f.conn, Op::send, b, kSend);
  }
}

template <EngineType E>
void Worker<E>::finish_sender(Flow& f) {
  f.shut = true;
  if (f.slot->proto == Proto::tcp) {
    e_.shutdown_send(f.conn);
    finish(f);
    return;
  }
  // UDP: end-of-stream datagrams (several: one may be lost); done when they are sent. A peer's
  // stream has none (iperf3: its control connection ends the test).
  if (f.slot->udp_wire != UdpWire::mtperf) {
    finish(f);
    return;
  }
  int64_t now = now_ns();
  for (int i = 0; i < kUdpFinCopies && !f.done; ++i) {
    Buf b = send_buf(f, kUdpHeaderBytes);
    write_udp_header(b.data, kFinSeq, now);
    post(f, f.conn, Op::send, b, kFin);
  }
}

template <EngineType E>
void Worker<E>::rr_send_request(Flow& f, int64_t now) {
  Buf b = send_buf(f, spec_.req_size);
  size_t base = size_t(f.idx) * spec_.burst;
  if (f.slot->proto == Proto::udp) {
    uint32_t j = 0;
    while (j < spec_.burst && seqs_[base + j] != 0)
      ++j;
    if (j == spec_.burst) return;  // every slot busy: cannot happen with inflight <= burst
    uint64_t seq = ++f.seq;        // from 1: 0 marks a free slot
    seqs_[base + j] = seq;
    ring_[base + j] = now;
    f.timer_due_ns = std::min(f.timer_due_ns, now + udp_timeout_ns_);
    write_udp_header(b.data, seq, now);
    fill(f, b, true, seq);
  } else {
    ring_[base + f.ring_head] = now;
    f.ring_head = f.ring_head + 1 == spec_.burst ? 0 : f.ring_head + 1;
    fill(f, b, false, 0);
  }
  ++f.inflight;
  post(f, f.conn, Op::send, b, kSend);
}

template <EngineType E>
void Worker<E>::rr_client_recv(Flow& f, const Completion& c, int64_t now) {
  if (c.bytes == 0) {
    if (f.shut) {
      finish(f);
    } else {
      fail(f, "the server closed the connection during the test", ECONNRESET);
    }
    return;
  }
  FlowCounters& ctr = f.slot->counters;
  FlowCounters::add(ctr.bytes_recv, uint64_t(c.bytes));
  FlowCounters::add(ctr.msgs_recv, 1);
  check_stream(f, c);
  f.acc += uint64_t(c.bytes);
  size_t base = size_t(f.idx) * spec_.burst;
  bool more = !phase_done();
  while (f.acc >= spec_.resp_size && f.inflight > 0) {
    f.acc -= spec_.resp_size;
    --f.inflight;
    record_latency(f, now - ring_[base + f.ring_tail]);
    f.ring_tail = f.ring_tail + 1 == spec_.burst ? 0 : f.ring_tail + 1;
    FlowCounters::add(ctr.transactions, 1);
    if (more) rr_send_request(f, now);
  }
  if (!more && f.inflight == 0 && !f.shut) {
    e_.shutdown_send(f.conn);
    f.shut = true;
  }
  post_recv(f, f.conn);
}

template <EngineType E>
void Worker<E>::rr_server_recv(Flow& f, const Completion& c) {
  FlowCounters& ctr = f.slot->counters;
  if (f.slot->proto == Proto::udp) {
    if (drop_short_datagram(f, c)) return;
    UdpHeader h = read_udp_header(recv_data(f, c));
    if (h.seq == kFinSeq) {
      finish(f);
      return;
    }
    if (!is_data_seq(h.seq)) {
      post_recv(f, f.conn);
      return;
    }
    FlowCounters::add(ctr.bytes_recv, uint64_t(c.bytes));
    FlowCounters::add(ctr.msgs_recv, 1);
    check_datagram(f, c, h.seq, spec_.req_size);
    Buf b = send_buf(f, spec_.resp_size);
    write_udp_header(b.data, h.seq, h.send_ns);
    fill(f, b, true, h.seq);
    post(f, f.conn, Op::send, b, kSend);
    FlowCounters::add(ctr.transactions, 1);
    post_recv(f, f.conn);
    return;
  }
  if (c.bytes == 0) {
    e_.shutdown_send(f.conn);
    finish(f);
    return;
  }
  FlowCounters::add(ctr.bytes_recv, uint64_t(c.bytes));
  FlowCounters::add(ctr.msgs_recv, 1);
  check_stream(f, c);
  f.acc += uint64_t(c.bytes);
  while (f.acc >= spec_.req_size && !f.done) {
    f.acc -= spec_.req_size;
    Buf b = send_buf(f, spec_.resp_size);
    fill(f, b, false, 0);
    post(f, f.conn, Op::send, b, kSend);
    FlowCounters::add(ctr.transactions, 1);
  }
  post_recv(f, f.conn);
}

template <EngineType E>
void Worker<E>::udp_rr_client_recv(Flow& f, const Completion& c, int64_t now) {
  FlowCounters& ctr = f.slot->counters;
  if (drop_short_datagram(f, c)) return;
  FlowCounters::add(ctr.bytes_recv, uint64_t(c.bytes));
  FlowCounters::add(ctr.msgs_recv, 1);
  UdpHeader h = read_udp_header(recv_data(f, c));
  check_datagram(f, c, h.seq, spec_.resp_size);
  size_t base = size_t(f.idx) * spec_.burst;
  uint32_t j = 0;
  while (j < spec_.burst && seqs_[base + j] != h.seq)
    ++j;
  if (j == spec_.burst) {
    ++f.slot->stats.udp.duplicates;  // an answer that arrived after it was counted lost
  } else {
    seqs_[base + j] = 0;
    --f.inflight;
    record_latency(f, now - ring_[base + j]);
    FlowCounters::add(ctr.transactions, 1);
    if (!phase_done()) rr_send_request(f, now);
  }
  if (phase_done() && f.inflight == 0) {
    on_phase_done(f, now);  // sends the end-of-test datagrams
    return;
  }
  post_recv(f, f.conn);
}

template <EngineType E>
void Worker<E>::udp_receiver_recv(Flow& f, const Completion& c, int64_t now) {
  if (f.slot->udp_wire != UdpWire::mtperf) {
    peer_datagram_recv(f, c, now);
    return;
  }
  FlowCounters& ctr = f.slot->counters;
  if (drop_short_datagram(f, c)) return;
  UdpHeader h = read_udp_header(recv_data(f, c));
  UdpStats& u = f.slot->stats.udp;
  if (h.seq == kFinSeq) {
    u.fin_seen = true;
    finish(f);
    return;
  }
  if (!is_data_seq(h.seq)) {
    post_recv(f, f.conn);
    return;
  }
  FlowCounters::add(ctr.bytes_recv, uint64_t(c.bytes));
  FlowCounters::add(ctr.msgs_recv, 1);
  check_datagram(f, c, h.seq, spec_.stream_msg_size());
  u.count(h.seq, now - h.send_ns);
  post_recv(f, f.conn);
}

// A datagram of a peer's stream (iperf3: its header, the sequence from 1; no end-of-stream
// datagram, the flow ends when told to finish). One without a whole header, or with sequence
// 0, is not the peer's: counted as an error.
template <EngineType E>
void Worker<E>::peer_datagram_recv(Flow& f, const Completion& c, int64_t now) {
  FlowCounters& ctr = f.slot->counters;
  const bool wide = f.slot->udp_wire == UdpWire::iperf3_64;
  UdpHeader h{0, 0};
  if (c.bytes >= int32_t(iperf3_udp_header_bytes(wide)))
    h = read_iperf3_udp_header(recv_data(f, c), wide);
  if (h.seq == 0) [[unlikely]] {
    FlowCounters::add(ctr.errors, 1);
  } else {
    FlowCounters::add(ctr.bytes_recv, uint64_t(c.bytes));
    FlowCounters::add(ctr.msgs_recv, 1);
    f.slot->stats.udp.count(h.seq - 1, now - h.send_ns);
  }
  post_recv(f, f.conn);
}

// A connect that failed is counted by its cause and tried again: at the flow's next --rate
// slot, or after kConnectRetryNs. Only when connects have failed for kConnectGiveUpNs without
// one succeeding does the flow fail, naming the last error.
inline constexpr int64_t kConnectRetryNs = 1'000'000;
inline constexpr int64_t kConnectGiveUpNs = 2'000'000'000;

template <EngineType E>
void Worker<E>::crr_open(Flow& f) {
  // The clock is read afresh around the connect: it blocks until the handshake is done, and its
  // time is the connect latency.
  const int64_t t0 = now_ns();
  int id = e_.open(*f.slot->endpoint);
  const int64_t t1 = now_ns();
  if (id < 0) {
    if (phase_done()) {
      finish(f);
    } else {
      crr_connect_failed(f, -id, t1);
    }
    return;
  }
  f.connect_ns = t1 - t0;  // sampled with its transaction, in the window that counts it
  f.failing_since_ns = 0;
  f.conn = id;
  f.acc = 0;
  f.started_ns = t0;
  Buf b = send_buf(f, spec_.req_size);
  fill_at(f, b, 0);  // each connection's stream starts again
  post(f, id, Op::send, b, kSend);
  post_recv(f, id);
}

template <EngineType E>
void Worker<E>::crr_client_recv(Flow& f, const Completion& c, int conn, int64_t now) {
  if (c.bytes <= 0) {
    close_conn(conn);
    f.conn = -1;
    if (phase_done()) {
      finish(f);
    } else {
      fail(f, "crr: the server closed before answering", c.bytes < 0 ? -c.bytes : ECONNRESET);
    }
    return;
  }
  FlowCounters& ctr = f.slot->counters;
  FlowCounters::add(ctr.bytes_recv, uint64_t(c.bytes));
  FlowCounters::add(ctr.msgs_recv, 1);
  check(f, c, f.acc);
  f.acc += uint64_t(c.bytes);
  if (f.acc < spec_.resp_size) {
    post_recv(f, conn);
    return;
  }
  // One reading for both samples: a connect belongs to the window its transaction does, so the
  // connects timed are exactly the transactions timed.
  if (measuring() && spec_.measure) {
    sample_latency(f, now - f.started_ns);
    sample_connect(f.connect_ns);
  }
  FlowCounters::add(ctr.transactions, 1);
  close_conn(conn);
  f.conn = -1;
  if (phase_done()) {
    finish(f);
  } else {
    crr_next(f, now);
  }
}

// The next connection: at once, or at the flow's next --rate slot (one every interval_ns from
// the first; a late one goes at once, with at most kPacingCreditNs caught up).
template <EngineType E>
void Worker<E>::crr_next(Flow& f, int64_t now) {
  if (f.interval_ns > 0) {
    f.next_send_ns = std::max(f.next_send_ns + f.interval_ns, now - kPacingCreditNs);
    if (now < f.next_send_ns) {
      open_at(f, f.next_send_ns);
      return;
    }
  }
  crr_open(f);
}

template <EngineType E>
void Worker<E>::crr_connect_failed(Flow& f, int err, int64_t now) {
  f.slot->stats.connect_failures.count(err);
  if (f.failing_since_ns == 0) f.failing_since_ns = now;
  if (now - f.failing_since_ns >= kConnectGiveUpNs) {
    fail(f, "crr connect (every try for 2 s)", err);
    return;
  }
  // Never at once: a refused connect returns in microseconds, and a retry loop would spin.
  int64_t at = now + kConnectRetryNs;
  if (f.interval_ns > 0) {
    f.next_send_ns = std::max(f.next_send_ns + f.interval_ns, at);
    at = f.next_send_ns;
  }
  open_at(f, at);
}

template <EngineType E>
void Worker<E>::on_accept(Flow& f, const Completion& c) {
  if (c.bytes < 0) {
    if (c.bytes == -EMFILE || c.bytes == -ENFILE || c.bytes == -ENOSPC) {
      fail(f, "crr accept", -c.bytes);
      return;
    }
    FlowCounters::add(f.slot->counters.errors, 1);
  } else {
    f.conn = c.bytes;
    f.acc = 0;
    post_recv(f, f.conn);
  }
  post(f, f.listen, Op::accept, Buf{}, kAccept);
}

template <EngineType E>
void Worker<E>::crr_server_recv(Flow& f, const Completion& c, int conn) {
  if (c.bytes <= 0) {  // the client is done with this connection (or reset it)
    close_conn(conn);
    if (conn == f.conn) f.conn = -1;
    return;
  }
  FlowCounters& ctr = f.slot->counters;
  FlowCounters::add(ctr.bytes_recv, uint64_t(c.bytes));
  FlowCounters::add(ctr.msgs_recv, 1);
  if (conn == f.conn) {
    check(f, c, f.acc);
    f.acc += uint64_t(c.bytes);
    if (f.acc >= spec_.req_size) {
      f.acc = 0;
      Buf b = send_buf(f, spec_.resp_size);
      fill_at(f, b, 0);
      post(f, conn, Op::send, b, kSend);
      FlowCounters::add(ctr.transactions, 1);
    }
  }
  post_recv(f, conn);
}

}  // namespace mtperf

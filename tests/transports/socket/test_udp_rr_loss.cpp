// A UDP rr client (Worker<SocketEngine>, the product's pairing) against a server the test plays
// on the other end of a real 127.0.0.1 flow: it answers every request but each fourth. Each
// unanswered request is counted lost once its --udp-timeout has passed, the flow goes on with
// the next, and at the end of the phase the client sends its end-of-test datagrams. The timeout
// holds in the engine's blocking mode too, where the client waits inside recv().
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <thread>
#include <vector>

#include "tests/transports/socket/socket_test_support.hpp"
#include "workloads/engine_config.hpp"
#include "workloads/udp_header.hpp"
#include "workloads/worker.hpp"

using namespace mtperf;
using namespace mtperf::test;

TEST_CASE("UDP rr: an unanswered request is lost after the timeout, and the flow goes on") {
  auto t = socket_transport();
  SocketOptions opts;
  Flow f = make_flow(*t, test::flow_setup(Proto::udp, opts));

  TestSpec spec;
  spec.workload = Workload::rr;
  spec.proto = Proto::udp;
  spec.req_size = 64;
  spec.resp_size = 64;
  spec.udp_timeout_s = 0.01;
  PhaseClock clock;
  clock.phase = Phase::measure;
  clock.hard_deadline_ns = mono_ns() + 10'000 * kMs;
  FlowSlot slot;
  slot.role = Role::rr_client;
  slot.proto = Proto::udp;
  slot.endpoint = std::move(f.client);
  WorkerJob job;
  job.flows = {&slot};
  job.spec = &spec;
  job.clock = &clock;
  SocketEngine engine(engine_config(job, find_transport("socket").caps));
  std::jthread client([&] { Worker<SocketEngine>(engine, job).run(); });

  const int fd = fd_of(*f.server);
  inet::set_io_timeout(fd, 2000);
  std::array<std::byte, 2048> buf{};
  uint64_t requests = 0, answered = 0, dropped = 0, fins = 0, last_seq = 0;
  bool out_of_order = false;
  // From a dropped request to the next one: the client's --udp-timeout, however long the
  // engine's own bound on a blocking receive (200 ms) is.
  int64_t dropped_at = 0;
  std::vector<int64_t> gaps_ns;
  while (mono_ns() < clock.hard_deadline_ns) {
    ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
    REQUIRE(n >= ssize_t(kUdpHeaderBytes));
    UdpHeader h = read_udp_header(buf.data());
    if (h.seq == kFinSeq) {
      ++fins;
      break;
    }
    out_of_order |= h.seq != last_seq + 1;  // a request goes out only when the last one ended
    last_seq = h.seq;
    ++requests;
    if (dropped_at != 0) gaps_ns.push_back(mono_ns() - dropped_at);
    dropped_at = 0;
    if (requests == 200) clock.phase = Phase::done;  // the rest is answered
    if (requests % 4 == 0 && requests < 200) {
      ++dropped;
      dropped_at = mono_ns();
      continue;
    }
    write_udp_header(buf.data(), h.seq, h.send_ns);
    REQUIRE(::send(fd, buf.data(), size_t(n), 0) == n);
    ++answered;
  }
  client.join();

  CHECK(fins == 1);
  CHECK(requests == 200);
  CHECK_FALSE(out_of_order);
  CHECK(slot.stats.error.empty());
  CHECK(dropped == 49);
  CHECK(slot.stats.udp.lost == dropped);
  CHECK(slot.stats.udp.duplicates == 0);
  CounterValues c = CounterValues::read(slot.counters);
  CHECK(c.transactions == answered);
  CHECK(c.msgs_sent == requests);  // the end-of-test datagrams are not data
  CHECK(c.errors == 0);
  REQUIRE(gaps_ns.size() == dropped);
  std::sort(gaps_ns.begin(), gaps_ns.end());
  CHECK(gaps_ns[gaps_ns.size() / 2] >= 10 * kMs);
  CHECK(gaps_ns[gaps_ns.size() / 2] < 100 * kMs);
}

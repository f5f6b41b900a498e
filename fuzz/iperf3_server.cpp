// Fuzz target: what `mtperf serve --iperf3` does with an iperf3 client's bytes — the server's
// state machine (peers/iperf3/server_machine.hpp) driven through a whole conversation by the
// input: the parameters, TEST_END, the client's results and IPERF_DONE, in reads of the sizes a
// socket hands out.
//
// Input: a first byte that splits the rest into reads of 1..256 bytes; the rest is the client's
// side of the control connection after its cookie. Where the machine asks for the server's doing
// (create the streams, start, ask for and give results) the target does it at once.
//
// Findings beyond crashes and sanitizer reports: an exception other than ProtocolError; a
// machine that buffers more than one message's bound; an event out of the conversation's order.
#include <cstdint>

#include "fuzz/fuzz_support.hpp"
#include "peers/iperf3/server_machine.hpp"

namespace mtperf::fuzz {
namespace {

void drive(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return;
  const std::size_t chunk = std::size_t(data[0]) + 1;
  iperf3::ServerMachine m;
  using Event = iperf3::ServerMachine::Event;
  int step = 0;  // the events seen, in order: params, test_end, results, done
  try {
    for (std::size_t at = 1; at < size;) {
      const std::size_t n = std::min(chunk, size - at);
      Event e = m.feed({data + at, n});
      at += n;
      while (e != Event::none) {
        switch (e) {
          case Event::params:
            check(step == 0, "params first");
            check(m.params().parallel >= 1 && m.params().parallel <= iperf3::kMaxStreams,
                  "parallel within its bound");
            m.create_streams();
            m.start_test();
            break;
          case Event::test_end:
            check(step == 1, "TEST_END after the parameters");
            m.ask_results();
            break;
          case Event::results:
            check(step == 2, "results after TEST_END");
            check(m.client_results().streams.size() <= 2 * iperf3::kMaxStreams,
                  "streams within their bound");
            m.give_results(iperf3::Results{});
            break;
          case Event::done:
            check(step == 3, "IPERF_DONE last");
            check(m.finished(), "finished after IPERF_DONE");
            break;
          case Event::none:
            break;
        }
        ++step;
        e = m.feed({});
      }
      (void)m.take_output();
    }
  } catch (const iperf3::ProtocolError&) {
  }
}

}  // namespace
}  // namespace mtperf::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mtperf::fuzz::drive(data, size);
  return 0;
}

// Fuzz target: what `mtperf run --peer iperf3` does with an iperf3 server's bytes — the client's
// state machine (peers/iperf3/client_machine.hpp) driven through a whole conversation by the
// input, and the parameter and result parsers a server and a client apply to the JSON inside.
//
// Input: a first byte that splits the rest into reads of 1..256 bytes (as a socket hands them
// out), the rest being the server's side of the control connection. Where the machine asks for
// this side's doing (streams, the end of the test, its results) the target does it at once.
// The same bytes are also parsed as a JSON object and read as parameters and as results.
//
// Findings beyond crashes and sanitizer reports: an exception other than ProtocolError; a
// machine that holds more than one message's bound; results that do not survive their own JSON.
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_support.hpp"
#include "peers/iperf3/client_machine.hpp"
#include "peers/iperf3/protocol.hpp"

namespace mtperf::fuzz {
namespace {

void drive(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return;
  const std::size_t chunk = std::size_t(data[0]) + 1;
  iperf3::Params p;
  p.get_server_output = (data[0] & 1) != 0;
  iperf3::ClientMachine m(p, iperf3::make_cookie());
  using Event = iperf3::ClientMachine::Event;
  try {
    for (std::size_t at = 1; at < size;) {
      const std::size_t n = std::min(chunk, size - at);
      Event e = m.feed({data + at, n});
      at += n;
      while (e != Event::none) {
        if (e == Event::test_running) m.end_test();
        if (e == Event::results_wanted) m.give_results(iperf3::Results{});
        if (e == Event::done) {
          const iperf3::Results& r = m.results();
          check(iperf3::results_from_json(iperf3::to_json(r)).streams.size() == r.streams.size(),
                "results survive their own JSON");
        }
        e = m.feed({});
      }
      (void)m.take_output();
    }
  } catch (const iperf3::ProtocolError&) {
  }
}

void parse(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    nlohmann::json j = iperf3::parse_object(text, "input");
    try {
      iperf3::Params p = iperf3::params_from_json(j);
      check(iperf3::params_from_json(iperf3::to_json(p)).parallel == p.parallel,
            "parameters survive their own JSON");
    } catch (const iperf3::ProtocolError&) {
    }
    iperf3::results_from_json(j);
  } catch (const iperf3::ProtocolError&) {
  }
}

}  // namespace
}  // namespace mtperf::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mtperf::fuzz::drive(data, size);
  mtperf::fuzz::parse(data, size);
  return 0;
}

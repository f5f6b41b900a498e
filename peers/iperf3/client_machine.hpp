#pragma once
// The client's half of iperf3's control conversation (protocol.hpp) as a pure state machine:
// the server's bytes go in (feed), what to send comes out (take_output), and what the caller
// must do next is an Event. No socket, no clock: the caller reads with deadlines and bounds how
// long each step may take, so that tests drive it from transcripts and the fuzzer from noise.
//
// Bounded: the machine never holds more than one message of the server's, whose length is
// checked against its bound before it is buffered.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "peers/iperf3/protocol.hpp"

namespace mtperf::iperf3 {

class ClientMachine {
 public:
  enum class Event : uint8_t {
    none,            // feed more bytes
    create_streams,  // connect every data stream now, each greeted with cookie()
    test_start,      // the server set its streams up
    test_running,    // start the traffic; call end_test() when it is over
    results_wanted,  // the server asks for this side's results: give_results()
    done,            // the server's results are in results(); IPERF_DONE is queued
  };

  // Queues the cookie: the first bytes of the control connection.
  ClientMachine(Params params, const Cookie& cookie);

  // Takes in bytes from the control connection; returns the next event (none: more bytes are
  // needed). Call again with an empty span to read further events from bytes already fed.
  // Throws ProtocolError with the server's words (ACCESS_DENIED: "the server is busy running a
  // test"; SERVER_ERROR with its codes), or naming the unexpected byte or bad message.
  Event feed(std::span<const uint8_t> bytes);
  // Bytes to send to the server now (the caller sends them all, in order).
  std::vector<uint8_t> take_output();

  void end_test();                      // after test_running: queues TEST_END
  void give_results(const Results& r);  // after results_wanted: queues this side's results
  // The server's results, once `done` was returned.
  const Results& results() const { return results_; }
  const Cookie& cookie() const { return cookie_; }
  // Where the conversation stands, for error messages ("waiting for CREATE_STREAMS").
  std::string waiting_for() const;
  bool finished() const { return step_ == Step::finished; }
  bool ended() const { return ended_; }  // TEST_END was queued

 private:
  enum class Step : uint8_t {
    param_exchange,
    create_streams,
    test_start,
    test_running,
    running,           // until end_test()
    exchange_results,  // TEST_END sent; the server's EXCHANGE_RESULTS
    giving_results,    // waiting for give_results()
    server_results,    // the server's JSON
    display_results,
    finished,
  };
  // feed's steps, by what the server's bytes are at this point of the conversation.
  Event take_error_codes();  // SERVER_ERROR's two codes: throws once they are in
  Event take_server_results();
  Event take_while_running();
  Event on_state(State s);
  void expect(Step step, State s) const;  // throws when the state comes out of turn
  Event advance(State s, Step from, Step to, Event e);
  std::optional<std::vector<uint8_t>> take_bytes(size_t n);  // n buffered bytes, or none yet

  Params params_;
  Cookie cookie_;
  Step step_ = Step::param_exchange;
  bool ended_ = false;
  std::vector<uint8_t> in_, out_;
  std::optional<uint32_t> json_len_;  // the server's results: the announced length, read
  bool error_codes_ = false;          // SERVER_ERROR seen: its two codes come next
  Results results_;
};

}  // namespace mtperf::iperf3

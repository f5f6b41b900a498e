#pragma once
// The server's half of iperf3's control conversation (protocol.hpp) as a pure state machine:
// the client's bytes (after its cookie) go in, what to send comes out, and what the caller must
// do next is an Event. No socket, no clock: the caller reads with deadlines, counts the data
// streams as they connect and bounds how long each step may take, so that tests drive it from
// transcripts and the fuzzer from noise.
//
// Bounded: the machine holds at most one message of the client's, whose length is checked
// against its bound (kMaxParamsBytes, kMaxResultsBytes) before a byte of it is buffered.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "peers/iperf3/protocol.hpp"

namespace mtperf::iperf3 {

class ServerMachine {
 public:
  enum class Event : uint8_t {
    none,      // feed more bytes
    params,    // params() are in: refuse(), deny() or create_streams()
    test_end,  // the client ended the test (TEST_END): ask_results() once the streams are drained
    results,   // the client's results are in client_results(): give_results()
    done,      // IPERF_DONE: the conversation is over
  };

  // Queues PARAM_EXCHANGE: the server's first byte once the cookie was read.
  ServerMachine();

  // Takes in bytes from the control connection; returns the next event (none: more bytes are
  // needed). Call again with an empty span to read further events from bytes already fed.
  // Throws ProtocolError naming the unexpected byte, the oversized or malformed message, or the
  // client's own ending (CLIENT_TERMINATE, a state byte out of turn).
  Event feed(std::span<const uint8_t> bytes);
  // Bytes to send to the client now (the caller sends them all, in order).
  std::vector<uint8_t> take_output();

  const Params& params() const { return params_; }
  // After `params`: SERVER_ERROR with iperf3's error number and errno; the conversation is over.
  void refuse(int32_t iperf_errno, int32_t sys_errno = 0);
  // ACCESS_DENIED (iperf3's "the server is busy"); the conversation is over.
  void deny();
  void create_streams();  // after `params`: CREATE_STREAMS
  void start_test();      // every stream connected: TEST_START and TEST_RUNNING
  void ask_results();     // after `test_end`: EXCHANGE_RESULTS
  const Results& client_results() const { return client_results_; }
  void give_results(const Results& r);  // after `results`: this side's, then DISPLAY_RESULTS

  // Where the conversation stands, for error messages ("the parameters").
  std::string waiting_for() const;
  bool finished() const { return step_ == Step::finished; }

 private:
  enum class Step : uint8_t {
    params,          // the client's parameters
    deciding,        // waiting for refuse/deny/create_streams
    streams,         // waiting for start_test
    running,         // TEST_END expected
    ended,           // waiting for ask_results
    client_results,  // the client's results
    giving,          // waiting for give_results
    iperf_done,      // IPERF_DONE expected
    finished,
  };
  // feed's steps: the bytes into the buffer, then what the step awaits out of it.
  void buffer(std::span<const uint8_t> bytes);
  Event take_params();
  Event take_state();
  Event take_client_results();
  // The JSON message in the buffer once it is whole: false while more is needed.
  bool take_json(uint32_t cap, std::string_view what, nlohmann::json& out);
  void push(State s) { out_.push_back(byte_of(s)); }

  Step step_ = Step::params;
  std::vector<uint8_t> in_, out_;
  Params params_;
  Results client_results_;
};

}  // namespace mtperf::iperf3

#include "peers/iperf3/server_machine.hpp"

#include <arpa/inet.h>

#include <cstring>

namespace mtperf::iperf3 {

ServerMachine::ServerMachine() {
  push(State::param_exchange);
}

std::vector<uint8_t> ServerMachine::take_output() {
  std::vector<uint8_t> o;
  o.swap(out_);
  return o;
}

std::string ServerMachine::waiting_for() const {
  switch (step_) {
    case Step::params:
      return "the parameters";
    case Step::deciding:
      return "the server's decision";
    case Step::streams:
      return "the data streams";
    case Step::running:
      return "TEST_END";
    case Step::ended:
      return "the streams' last bytes";
    case Step::client_results:
      return "the client's results";
    case Step::giving:
      return "the server's results";
    case Step::iperf_done:
      return "IPERF_DONE";
    case Step::finished:
      return "nothing";
  }
  return "?";
}

bool ServerMachine::take_json(uint32_t cap, std::string_view what, nlohmann::json& out) {
  if (in_.size() < 4) return false;
  const uint32_t n = frame_length(std::span<const uint8_t, 4>(in_.data(), 4), cap, what);
  if (in_.size() < 4 + size_t(n)) return false;
  std::string_view text(reinterpret_cast<const char*>(in_.data()) + 4, n);
  out = parse_object(text, what);
  in_.erase(in_.begin(), in_.begin() + 4 + std::ptrdiff_t(n));
  return true;
}

// Only what the current step can use is buffered: one message, its length checked first.
void ServerMachine::buffer(std::span<const uint8_t> bytes) {
  size_t cap = 16;
  if (step_ == Step::params) cap = 4 + size_t(kMaxParamsBytes);
  if (step_ == Step::client_results || step_ == Step::ended || step_ == Step::running)
    cap = 4 + size_t(kMaxResultsBytes) + 16;
  if (in_.size() + bytes.size() > cap)
    throw ProtocolError("the iperf3 client sent more than one message's worth (" +
                        std::to_string(in_.size() + bytes.size()) + " bytes) while " +
                        waiting_for() + " was awaited");
  in_.insert(in_.end(), bytes.begin(), bytes.end());
}

ServerMachine::Event ServerMachine::take_params() {
  if (in_.size() >= 4)
    frame_length(std::span<const uint8_t, 4>(in_.data(), 4), kMaxParamsBytes,
                 "the client's parameters");
  nlohmann::json j;
  if (!take_json(kMaxParamsBytes, "the client's parameters", j)) return Event::none;
  params_ = params_from_json(j);
  if (!in_.empty())
    throw ProtocolError("the iperf3 client sent bytes after its parameters, out of turn");
  step_ = Step::deciding;
  return Event::params;
}

// The one byte a client sends between the JSON messages: TEST_END while the test runs, IPERF_DONE
// at the end; anything else (CLIENT_TERMINATE included) is out of turn.
ServerMachine::Event ServerMachine::take_state() {
  if (in_.empty()) return Event::none;
  const uint8_t b = in_.front();
  const std::optional<State> s = state_of(b);
  const bool expected = (step_ == Step::running && s == State::test_end) ||
                        (step_ == Step::iperf_done && s == State::iperf_done);
  if (!expected) {
    if (s == State::client_terminate)
      throw ProtocolError("the iperf3 client ended the test (CLIENT_TERMINATE) while " +
                          waiting_for() + " was awaited");
    throw ProtocolError("the iperf3 client sent " +
                        (s ? std::string(to_string(*s)) : "byte " + std::to_string(b)) + " while " +
                        waiting_for() + " was awaited");
  }
  in_.erase(in_.begin());
  if (step_ == Step::running) {
    step_ = Step::ended;
    return Event::test_end;
  }
  step_ = Step::finished;
  in_.clear();
  return Event::done;
}

ServerMachine::Event ServerMachine::take_client_results() {
  if (in_.size() >= 4)
    frame_length(std::span<const uint8_t, 4>(in_.data(), 4), kMaxResultsBytes,
                 "the client's results");
  nlohmann::json j;
  if (!take_json(kMaxResultsBytes, "the client's results", j)) return Event::none;
  client_results_ = results_from_json(j);
  step_ = Step::giving;
  if (!in_.empty())
    throw ProtocolError("the iperf3 client sent bytes after its results, out of turn");
  return Event::results;
}

ServerMachine::Event ServerMachine::feed(std::span<const uint8_t> bytes) {
  buffer(bytes);
  switch (step_) {
    case Step::params:
      return take_params();
    case Step::deciding:
    case Step::streams:
    case Step::ended:
    case Step::giving:
    case Step::running:
    case Step::iperf_done:
      return take_state();
    case Step::client_results:
      return take_client_results();
    case Step::finished:
      in_.clear();
      return Event::none;
  }
  return Event::none;
}

void ServerMachine::refuse(int32_t iperf_errno, int32_t sys_errno) {
  push(State::server_error);
  const uint32_t e[2] = {htonl(uint32_t(iperf_errno)), htonl(uint32_t(sys_errno))};
  const auto* p = reinterpret_cast<const uint8_t*>(e);
  out_.insert(out_.end(), p, p + 8);
  step_ = Step::finished;
}

void ServerMachine::deny() {
  push(State::access_denied);
  step_ = Step::finished;
}

void ServerMachine::create_streams() {
  if (step_ != Step::deciding) throw ProtocolError("CREATE_STREAMS out of turn");
  push(State::create_streams);
  step_ = Step::streams;
}

void ServerMachine::start_test() {
  if (step_ != Step::streams) throw ProtocolError("TEST_START out of turn");
  push(State::test_start);
  push(State::test_running);
  step_ = Step::running;
}

void ServerMachine::ask_results() {
  if (step_ != Step::ended) throw ProtocolError("EXCHANGE_RESULTS out of turn");
  push(State::exchange_results);
  step_ = Step::client_results;
}

void ServerMachine::give_results(const Results& r) {
  if (step_ != Step::giving) throw ProtocolError("the server's results out of turn");
  const std::vector<uint8_t> f = frame_json(to_json(r));
  out_.insert(out_.end(), f.begin(), f.end());
  push(State::display_results);
  step_ = Step::iperf_done;
}

}  // namespace mtperf::iperf3

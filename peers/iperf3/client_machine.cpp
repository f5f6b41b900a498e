#include "peers/iperf3/client_machine.hpp"

#include <arpa/inet.h>

#include <cstring>

namespace mtperf::iperf3 {

ClientMachine::ClientMachine(Params params, const Cookie& cookie)
    : params_(std::move(params)), cookie_(cookie) {
  out_.assign(cookie_.begin(), cookie_.end());
}

std::vector<uint8_t> ClientMachine::take_output() {
  std::vector<uint8_t> o;
  o.swap(out_);
  return o;
}

std::optional<std::vector<uint8_t>> ClientMachine::take_bytes(size_t n) {
  if (in_.size() < n) return std::nullopt;
  std::vector<uint8_t> head(in_.begin(), in_.begin() + std::ptrdiff_t(n));
  in_.erase(in_.begin(), in_.begin() + std::ptrdiff_t(n));
  return head;
}

std::string ClientMachine::waiting_for() const {
  switch (step_) {
    case Step::param_exchange:
      return "PARAM_EXCHANGE";
    case Step::create_streams:
      return "CREATE_STREAMS";
    case Step::test_start:
      return "TEST_START";
    case Step::test_running:
      return "TEST_RUNNING";
    case Step::running:
      return "the end of the test";
    case Step::exchange_results:
      return "EXCHANGE_RESULTS";
    case Step::giving_results:
      return "this side's results";
    case Step::server_results:
      return "the server's results";
    case Step::display_results:
      return "DISPLAY_RESULTS";
    case Step::finished:
      return "nothing";
  }
  return "?";
}

ClientMachine::Event ClientMachine::feed(std::span<const uint8_t> bytes) {
  // Only what the current step can use is ever buffered: one message's worth at most.
  const size_t cap = (json_len_ ? *json_len_ : 0) + kMaxResultsBytes + 16;
  if (in_.size() + bytes.size() > cap + kMaxResultsWithOutputBytes)
    throw ProtocolError("the iperf3 server sent more than one message's worth while " +
                        waiting_for() + " was awaited");
  in_.insert(in_.end(), bytes.begin(), bytes.end());
  if (step_ == Step::finished) {
    in_.clear();  // anything after DISPLAY_RESULTS is of no concern
    return Event::none;
  }
  if (error_codes_) return take_error_codes();
  if (step_ == Step::server_results) return take_server_results();
  if (step_ == Step::running || step_ == Step::giving_results) return take_while_running();
  auto b = take_bytes(1);
  if (!b) return Event::none;
  auto s = state_of(b->front());
  if (!s) {
    throw ProtocolError("the iperf3 server sent byte " + std::to_string(int(int8_t(b->front()))) +
                        ", not a state, while " + waiting_for() + " was awaited");
  }
  return on_state(*s);
}

ClientMachine::Event ClientMachine::take_error_codes() {
  auto codes = take_bytes(8);
  if (!codes) return Event::none;
  int32_t e[2];
  std::memcpy(e, codes->data(), 8);
  throw ProtocolError(
      "the iperf3 server refused the test: " +
      server_error_text(int32_t(ntohl(uint32_t(e[0]))), int32_t(ntohl(uint32_t(e[1])))));
}

ClientMachine::Event ClientMachine::take_server_results() {
  if (!json_len_) {
    auto head = take_bytes(4);
    if (!head) return Event::none;
    const uint32_t cap_bytes =
        params_.get_server_output ? kMaxResultsWithOutputBytes : kMaxResultsBytes;
    json_len_ = frame_length(std::span<const uint8_t, 4>(head->data(), 4), cap_bytes,
                             "the server's results");
  }
  auto body = take_bytes(*json_len_);
  if (!body) return Event::none;
  json_len_.reset();
  std::string_view text(reinterpret_cast<const char*>(body->data()), body->size());
  results_ = results_from_json(parse_object(text, "the server's results"));
  step_ = Step::display_results;
  return feed({});
}

// The server speaks while the test runs, and while this side's results are awaited, only to give
// up (an error, a stop); anything else waits.
ClientMachine::Event ClientMachine::take_while_running() {
  if (in_.empty()) return Event::none;
  auto s = state_of(in_.front());
  if (s &&
      (*s == State::access_denied || *s == State::server_error || *s == State::server_terminate))
    return on_state(State(int8_t(take_bytes(1)->front())));
  if (step_ == Step::running) {
    throw ProtocolError("the iperf3 server sent " +
                        (s ? std::string(to_string(*s)) : "byte " + std::to_string(in_[0])) +
                        " while the test ran");
  }
  return Event::none;
}

void ClientMachine::expect(Step step, State s) const {
  if (step_ != step)
    throw ProtocolError("the iperf3 server sent " + std::string(to_string(s)) + " while " +
                        waiting_for() + " was awaited");
}

ClientMachine::Event ClientMachine::advance(State s, Step from, Step to, Event e) {
  expect(from, s);
  step_ = to;
  return e;
}

ClientMachine::Event ClientMachine::on_state(State s) {
  switch (s) {
    case State::access_denied:
      throw ProtocolError(
          "the iperf3 server refused the test: the server is busy running a test, try again "
          "later (ACCESS_DENIED)");
    case State::server_error:
      error_codes_ = true;
      return feed({});
    case State::server_terminate:
      throw ProtocolError("the iperf3 server was stopped during the test (SERVER_TERMINATE)");
    case State::param_exchange: {
      expect(Step::param_exchange, s);
      std::vector<uint8_t> f = frame_json(to_json(params_));
      out_.insert(out_.end(), f.begin(), f.end());
      step_ = Step::create_streams;
      return feed({});
    }
    case State::create_streams:
      return advance(s, Step::create_streams, Step::test_start, Event::create_streams);
    case State::test_start:
      return advance(s, Step::test_start, Step::test_running, Event::test_start);
    case State::test_running:
      return advance(s, Step::test_running, Step::running, Event::test_running);
    case State::exchange_results:
      return advance(s, Step::exchange_results, Step::giving_results, Event::results_wanted);
    case State::display_results:
      expect(Step::display_results, s);
      out_.push_back(byte_of(State::iperf_done));
      step_ = Step::finished;
      return Event::done;
    default:
      throw ProtocolError("the iperf3 server sent " + std::string(to_string(s)) + " while " +
                          waiting_for() + " was awaited");
  }
}

void ClientMachine::end_test() {
  if (step_ != Step::running) return;
  out_.push_back(byte_of(State::test_end));
  ended_ = true;
  step_ = Step::exchange_results;
}

void ClientMachine::give_results(const Results& r) {
  if (step_ != Step::giving_results) return;
  std::vector<uint8_t> f = frame_json(to_json(r));
  out_.insert(out_.end(), f.begin(), f.end());
  step_ = Step::server_results;
}

}  // namespace mtperf::iperf3

#include "control/session_log.hpp"
#include "workloads/kind.hpp"

namespace mtperf::control {

std::string_view to_string(TestLog::Result r) {
  switch (r) {
    case TestLog::Result::ok:
      return "ok";
    case TestLog::Result::error:
      return "error";
    case TestLog::Result::refused:
      return "refused";
  }
  return "?";
}

std::string log_value(std::string_view value) {
  bool bare = !value.empty();
  for (char c : value) {
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || static_cast<unsigned char>(c) < 0x20 ||
        c == 0x7f) {
      bare = false;
    }
  }
  if (bare) return std::string(value);
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += ' ';  // one line, whatever the message holds
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string format_test_log(const TestLog& log) {
  std::string line = "client=" + log_value(log.client);
  auto add = [&line](std::string_view key, std::string_view value) {
    line += ' ';
    line += key;
    line += '=';
    line += log_value(value);
  };
  if (!log.protocol.empty()) add("protocol", log.protocol);
  if (log.spec) {
    const TestSpec& s = *log.spec;
    add("workload", to_string(s.workload));
    add("proto", to_string(s.proto));
    if (!s.transport.empty()) add("transport", s.transport);  // a peer protocol's has none
    add("flows", std::to_string(s.flows_total()));
  }
  if (log.not_connected > 0) add("not_connected", std::to_string(log.not_connected));
  if (log.counted) {
    add("bytes_sent", std::to_string(log.bytes_sent));
    add("bytes_recv", std::to_string(log.bytes_recv));
    if (log.spec && kind_of(log.spec->workload).request_response)
      add("transactions", std::to_string(log.transactions));
    if (log.flow_errors > 0) add("flow_errors", std::to_string(log.flow_errors));
  }
  add("result", to_string(log.result));
  if (log.result == TestLog::Result::error) add("error", log.why);
  if (log.result == TestLog::Result::refused) add("reason", log.why);
  return line;
}

}  // namespace mtperf::control

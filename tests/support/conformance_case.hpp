#pragma once
// One conformance case, run end to end: a test of the given transport against a control server
// (the in-process one of the caller, on 127.0.0.1), checked for no error on either side, the
// flows it should have, bytes (or transactions) moved and, with verify, every byte checked and
// good.
// tests/transports/conformance/ runs its table over every registered transport with it;
// tests/transports/<name>/ runs it under its transport's option combinations.
#include <catch2/catch.hpp>

#include <string>

#include "control/client.hpp"
#include "report/summary.hpp"
#include "workloads/kind.hpp"

namespace mtperf::test {

struct Case {
  std::string name;
  Workload workload = Workload::stream;
  Proto proto = Proto::tcp;
  uint32_t flows = 1, threads = 0, burst = 1, req = 1, resp = 1, msg = 0;
  double rate_bps = 0;
  bool verify = false;
};

inline void run_case(const std::string& transport, const Case& c, const std::string& server,
                     const TransportParams& params = {}, double duration_s = 0.4) {
  TestSpec s;
  s.workload = c.workload;
  s.proto = c.proto;
  s.transport = transport;
  s.transport_params = params;
  s.duration_s = duration_s;
  s.warmup_s = 0.1;
  s.flows = c.flows;
  s.threads = c.threads;
  s.burst = c.burst;
  s.req_size = c.req;
  s.resp_size = c.resp;
  s.msg_size = c.msg;
  s.rate_bps = c.rate_bps;
  s.verify_seed = c.verify ? 0x5eed : 0;
  validate(s);
  control::ClientOptions o;
  o.server = server;
  control::TestOutcome out = control::run_test(s, o);
  Summary sum = summarize(s, out);
  std::string errors;
  for (auto& e : sum.errors)
    errors += "\n  error: " + e;
  INFO(transport << ": " << c.name << errors);
  CHECK(sum.errors.empty());
  CHECK(out.client.errors.empty());
  REQUIRE(out.server.has_value());
  CHECK(out.server->errors.empty());
  CHECK(sum.flows.size() == s.flows_total());
  // Data moved: counted over the whole test, warm-up included. A 0.4 s window can pass without
  // a byte on a host whose CPUs other tests share (seen under ASan, four tests at once), which
  // says nothing of the transport.
  uint64_t received = 0, transactions = 0;
  for (const SideResult* side : {&out.client, &*out.server})
    for (const auto& f : side->flows) {
      received += f.total.bytes_recv;
      transactions += f.total.transactions;
    }
  if (kind_of(c.workload).request_response)
    CHECK(transactions > 0);
  else
    CHECK(received > 0);
  if (c.verify) {
    REQUIRE(sum.verify.has_value());
    CHECK(sum.verify->bytes_checked > 0);
    CHECK(sum.verify->bad_bytes == 0);
  }
}

}  // namespace mtperf::test

// Fork support: enabled by the transport's creation, before any verbs call of the process.
#include <catch2/catch.hpp>

#include "transports/rdma/register.hpp"
#include "verbs/fork_safety.hpp"

using namespace mtperf;

TEST_CASE("fork: creating the transport enables libibverbs' fork support first") {
  // This process has made no verbs call: the transport's creation is its first. (Where the
  // kernel copies pinned pages at fork, libibverbs says fork support is not needed: safe too.)
  auto t = rdma_transport_entry().create({});
  REQUIRE(t);
  CHECK(rdma::fork_safe());
  t.reset();
  CHECK(rdma::fork_safe());
  CHECK(rdma::ensure_fork_safe().empty());  // once per process: a second call only answers
}

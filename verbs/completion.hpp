#pragma once
// What a work completion says, as the engines report it: the errno a failed one means to the
// workload and the text that names it. Used by the rdma transport's engine and by the perftest
// client (perftest_run.hpp).
#include <infiniband/verbs.h>

#include <string>

#include "verbs/settings.hpp"

namespace mtperf::rdma {

// What a failed completion means to the workload: the peer went away (ECONNRESET: a normal end
// once the test is over), a peer without a receive (ENOBUFS: never a normal end, since credits
// promise a receive for every message), a message too long (EMSGSIZE), an access refused
// (EACCES), or another local fault (EIO).
int wc_errno(ibv_wc_status s);
// "what: <ibv_wc_status_str> (status N, vendor error 0x..)", and for an RNR retry error what it
// says of the peer's receives.
std::string wc_text(const ibv_wc& wc, const char* what);
// The verb as errors name it: "SEND", "RDMA WRITE", "RDMA WRITE with immediate", "RDMA READ".
const char* verb_name(Verb v);

}  // namespace mtperf::rdma

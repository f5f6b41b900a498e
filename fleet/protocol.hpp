#pragma once
// The fleet's control protocol: mtperf's control framing (control/protocol.hpp: magic, version,
// type, length, JSON body, one deadline per frame), the same key, between every rank and the
// coordinator (a thread of rank 0; rank 0 itself joins over loopback like the others).
//
//   rank                                              coordinator
//     | -- HELLO   {version, fleet, nonce}          -->  |
//     | <-- WELCOME {version, challenge?, proof?}    --  |   with a key: the coordinator proves
//     | -- JOIN    {member, test, job, mac?}        -->  |   it first; mac = M("join", member)
//     |  (with a key, every frame from here on is sealed both ways: control/link.hpp)
//     | <-- CLOCK   {}                               --  |   three times: the coordinator times
//     | -- CLOCK   {now_ns}                         -->  |   the round trip, estimates the offset
//     | <-- ROSTER  {size, peers, plan, wait_ms}     --  |   once every rank joined (or
//     |                                                  |   --join-timeout); or ERROR {message}
//     |  (peers: [[rank, "host:port"], ...], the ranks the plan has this one test against)
//     | <-- ROUND   {step, start_ns, runs[]}         --  |   every step, to every rank in the
//     |  (at start_ns, on its own clock: each run's test against the other rank's server)
//     | -- RESULTS {step, results[], started_ns[]}  -->  |   a rank without runs answers at once
//     | <-- FINISH  {ok}                             --  |   or ERROR: the fleet ends
//
// Every rank also serves tests (control/server.hpp, port in JOIN) to the ranks that run against
// it, until FINISH. A rank waits for each ROUND at most ROSTER's wait_ms; the coordinator waits
// for each RESULTS at most the per-pair deadline. A rank that closes its connection, or misses
// the deadline, is lost: named in the document, its pairs' cells empty with the reason.
//
// Trust (docs/security.md): with a key K both ends prove it before anything is taken from the
// other, proof = control/link.hpp's P("coordinator") over the rank's nonce N and the challenge C;
// M("join", J) = hex(HMAC-SHA256(K, "mtperf fleet join" 0x00 C 0x00 J)), J the JOIN body's
// "member" value in canonical JSON (control/protocol.hpp's conventions). The coordinator takes a
// member's address only as the address its connection came from, and refuses a JOIN of another
// job; a rank runs a test only against a server of the roster it was sent, at that member's
// address and port. The coordinator takes joins and RESULTS as their bytes come (poll over every
// connection, a state machine each), so idle or stalled connections hold up no one.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace mtperf::fleet {

inline constexpr uint16_t kDefaultFleetPort = 12866;
// Bound on every frame a rank or the coordinator accepts: RESULTS of a one-to-many rank with
// many runs is the largest.
inline constexpr uint32_t kMaxFleetBody = 4u << 20;
inline constexpr int kHandshakeTimeoutMs = 10000;
inline constexpr uint32_t kMaxRunsPerRank = 4096;
inline constexpr uint32_t kMaxFleetRanks = 65536;

std::string join_mac(const std::string& key, const std::string& challenge,
                     const nlohmann::json& member);

}  // namespace mtperf::fleet

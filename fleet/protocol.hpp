#pragma once
// The fleet's control protocol: mtperf's control framing (control/protocol.hpp: magic, version,
// type, length, JSON body, one deadline per frame), the same key, between every rank and the
// coordinator (a thread of rank 0; rank 0 itself joins over loopback like the others).
//
//   rank                                              coordinator
//     | -- HELLO   {version, fleet}                 -->  |
//     | <-- WELCOME {version, challenge?}            --  |   challenge: the coordinator has a key
//     | -- JOIN    {member, test, mac?}             -->  |   mac (key only) = M("join", member)
//     | <-- CLOCK   {}                               --  |   three times: the coordinator times
//     | -- CLOCK   {now_ns}                         -->  |   the round trip, estimates the offset
//     | <-- ROSTER  {roster, plan, wait_ms}          --  |   once every rank joined (or
//     |                                                  |   --join-timeout); or ERROR {message}
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
// M("join", J) = hex(HMAC-SHA256(K, "mtperf fleet join" 0x00 C 0x00 J)), J the JOIN body's
// "member" value in canonical JSON, C the challenge (control/protocol.hpp's conventions).
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

std::string join_mac(const std::string& key, const std::string& challenge,
                     const nlohmann::json& member);

}  // namespace mtperf::fleet

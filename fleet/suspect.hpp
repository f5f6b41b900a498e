#pragma once
// The part most failing pairs share: after the checks (and --retest), the host or the adapter
// whose pairs fail while the others' pass, with the evidence ("node7 ens1f1: 14 of 15 pairs fail
// pair.throughput>=0.9*line; its other adapter ens1f0 is clean (0 of 15); pairs without it: 1 of
// 90 fail"). A host is its roster host name (the rank where it has none); its adapters are its
// ranks' adapters (--per-host N: one rank per adapter). Pure: unit-tested on synthetic documents.
//
// How: each host's failing pairs (a pair counts for both its ends) and all its pairs; the host
// with the most failing pairs is named when they are at least 2, at least half its pairs, and
// its failure rate at least twice the rate of the pairs without it (a fabric where every pair
// fails names no host). Then its adapters: one adapter with every failing pair of the host, the
// others clean, narrows the suspect to that adapter. Its failing pairs set aside, the next is
// sought, up to kMaxSuspects. Two hosts level on both counts name neither: when their failing
// pairs are all between the two, the link between them is the suspect ("pair").
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fleet/checks.hpp"
#include "fleet/model.hpp"

namespace mtperf::fleet {

inline constexpr size_t kMaxSuspects = 8;

struct Suspect {
  std::string kind;     // "host", "adapter" or "pair" (the link between two hosts)
  std::string host;     // for a pair: "a <-> b"
  std::string adapter;  // "adapter": its interface; else ""
  std::string group;    // its ranks' group (--groups); a pair's "a <-> b" when they differ; else ""
  std::vector<uint32_t> ranks;
  size_t failing = 0, pairs = 0;          // its pairs that fail, its pairs
  size_t others_failing = 0, others = 0;  // the pairs without it that fail, the pairs without it
  std::string check;     // the check most of its failing pairs fail ("not measured" for none)
  std::string clean;     // its other adapters, when clean: "ens1f0 (0 of 15)"
  std::string evidence;  // the whole sentence
};

struct SuspectAnalysis {
  size_t failing = 0, pairs = 0;  // pairs failing a check (or not measured), all pairs
  std::vector<Suspect> suspects;
  std::string summary;  // one line: who is named, or why no one is
};

// verdicts: judge()'s, one per result (empty: the pairs not measured are the failing ones).
SuspectAnalysis find_suspects(const FleetDoc& d, const std::vector<PairVerdict>& verdicts);

nlohmann::json to_json(const SuspectAnalysis& a);
std::string suspects_text(const SuspectAnalysis& a);

}  // namespace mtperf::fleet

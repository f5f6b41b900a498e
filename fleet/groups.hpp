#pragma once
// Groups: the leaf switch (rack, zone) each rank sits under, from a file of host -> group lines
// (--groups FILE) or from Slurm's topology (--groups slurm: the leaf switches of `scontrol show
// topology`, topology/tree). Patterns that follow them are in fleet/group_plan.hpp. Parsers are
// pure functions of the text and the fleet's host names (index = rank); only
// read_slurm_topology runs a command.
//
// A host matches a name of the file (or a node of Slurm's) when equal, or when its short name
// (up to its first '.') is: node1.cluster.example matches node1. Every rank of a host (--per-host
// N) is in that host's group.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mtperf::fleet {

inline constexpr size_t kMaxGroupsFileBytes = size_t(16) << 20;  // --groups FILE, bytes
inline constexpr size_t kMaxGroupsLine = 1024;                   // one line of it, bytes
inline constexpr size_t kMaxGroupName = 128;                     // a group's name, bytes

// --groups FILE: "HOST GROUP" lines; '#' starts a comment; blank lines are skipped. Hosts not in
// the fleet are ignored (a site's whole file serves every job); a host listed twice, a line
// longer than kMaxGroupsLine, a word count other than 2, a group name longer than kMaxGroupName
// or with a byte outside visible ASCII, or a host of the fleet not listed, throws
// std::invalid_argument naming the file's line (or the missing hosts). Returns each rank's group.
std::vector<std::string> parse_groups(std::string_view text, const std::vector<std::string>& hosts,
                                      std::string_view name = "groups");

// `scontrol show topology`'s lines ("SwitchName=leaf1 Level=0 LinkSpeed=1 Nodes=node[1-4]"):
// each rank's group is the Level=0 switch whose Nodes (a Slurm host list) name its host. Throws
// std::invalid_argument when no line has a leaf switch (no topology/tree plugin), a host is
// under two leaf switches, or a host of the fleet is under none.
std::vector<std::string> parse_slurm_topology(std::string_view text,
                                              const std::vector<std::string>& hosts);

// Runs `scontrol show topology` (10 s deadline, output bounded) and returns its output. Throws
// std::runtime_error saying what failed (scontrol missing, a non-zero exit with its message).
std::string read_slurm_topology();

// `lldpcli -f json show neighbors` (lldpd): the name of the chassis (the switch) cabled to
// `adapter`, or, where the adapter is "" or not listed, to the one interface that has a named
// neighbour; "" when there is none (no neighbour, a chassis without a name, several interfaces
// and none of them the adapter). Throws std::invalid_argument when the text is not its JSON.
std::string lldp_chassis(std::string_view json_text, std::string_view adapter);
// Runs `lldpcli -f json show neighbors` (5 s deadline, output bounded) and returns lldp_chassis
// of its output; throws std::runtime_error saying what failed (lldpcli missing, lldpd not
// running).
std::string read_lldp_chassis(const std::string& adapter);

// Where the groups come from: "" (none), "slurm", "lldp" (each rank's own, from JOIN), or a
// file.
struct GroupsSource {
  std::string from;  // "", "slurm", "lldp" or "file"
  std::string name;  // the file's name (from = "file")
  std::string text;  // the file's text, or scontrol's output
};
// Each rank's group by the source (an empty vector for none), for the roster's host names (""
// for a rank that never joined: its group is ""); for "lldp", `declared` holds what each rank
// declared at JOIN, and a joined rank without one is named.
std::vector<std::string> resolve_groups(const GroupsSource& s,
                                        const std::vector<std::string>& hosts,
                                        const std::vector<std::string>& declared = {});

// Groups numbered in order of their first rank: names[k] is group k, of[rank] a rank's group
// (UINT32_MAX, fleet/group_plan.hpp's kNoGroup, for a rank with none: it never joined).
struct GroupIndex {
  std::vector<std::string> names;
  std::vector<uint32_t> of;
};
GroupIndex index_groups(const std::vector<std::string>& group_of_rank);

}  // namespace mtperf::fleet

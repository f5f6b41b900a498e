#pragma once
// Network device counters: the devices' own witness, beside the application's bytes, that what
// the application sent crossed them. Read at the edges of the measured window (clock thread),
// never on the data path.
//
// Per device: /sys/class/net/IF/statistics/* (rx_bytes, tx_bytes, rx_packets, ..., rx_crc_errors,
// rx_missed_errors, whatever the kernel lists; /proc/net/dev's columns when sysfs does not show
// the device, as in a network namespace whose sysfs belongs to another) and the driver's own
// counters (`ethtool -S`: SIOCETHTOOL with ETHTOOL_GSSET_INFO, ETHTOOL_GSTRINGS, ETHTOOL_GSTATS;
// only on the live host, a device without them has none). Per host: TCP counters from
// /proc/net/snmp (Tcp:) and /proc/net/netstat (TcpExt:).
//
// Every reader takes a root directory ("/" live, or a fixture tree), bounds what it reads by the
// limits below and never throws: what cannot be read is absent.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace mtperf {

// Bounds on what is read and on what a peer may send (control/side_json.cpp).
inline constexpr size_t kMaxNetdevs = 64;            // devices per side
inline constexpr size_t kMaxNetdevCounters = 1024;   // counters per device (statistics + driver)
inline constexpr size_t kMaxNetdevCounterName = 64;  // characters (ETH_GSTRING_LEN is 32)
inline constexpr size_t kMaxNetdevName = 15;         // IFNAMSIZ - 1
inline constexpr size_t kMaxTcpCounters = 256;       // host TCP counters

struct NetdevCounters {
  std::string device;
  std::map<std::string, uint64_t> stats;   // statistics/<name>, raw counts (bytes, packets)
  std::map<std::string, uint64_t> driver;  // the driver's ethtool statistics by name
};

struct NetWitness {
  std::vector<NetdevCounters> devices;  // in the order asked for
  // /proc/net/snmp Tcp: (RetransSegs, InErrs, OutRsts, InCsumErrors, ...) by name, and
  // /proc/net/netstat TcpExt: as "TcpExt.<name>".
  std::map<std::string, uint64_t> tcp;
};

// The devices' counters now. Names that are not valid interface names ("", "..", "a/b", longer
// than kMaxNetdevName) are skipped; at most kMaxNetdevs devices. Never throws.
NetWitness read_net_witness(const std::vector<std::string>& devices, const std::string& root = "/");

// after - before, device by device and counter by counter. A device or counter missing on either
// side, or one that went backwards (reset, a 32-bit counter that wrapped), is left out.
NetWitness net_witness_delta(const NetWitness& before, const NetWitness& after);

// The interfaces of this network namespace that hold these numeric addresses (getifaddrs),
// without repeats, in the order first met; a loopback address (127/8, ::1) is "lo" wherever it
// is not assigned explicitly. Addresses no interface holds are skipped. Never throws.
std::vector<std::string> netdevs_of_addresses(const std::vector<std::string>& addresses);

// ---- Parsers, apart for tests ----

// "Tcp:" header/value line pairs of /proc/net/snmp or "TcpExt:" of /proc/net/netstat: the values
// of the lines starting with `prefix` ("Tcp:"), by name; `name_prefix` is put before each name.
void parse_snmp_section(std::string_view text, std::string_view prefix,
                        std::string_view name_prefix, std::map<std::string, uint64_t>& out);
// /proc/net/dev's line for `device` as statistics names (rx_bytes, rx_packets, rx_errors,
// rx_dropped, rx_fifo_errors, rx_frame_errors, rx_compressed, multicast, tx_...); empty when the
// device has no line.
std::map<std::string, uint64_t> parse_proc_net_dev(std::string_view text, std::string_view device);
// ETHTOOL_GSTRINGS' table: `count` names of `stride` bytes each, NUL-padded; bounded by `size`
// and kMaxNetdevCounters. A name that is empty or holds a byte outside printable ASCII is "?" +
// its index, so the names and the values stay in step.
std::vector<std::string> parse_ethtool_strings(const char* data, size_t size, size_t count,
                                               size_t stride);

// True for a counter that counts faults: errors, drops, discards, misses, overruns, CRC, ...
bool is_netdev_error_counter(std::string_view name);

}  // namespace mtperf

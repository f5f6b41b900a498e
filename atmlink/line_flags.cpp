#include "atmlink/line_flags.hpp"

#include <algorithm>

namespace mtperf::atm {

std::vector<OptionInfo> capture_option_list() {
  OptionInfo file{"capture", "",
                  "a pcapng file of what crossed each emulated line (one "
                  "interface per line; Wireshark and tshark read it)"};
  return {
      file,
      choice_option("capture_format", {"sunatm", "erf-aal5", "erf-cells"}, "sunatm",
                    "sunatm: PDUs without pad and trailer; erf-aal5: whole CPCS-PDUs with their "
                    "CRC as received; erf-cells: every cell that arrived"),
      whole_option("capture_snap", 0, kMaxCaptureSnap, "0",
                   "bytes kept of each record (64 at least; 0: all)"),
      size_option("capture_max", 4096, std::uint64_t(1) << 40, "100M",
                  "the capture file's size at most; capturing stops there"),
  };
}

const std::vector<FlagOption>& atm_line_flags() {
  static const std::vector<FlagOption> flags = [] {
    std::vector<FlagOption> f{
        {whole_option("rate", 1, 100'000'000, kDefaultLineRate,
                      "line rate: oc3 (353,207.5 cells/s), oc12 (1,412,830) or whole cells/s",
                      {"oc3", "oc3c", "oc12", "oc12c"}),
         "atm-rate", "RATE"},
        {whole_option("mtu", 68, 65527, "0",
                      "IP MTU (0: 9180 CLIP, 1500 LANE); LANE's maximum frame is the smallest of "
                      "1516/4544/9234/18190 that carries it",
                      {"0"}),
         "atm-mtu", "BYTES"},
    };
    const char* value_names[] = {"FILE", "FORMAT", "BYTES", "SIZE"};
    int i = 0;
    for (OptionInfo& o : capture_option_list()) {
      std::string flag = o.key;
      std::replace(flag.begin(), flag.end(), '_', '-');
      f.push_back({std::move(o), std::move(flag), value_names[i++]});
    }
    return f;
  }();
  return flags;
}

std::span<const FlagOption> atm_rate_and_mtu_flags() {
  return std::span<const FlagOption>(atm_line_flags()).first(2);
}

LineRate line_rate_of(const OptionValues& v) {
  const OptionValue& rate = v["rate"];
  return rate.is_word ? parse_line_rate(rate.text)
                      : LineRate::from_cells_per_s(double(rate.number));
}

int line_mtu_of(const OptionValues& v) {
  return v["mtu"].is_word ? 0 : int(v.number("mtu"));
}

}  // namespace mtperf::atm

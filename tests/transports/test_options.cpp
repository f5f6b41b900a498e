// The one -O parser (platform/typed_options.hpp): every type, the errors, "did you mean".
#include <catch2/catch.hpp>

#include "platform/typed_options.hpp"
#include "transports/api/registry.hpp"

using namespace mtperf;

namespace {

std::vector<OptionInfo> sample() {
  return {
      flag_option("sqpoll", false, "a kernel thread submits"),
      pow2_option("ring_size", 8, 32768, 256, "SQ entries"),
      pow2_option("buf_ring", 1, 32768, 0, "provided buffers", true),
      whole_option("tos", 0, 255, "none", "type of service", {"none"}),
      choice_option("srq", {"auto", "on", "off"}, "auto", "shared receive queue",
                    {{"1", "on"}, {"0", "off"}}),
      size_option("budget", 1024, 1 << 20, "64K", "bytes"),
      OptionInfo{"label", "", "any text"},
  };
}

std::string error_of(const TransportParams& p) {
  try {
    (void)parse_options("t", sample(), p);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("-O: the defaults of every key when none is given", "[options]") {
  OptionValues v = parse_options("t", sample(), {});
  CHECK_FALSE(v.on("sqpoll"));
  CHECK(v.number("ring_size") == 256);
  CHECK(v.number("buf_ring") == 0);
  CHECK(v["tos"].is_word);
  CHECK(v.text("tos") == "none");
  CHECK(v.text("srq") == "auto");
  CHECK(v.number("budget") == 65536);
  CHECK_FALSE(v["ring_size"].given);
  CHECK(v.line() == "sqpoll=off ring_size=256 buf_ring=0 tos=none srq=auto budget=64K label=");
  CHECK_THROWS_AS(v["nope"], std::out_of_range);
}

TEST_CASE("-O: values of each type, aliases resolved", "[options]") {
  OptionValues v = parse_options("t", sample(),
                                 {{"sqpoll", "yes"},
                                  {"ring_size", "1024"},
                                  {"tos", "184"},
                                  {"srq", "1"},
                                  {"budget", "1M"},
                                  {"label", "a b"}});
  CHECK(v.on("sqpoll"));
  CHECK(v["sqpoll"].given);
  CHECK(v.number("ring_size") == 1024);
  CHECK_FALSE(v["tos"].is_word);
  CHECK(v.number("tos") == 184);
  CHECK(v.text("srq") == "on");
  CHECK(v.number("budget") == 1048576);
  CHECK(v.text("label") == "a b");
  CHECK(v.line() == "sqpoll=on ring_size=1024 buf_ring=0 tos=184 srq=on budget=1M label=a b");
}

TEST_CASE("-O: a value a key does not take is refused with the key, the value and the range",
          "[options]") {
  CHECK(error_of({{"ring_size", "7"}}) ==
        "t option ring_size: expected a power of two in 8..32768, got '7'");
  CHECK(error_of({{"ring_size", "65536"}}) ==
        "t option ring_size: expected a power of two in 8..32768, got '65536'");
  CHECK(error_of({{"buf_ring", "3"}}) ==
        "t option buf_ring: expected a power of two in 1..32768 or 0, got '3'");
  CHECK(error_of({{"sqpoll", "maybe"}}) == "t option sqpoll: expected 0/1/on/off, got 'maybe'");
  CHECK(error_of({{"tos", "256"}}) ==
        "t option tos: expected a whole number in 0..255 or none, got '256'");
  CHECK(error_of({{"tos", "-1"}}) ==
        "t option tos: expected a whole number in 0..255 or none, got '-1'");
  CHECK(error_of({{"srq", "maybe"}}) == "t option srq: expected auto, on or off, got 'maybe'");
  // Bounds as a person writes them: sizes in K/M/G/T, long counts grouped by thousands.
  CHECK(error_of({{"budget", "512"}}) ==
        "t option budget: expected a size in bytes in 1K..1M (K, M, G, T: powers of 1024), got "
        "'512'");
  CHECK(expectation(whole_option("rate", 1, 100'000'000, "1", "")) ==
        "a whole number in 1..100,000,000");
  CHECK(expectation(size_option("max", 4096, std::uint64_t(1) << 40, "4K", "")) ==
        "a size in bytes in 4K..1T (K, M, G, T: powers of 1024)");
  CHECK(expectation(size_option("odd", 1000, 1536, "1000", "")) ==
        "a size in bytes in 1000..1536 (K, M, G, T: powers of 1024)");
  CHECK(error_of({{"budget", "2M"}}).ends_with("got '2M'"));
  CHECK(parse_options("t", sample(), {{"buf_ring", "0"}}).number("buf_ring") == 0);
}

TEST_CASE("-O: an unknown key is refused, with the nearest key and the list", "[options]") {
  CHECK(error_of({{"ring_sise", "64"}}) ==
        "t has no option 'ring_sise'; did you mean ring_size? (it takes sqpoll, ring_size, "
        "buf_ring, tos, srq, budget, label)");
  CHECK(error_of({{"zzz", "1"}}) ==
        "t has no option 'zzz' (it takes sqpoll, ring_size, buf_ring, tos, srq, budget, label)");
  CHECK_THROWS_WITH(parse_options("socket", {}, {{"x", "1"}}),
                    "socket has no option 'x' (it takes none)");
}

TEST_CASE("-O: every registered transport's defaults are values its own keys take", "[options]") {
  for (const TransportEntry& e : transports()) {
    INFO(e.name);
    REQUIRE(e.options);
    CHECK_NOTHROW(parse_options(e.name, e.options(), {}));
    CHECK_NOTHROW(check_params(e, {}));
    for (const OptionInfo& o : e.options())
      CHECK_NOTHROW(check_params(e, {{o.key, o.default_value}}));
  }
}

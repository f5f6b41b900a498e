#include "platform/number.hpp"

#include <catch2/catch.hpp>

using mtperf::kRateUnits;
using mtperf::kSizeUnits;
using mtperf::parse_scaled;
using mtperf::parse_size;
using mtperf::parse_whole;

TEST_CASE("parse_whole: digits only, inside the range") {
  CHECK(parse_whole("0") == 0u);
  CHECK(parse_whole("4096", 0, 4096) == 4096u);
  CHECK(parse_whole("18446744073709551615") == UINT64_MAX);
  CHECK_FALSE(parse_whole("18446744073709551616"));  // one past
  CHECK_FALSE(parse_whole("4097", 0, 4096));
  CHECK_FALSE(parse_whole("0", 1, 10));
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "12x", "0x10", "1.0", "1K"})
    CHECK_FALSE(parse_whole(bad));
}

TEST_CASE("parse_scaled: a non-negative number and one of the units") {
  CHECK(parse_scaled("64", {}) == 64.0);
  CHECK(parse_scaled("1.5", {}) == 1.5);
  CHECK(parse_scaled("1e-6", {}) == 1e-6);
  CHECK(parse_scaled("64K", kSizeUnits) == 65536.0);
  CHECK(parse_scaled("64k", kSizeUnits) == 65536.0);
  CHECK(parse_scaled("2MiB", kSizeUnits) == 2097152.0);
  CHECK(parse_scaled("1T", kSizeUnits) == 1099511627776.0);
  CHECK(parse_scaled("100M", kRateUnits) == 1e8);
  CHECK(parse_scaled("2.5g", kRateUnits) == 2.5e9);
  for (const char* bad : {"", "-1", "-0", "x", "inf", "nan", "1 K", "1Q", "K"})
    CHECK_FALSE(parse_scaled(bad, kSizeUnits));
  CHECK_FALSE(parse_scaled("64K", {}));  // no units given: none taken
}

TEST_CASE("parse_size: whole bytes, at most the bound") {
  CHECK(parse_size("0") == 0u);
  CHECK(parse_size("0.5K") == 512u);
  CHECK(parse_size("1G") == uint64_t(1) << 30);
  CHECK_FALSE(parse_size("1.5"));  // a fraction of a byte
  CHECK_FALSE(parse_size("2K", 1024));
  CHECK_FALSE(parse_size("99999999T"));  // past the default bound of 2^60
}

// platform/shape.hpp: the fixed-form names, as the patterns they replace would match them.
#include <catch2/catch.hpp>

#include "platform/shape.hpp"

using namespace mtperf;

TEST_CASE("shape::fits: hex, decimal and octal places, the rest literal") {
  CHECK(shape::fits("0000:00:1f.3", "xxxx:xx:xx.7"));
  CHECK(shape::fits("0000:af:00.7", "xxxx:xx:xx.7"));
  CHECK_FALSE(shape::fits("0000:00:1f.8", "xxxx:xx:xx.7"));  // a function is 0..7
  CHECK_FALSE(shape::fits("0000:00:1F.3", "xxxx:xx:xx.7"));  // sysfs writes lower case
  CHECK_FALSE(shape::fits("0000:00:1f.3 ", "xxxx:xx:xx.7"));
  CHECK_FALSE(shape::fits("000:00:1f.3", "xxxx:xx:xx.7"));
  CHECK(shape::fits("pci0000:00", "pcixxxx:xx"));
  CHECK_FALSE(shape::fits("pcI0000:00", "pcixxxx:xx"));
  CHECK(shape::fits("eth-12", "eth-99"));
  CHECK_FALSE(shape::fits("eth-1a", "eth-99"));
}

TEST_CASE("shape::all and shape::plain_name") {
  CHECK(shape::all("123", shape::digit));
  CHECK_FALSE(shape::all("", shape::digit));  // empty is not a number
  CHECK_FALSE(shape::all("12a", shape::digit));
  CHECK(shape::all("edge", shape::lower_alpha));
  CHECK(shape::plain_name("lab-1_a", 32));
  CHECK(shape::plain_name(std::string(32, 'a'), 32));
  CHECK_FALSE(shape::plain_name(std::string(33, 'a'), 32));
  CHECK_FALSE(shape::plain_name("", 32));
  CHECK_FALSE(shape::plain_name("Lab", 32));
  CHECK_FALSE(shape::plain_name("a/b", 32));
  CHECK_FALSE(shape::plain_name("a.b", 32));
}

#pragma once
// Strict reading of JSON values that came from the network: no narrowing, no silent conversion.
//
// nlohmann's get<uint32_t>() converts 2^32 + 1 to 1 and -1 to 4294967295, and get<int>() takes
// 2.9 as 2. These readers instead throw std::invalid_argument naming the field ("test.flows:
// 4294967297 is out of range [0, 4294967295]") when a value is not of the field's type, is not
// an integer where one is wanted, does not fit the field's integer type, or is not finite.
// Strings and lists take a bound on their size. Pure functions, safe from any thread.
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace mtperf::json_field {

[[noreturn]] inline void bad(const std::string& field, const std::string& why) {
  throw std::invalid_argument(field + ": " + why);
}

// Strings and lists longer than this are refused unless the caller gives a bound.
inline constexpr size_t kMaxString = 4096;
inline constexpr size_t kMaxList = 4096;

template <class T>
requires std::integral<T> &&(!std::same_as<T, bool>)T
    integer(const nlohmann::json& v, const std::string& field) {
  if (!v.is_number_integer()) {
    bad(field, v.is_number() ? "must be an integer, not " + v.dump()
                             : std::string("wrong type: ") + v.type_name() + ", not an integer");
  }
  auto out_of_range = [&] {
    bad(field, v.dump() + " is out of range [" + std::to_string(std::numeric_limits<T>::min()) +
                   ", " + std::to_string(std::numeric_limits<T>::max()) + "]");
  };
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (!std::in_range<T>(u)) out_of_range();
    return T(u);
  }
  int64_t s = v.get<int64_t>();
  if (!std::in_range<T>(s)) out_of_range();
  return T(s);
}

// Any JSON number, finite (a parser may turn 1e400 into infinity).
inline double number(const nlohmann::json& v, const std::string& field) {
  if (!v.is_number()) bad(field, std::string("wrong type: ") + v.type_name() + ", not a number");
  double d = v.get<double>();
  if (!std::isfinite(d)) bad(field, "not a finite number");
  return d;
}

inline bool boolean(const nlohmann::json& v, const std::string& field) {
  if (!v.is_boolean()) bad(field, std::string("wrong type: ") + v.type_name() + ", not a boolean");
  return v.get<bool>();
}

inline std::string string(const nlohmann::json& v, const std::string& field,
                          size_t max_len = kMaxString) {
  if (!v.is_string()) bad(field, std::string("wrong type: ") + v.type_name() + ", not a string");
  const auto& s = v.get_ref<const std::string&>();
  if (s.size() > max_len) {
    bad(field, "longer than " + std::to_string(max_len) + " characters");
  }
  return s;
}

// The value as T: integers, double, bool, std::string, std::vector of those, and
// std::map<std::string, std::string>. Lists hold at most kMaxList entries.
template <class T>
T value(const nlohmann::json& v, const std::string& field);

namespace detail {
template <class T>
struct Reader;

template <class T>
requires std::integral<T> &&(!std::same_as<T, bool>)struct Reader<T> {
  static T read(const nlohmann::json& v, const std::string& f) { return integer<T>(v, f); }
};
template <>
struct Reader<bool> {
  static bool read(const nlohmann::json& v, const std::string& f) { return boolean(v, f); }
};
template <>
struct Reader<double> {
  static double read(const nlohmann::json& v, const std::string& f) { return number(v, f); }
};
template <>
struct Reader<std::string> {
  static std::string read(const nlohmann::json& v, const std::string& f) { return string(v, f); }
};
template <class E>
struct Reader<std::vector<E>> {
  static std::vector<E> read(const nlohmann::json& v, const std::string& f) {
    if (!v.is_array()) bad(f, std::string("wrong type: ") + v.type_name() + ", not a list");
    if (v.size() > kMaxList) bad(f, "more than " + std::to_string(kMaxList) + " entries");
    std::vector<E> out;
    out.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      out.push_back(value<E>(v[i], f + "[" + std::to_string(i) + "]"));
    return out;
  }
};
template <>
struct Reader<std::map<std::string, std::string>> {
  static std::map<std::string, std::string> read(const nlohmann::json& v, const std::string& f) {
    if (!v.is_object()) bad(f, std::string("wrong type: ") + v.type_name() + ", not an object");
    if (v.size() > kMaxList) bad(f, "more than " + std::to_string(kMaxList) + " entries");
    std::map<std::string, std::string> out;
    for (const auto& [k, e] : v.items()) {
      if (k.size() > kMaxString) bad(f, "a key longer than " + std::to_string(kMaxString));
      out.emplace(k, string(e, f + "." + k));
    }
    return out;
  }
};
}  // namespace detail

template <class T>
T value(const nlohmann::json& v, const std::string& field) {
  return detail::Reader<T>::read(v, field);
}

// j[key] read into out when present (absent: out keeps its default). `where` prefixes the name
// in errors: field(j, "test", "flows", n) names "test.flows".
template <class T>
void optional(const nlohmann::json& j, const std::string& where, const char* key, T& out) {
  auto it = j.find(key);
  if (it == j.end()) return;
  out = value<T>(*it, where + "." + key);
}

// j[key], which must be there.
template <class T>
T required(const nlohmann::json& j, const std::string& where, const char* key) {
  if (!j.is_object()) bad(where, std::string("wrong type: ") + j.type_name() + ", not an object");
  auto it = j.find(key);
  if (it == j.end()) bad(where + "." + key, "missing");
  return value<T>(*it, where + "." + key);
}

}  // namespace mtperf::json_field

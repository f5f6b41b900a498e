// pcapng block and ATM record encoders (see pcapng.hpp).
#include "atmlink/pcapng.hpp"

#include <algorithm>
#include "atmlink/bytes.hpp"

namespace mtperf::atm::pcapng {
namespace {

constexpr std::uint16_t kOptEnd = 0, kOptShbUserAppl = 4, kOptIfName = 2, kOptIfDescription = 3,
                        kOptIfTsresol = 9, kOptEpbFlags = 2;

void put16(std::vector<std::uint8_t>& out, std::uint16_t v) {
  out.push_back(std::uint8_t(v));
  out.push_back(std::uint8_t(v >> 8));
}

void put32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(std::uint8_t(v >> (8 * i)));
}

void set32(std::vector<std::uint8_t>& out, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out[at + std::size_t(i)] = std::uint8_t(v >> (8 * i));
}

void put_pad(std::vector<std::uint8_t>& out, std::size_t n) {
  out.insert(out.end(), pad4(n) - n, 0);
}

void put_option(std::vector<std::uint8_t>& out, std::uint16_t code, std::string_view value) {
  put16(out, code);
  put16(out, std::uint16_t(value.size()));
  out.insert(out.end(), value.begin(), value.end());
  put_pad(out, value.size());
}

// Starts a block: type and a length filled in by end_block().
std::size_t begin_block(std::vector<std::uint8_t>& out, std::uint32_t type) {
  const std::size_t start = out.size();
  put32(out, type);
  put32(out, 0);
  return start;
}

std::size_t end_block(std::vector<std::uint8_t>& out, std::size_t start) {
  const std::uint32_t total = std::uint32_t(out.size() - start + 4);
  put32(out, total);
  set32(out, start + 4, total);
  return total;
}

}  // namespace

void append_shb(std::vector<std::uint8_t>& out) {
  const std::size_t start = begin_block(out, kShbType);
  put32(out, kByteOrderMagic);
  put16(out, 1);           // major
  put16(out, 0);           // minor
  put32(out, 0xFFFFFFFF);  // section length: not given
  put32(out, 0xFFFFFFFF);
  put_option(out, kOptShbUserAppl, "mtperf");
  put32(out, kOptEnd);
  end_block(out, start);
}

void append_idb(std::vector<std::uint8_t>& out, std::uint16_t link_type, std::uint32_t snaplen,
                std::string_view name, std::string_view description) {
  const std::size_t start = begin_block(out, kIdbType);
  put16(out, link_type);
  put16(out, 0);
  put32(out, snaplen);
  if (!name.empty()) put_option(out, kOptIfName, name);
  if (!description.empty()) put_option(out, kOptIfDescription, description);
  const char ns = 9;  // 10^-9 s
  put_option(out, kOptIfTsresol, std::string_view(&ns, 1));
  put32(out, kOptEnd);
  end_block(out, start);
}

std::size_t append_epb(std::vector<std::uint8_t>& out, std::uint32_t interface, std::uint64_t ts_ns,
                       std::span<const std::span<const std::uint8_t>> parts, std::size_t original,
                       std::uint32_t snaplen, std::uint32_t epb_flags) {
  const std::size_t start = begin_block(out, kEpbType);
  put32(out, interface);
  put32(out, std::uint32_t(ts_ns >> 32));
  put32(out, std::uint32_t(ts_ns));
  const std::size_t lengths = out.size();
  put32(out, 0);
  put32(out, std::uint32_t(original));
  std::size_t left = snaplen == 0 ? original : std::min<std::size_t>(snaplen, original);
  std::size_t captured = 0;
  for (const auto& part : parts) {
    const std::size_t n = std::min(left, part.size());
    out.insert(out.end(), part.begin(), part.begin() + std::ptrdiff_t(n));
    left -= n;
    captured += n;
  }
  set32(out, lengths, std::uint32_t(captured));
  put_pad(out, captured);
  put16(out, kOptEpbFlags);
  put16(out, 4);
  put32(out, epb_flags);
  put32(out, kOptEnd);
  return end_block(out, start);
}

void sunatm_header(std::span<std::uint8_t, kSunAtmHeaderBytes> out, bool near_line,
                   std::uint8_t traffic, std::uint8_t vpi, std::uint16_t vci) {
  out[0] = std::uint8_t((near_line ? kSunAtmDirection : 0) | (traffic & 0x0F));
  out[1] = vpi;
  store_be16(&out[2], vci);
}

std::uint64_t erf_timestamp(std::uint64_t ts_ns) {
  const std::uint64_t s = ts_ns / 1'000'000'000u, ns = ts_ns % 1'000'000'000u;
  return (s << 32) | ((ns << 32) / 1'000'000'000u);
}

void erf_header(std::span<std::uint8_t, kErfHeaderBytes + kErfCellHeaderBytes> out,
                std::uint64_t ts_ns, std::uint8_t type, std::uint8_t interface, std::size_t rlen,
                std::size_t wlen, std::span<const std::uint8_t, 4> cell_header) {
  const std::uint64_t ts = erf_timestamp(ts_ns);
  for (int i = 0; i < 8; ++i)
    out[std::size_t(i)] = std::uint8_t(ts >> (8 * i));
  out[8] = type;
  out[9] = std::uint8_t((interface & 0x03) | kErfFlagVarLen);
  store_be16(&out[10], std::uint16_t(std::min<std::size_t>(rlen, 65535)));
  store_be16(&out[12], 0);  // loss counter
  store_be16(&out[14], std::uint16_t(std::min<std::size_t>(wlen, 65535)));
  std::copy(cell_header.begin(), cell_header.end(), out.begin() + kErfHeaderBytes);
}

}  // namespace mtperf::atm::pcapng

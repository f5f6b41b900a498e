#include "report/png.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace mtperf::png {
namespace {

// CRC-32 as PNG (and zlib) compute it: reflected, polynomial 0xEDB88320.
uint32_t crc32(std::string_view bytes, uint32_t crc = 0) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k)
        c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (unsigned char b : bytes)
    crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

void be32(std::string& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8)
    out += char((v >> s) & 0xFF);
}

void chunk(std::string& out, std::string_view kind, std::string_view body) {
  be32(out, uint32_t(body.size()));
  const size_t from = out.size();
  out += kind;
  out += body;
  be32(out, crc32(std::string_view(out).substr(from)));
}

// A zlib stream of stored (uncompressed) deflate blocks of at most 65,535 bytes.
std::string stored_zlib(std::string_view raw) {
  std::string out = "\x78\x01";
  uint32_t a = 1, b = 0;  // Adler-32
  for (unsigned char c : raw) {
    a = (a + c) % 65521;
    b = (b + a) % 65521;
  }
  size_t at = 0;
  do {
    const size_t len = std::min<size_t>(raw.size() - at, 65535);
    out += char(at + len == raw.size() ? 1 : 0);
    out += char(len & 0xFF);
    out += char(len >> 8);
    out += char(~len & 0xFF);
    out += char((~len >> 8) & 0xFF);
    out += raw.substr(at, len);
    at += len;
  } while (at < raw.size());
  be32(out, (b << 16) | a);
  return out;
}

}  // namespace

std::string indexed(size_t width, size_t height, const std::vector<uint8_t>& pixels,
                    const std::vector<Rgb>& palette) {
  if (width == 0 || height == 0 || pixels.size() != width * height || palette.empty() ||
      palette.size() > 256)
    throw std::invalid_argument("png: the pixels or the palette do not fit the size");
  std::string out = "\x89PNG\r\n\x1a\n";
  std::string header;
  be32(header, uint32_t(width));
  be32(header, uint32_t(height));
  header +=
      std::string("\x08\x03\x00\x00\x00", 5);  // 8 bits, indexed, deflate, no filter, no interlace
  chunk(out, "IHDR", header);
  std::string plte;
  for (const Rgb& c : palette)
    plte += {char(c.r), char(c.g), char(c.b)};
  chunk(out, "PLTE", plte);
  std::string raw;
  raw.reserve((width + 1) * height);
  for (size_t y = 0; y < height; ++y) {
    raw += '\0';  // filter: none
    raw.append(reinterpret_cast<const char*>(pixels.data() + y * width), width);
  }
  chunk(out, "IDAT", stored_zlib(raw));
  chunk(out, "IEND", "");
  return out;
}

std::string base64(std::string_view bytes) {
  static const char* const kDigits =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
    if (i + 1 < bytes.size()) v |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    if (i + 2 < bytes.size()) v |= uint8_t(bytes[i + 2]);
    out += kDigits[(v >> 18) & 63];
    out += kDigits[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kDigits[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kDigits[v & 63] : '=';
  }
  return out;
}

std::string data_uri(std::string_view png) {
  return "data:image/png;base64," + base64(png);
}

}  // namespace mtperf::png

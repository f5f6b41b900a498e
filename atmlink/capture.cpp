// The capture file and the emulator threads' taps (see capture.hpp).
#include "atmlink/capture.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "atmlink/pcapng.hpp"

namespace mtperf::atm {
namespace {

constexpr std::size_t kTapBufferBytes = 256 * 1024;  // several of the largest records
constexpr std::size_t kMaxRecordBytes =
    pcapng::epb_bytes(pcapng::kErfHeaderBytes + pcapng::kErfCellHeaderBytes + 65535 + 48);

std::uint16_t link_type(CaptureFormat f) {
  return f == CaptureFormat::kSunAtm ? pcapng::kLinkTypeSunAtm : pcapng::kLinkTypeErf;
}

}  // namespace

const char* to_string(CaptureFormat format) {
  switch (format) {
    case CaptureFormat::kSunAtm:
      return "sunatm";
    case CaptureFormat::kErfAal5:
      return "erf-aal5";
    case CaptureFormat::kErfCells:
      return "erf-cells";
  }
  return "?";
}

CaptureFormat parse_capture_format(std::string_view text) {
  for (const CaptureFormat f :
       {CaptureFormat::kSunAtm, CaptureFormat::kErfAal5, CaptureFormat::kErfCells})
    if (text == to_string(f)) return f;
  throw std::invalid_argument("capture format '" + std::string(text) +
                              "': use sunatm (PDUs without trailer), erf-aal5 (PDUs with pad, "
                              "trailer and CRC) or erf-cells (every cell)");
}

CaptureFile::CaptureFile(const CaptureOptions& options, int lines) : options_(options) {
  if (options_.path.empty()) throw std::invalid_argument("capture: no file given");
  if (options_.max_bytes < 4096)
    throw std::invalid_argument("capture size limit " + std::to_string(options_.max_bytes) +
                                " bytes is below 4096");
  if (options_.snap != 0 && (options_.snap < 64 || options_.snap > kMaxCaptureSnap))
    throw std::invalid_argument("capture snap length " + std::to_string(options_.snap) +
                                " is outside 64.." + std::to_string(kMaxCaptureSnap) +
                                " (0: whole records)");
  std::vector<std::uint8_t> head;
  pcapng::append_shb(head);
  for (int i = 0; i < lines; ++i)
    pcapng::append_idb(head, link_type(options_.format), options_.snap, fmt::format("atm{}", i),
                       fmt::format("emulated ATM line {} ({}; outbound: the near host's line)", i,
                                   to_string(options_.format)));
  file_ = std::fopen(options_.path.c_str(), "wbe");
  if (file_ == nullptr)
    throw std::runtime_error("capture file " + options_.path + ": " + std::strerror(errno));
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
  bytes_ = head.size();
  if (std::fwrite(head.data(), 1, head.size(), file_) != head.size()) failed_.store(true);
}

CaptureFile::~CaptureFile() {
  close();
}

bool CaptureFile::reserve(std::size_t bytes) noexcept {
  if (full()) return false;
  std::uint64_t have = bytes_.load(std::memory_order_relaxed);
  do {
    if (have + bytes > options_.max_bytes) {
      full_.store(true, std::memory_order_relaxed);
      return false;
    }
  } while (!bytes_.compare_exchange_weak(have, have + bytes, std::memory_order_relaxed));
  return true;
}

void CaptureFile::write(std::span<const std::uint8_t> blocks) noexcept {
  if (blocks.empty()) return;
  std::lock_guard lock(mutex_);
  if (file_ == nullptr) return;
  if (std::fwrite(blocks.data(), 1, blocks.size(), file_) != blocks.size()) failed_.store(true);
}

bool CaptureFile::close() noexcept {
  std::lock_guard lock(mutex_);
  if (file_ != nullptr) {
    if (std::fflush(file_) != 0) failed_.store(true);
    if (std::fclose(file_) != 0) failed_.store(true);
    file_ = nullptr;
  }
  return !failed_.load();
}

std::string CaptureFile::summary() const {
  std::string s = fmt::format("capture {}: {} records, {} bytes ({})", options_.path, records(),
                              bytes(), to_string(options_.format));
  if (full())
    s += fmt::format("; capture stopped when the file reached its limit of {} bytes",
                     options_.max_bytes);
  if (failed_.load()) s += "; writing the file failed";
  return s;
}

CaptureTap::CaptureTap(CaptureFile& file, std::uint32_t interface)
    : file_(file),
      interface_(interface),
      format_(file.options().format),
      snap_(file.options().snap) {
  buffer_.reserve(kTapBufferBytes);
}

void CaptureTap::flush() noexcept {
  file_.write(buffer_);
  buffer_.clear();
}

void CaptureTap::record(bool near_line, std::uint64_t ts_ns, std::span<const std::uint8_t> head,
                        std::span<const std::uint8_t> body, std::size_t original) noexcept {
  const std::size_t captured = snap_ == 0 ? original : std::min<std::size_t>(snap_, original);
  const std::size_t bytes = pcapng::epb_bytes(captured);
  if (!file_.reserve(bytes)) return;
  if (buffer_.size() + kMaxRecordBytes > buffer_.capacity()) flush();
  const std::span<const std::uint8_t> parts[] = {head, body};
  pcapng::append_epb(buffer_, interface_, ts_ns, parts, original, snap_,
                     near_line ? pcapng::kEpbOutbound : pcapng::kEpbInbound);
  file_.count_record();
}

void CaptureTap::pdu(bool near_line, VcAddress vc, std::uint8_t traffic,
                     std::span<const std::uint8_t> cpcs, std::size_t sdu_bytes, bool good,
                     std::uint64_t ts_ns) noexcept {
  if (format_ == CaptureFormat::kSunAtm) {
    if (!good) return;  // SUNATM has no trailer to show a bad CRC in
    std::uint8_t h[pcapng::kSunAtmHeaderBytes];
    pcapng::sunatm_header(h, near_line, traffic, std::uint8_t(vc.vpi), vc.vci);
    const auto sdu = cpcs.first(sdu_bytes);
    record(near_line, ts_ns, h, sdu, sizeof h + sdu.size());
  } else if (format_ == CaptureFormat::kErfAal5) {
    // ERF lengths are 16 bits: a PDU of more than 65,515 bytes would be cut to fit (the
    // testbed refuses an MTU that allows one: check_erf_fits).
    const std::size_t whole = pcapng::kErfHeaderBytes + pcapng::kErfCellHeaderBytes + cpcs.size();
    const std::size_t original = std::min<std::size_t>(whole, 65535);
    const std::size_t captured = snap_ == 0 ? original : std::min<std::size_t>(snap_, original);
    // The last cell's header without HEC: GFC 0, PTI 1 (user data, end of PDU), CLP 0.
    const std::uint8_t cell_header[4] = {
        std::uint8_t(vc.vpi >> 4), std::uint8_t((vc.vpi << 4) | (vc.vci >> 12)),
        std::uint8_t(vc.vci >> 4), std::uint8_t(((vc.vci & 0x0F) << 4) | (kPtiEndOfPdu << 1))};
    std::uint8_t h[pcapng::kErfHeaderBytes + pcapng::kErfCellHeaderBytes];
    pcapng::erf_header(h, ts_ns, pcapng::kErfTypeAal5, near_line ? 0 : 1, captured,
                       pcapng::kErfCellHeaderBytes + cpcs.size(), cell_header);
    record(near_line, ts_ns, h, cpcs, original);
  }
}

void CaptureTap::cell(bool near_line, std::span<const std::uint8_t, kCellBytes> cell,
                      std::uint64_t ts_ns) noexcept {
  std::uint8_t h[pcapng::kErfHeaderBytes + pcapng::kErfCellHeaderBytes];
  const std::size_t whole = sizeof h + kCellPayloadBytes;
  const std::size_t captured = snap_ == 0 ? whole : std::min<std::size_t>(snap_, whole);
  pcapng::erf_header(h, ts_ns, pcapng::kErfTypeAtmCell, near_line ? 0 : 1, captured,
                     pcapng::kErfCellHeaderBytes + kCellPayloadBytes, cell.first<4>());
  record(near_line, ts_ns, h, cell.subspan<kHeaderBytes>(), whole);
}

}  // namespace mtperf::atm

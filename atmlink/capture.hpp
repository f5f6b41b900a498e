#pragma once
// A pcapng capture of what crossed the emulated lines (pcapng.hpp has the byte layouts).
//
// One CaptureFile per testbed: one interface (IDB) per adapter's line, named "atm<i>", both
// directions in it (the SUNATM direction bit and epb_flags: outbound = the near host's line).
// One CaptureTap per adapter, used by that adapter's emulator thread only: it builds records in
// a buffer of its own, allocated once, and hands whole buffers to the file under its mutex, so
// the cell path neither writes nor locks per PDU. Records are what the receiving end of the line
// reassembled, stamped with the line's cell clock (when the PDU's last cell left the sender,
// on CLOCK_REALTIME):
//   sunatm     every PDU delivered (good CRC): the SDU, no pad or trailer (link type 123);
//   erf-aal5   every PDU that ended, good or not: the whole CPCS-PDU with pad and trailer, its
//              CRC as it arrived (ERF type 4, link type 197);
//   erf-cells  every cell that arrived (lost cells are missing), ERF type 3, 48-byte payload.
// The file is bounded: a record that would take it past max_bytes is not written and capture
// stops there (full() says so). The destructor (or close()) flushes every tap's buffer first:
// taps must be flushed (their destructor does it) before the file closes.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "atmlink/cell.hpp"

namespace mtperf::atm {

enum class CaptureFormat : std::uint8_t { kSunAtm, kErfAal5, kErfCells };
const char* to_string(CaptureFormat format);  // "sunatm", "erf-aal5", "erf-cells"
// Throws std::invalid_argument naming the formats taken.
CaptureFormat parse_capture_format(std::string_view text);

inline constexpr std::uint64_t kDefaultCaptureMaxBytes = 100ull << 20;
inline constexpr std::uint32_t kMaxCaptureSnap = 262144;

struct CaptureOptions {
  std::string path;  // "": no capture
  CaptureFormat format = CaptureFormat::kSunAtm;
  std::uint32_t snap = 0;  // bytes kept of each record (after the pseudo-header); 0: all
  std::uint64_t max_bytes = kDefaultCaptureMaxBytes;  // the file's size at most, >= 4096
};

class CaptureFile {
 public:
  // Creates (truncates) the file and writes the section and `lines` interfaces; throws
  // std::runtime_error naming the file when it cannot, std::invalid_argument for bad options.
  CaptureFile(const CaptureOptions& options, int lines);
  ~CaptureFile();
  CaptureFile(const CaptureFile&) = delete;
  CaptureFile& operator=(const CaptureFile&) = delete;

  // Takes `bytes` of the file's budget; false (and capture stops) when they do not fit.
  bool reserve(std::size_t bytes) noexcept;
  // Appends whole blocks (reserved before). Thread-safe.
  void write(std::span<const std::uint8_t> blocks) noexcept;
  // Flushes and closes; false when a write failed. Idempotent.
  bool close() noexcept;

  const CaptureOptions& options() const { return options_; }
  bool full() const noexcept { return full_.load(std::memory_order_relaxed); }
  std::uint64_t bytes() const noexcept { return bytes_.load(std::memory_order_relaxed); }
  std::uint64_t records() const noexcept { return records_.load(std::memory_order_relaxed); }
  void count_record() noexcept { records_.fetch_add(1, std::memory_order_relaxed); }
  // "capture FILE: N records, B bytes (sunatm)" and, when it filled, why it stopped.
  std::string summary() const;

 private:
  CaptureOptions options_;
  std::mutex mutex_;
  std::FILE* file_ = nullptr;
  std::atomic<bool> failed_{false};  // summary() reads it while the taps write
  std::atomic<std::uint64_t> bytes_{0}, records_{0};
  std::atomic<bool> full_{false};
};

class CaptureTap {
 public:
  // Records of line `interface` (the adapter index); allocates its buffer once.
  CaptureTap(CaptureFile& file, std::uint32_t interface);
  ~CaptureTap() { flush(); }
  CaptureTap(const CaptureTap&) = delete;
  CaptureTap& operator=(const CaptureTap&) = delete;

  CaptureFormat format() const { return format_; }
  // A PDU that ended at the receiving end of a line: `cpcs` the whole CPCS-PDU as reassembled
  // (pad and trailer), `sdu_bytes` its SDU's length when good. traffic: the SUNATM low nibble.
  // near_line: it crossed the near host's line. ts_ns: ns since the epoch.
  void pdu(bool near_line, VcAddress vc, std::uint8_t traffic, std::span<const std::uint8_t> cpcs,
           std::size_t sdu_bytes, bool good, std::uint64_t ts_ns) noexcept;
  // A cell as it arrived (erf-cells).
  void cell(bool near_line, std::span<const std::uint8_t, kCellBytes> cell,
            std::uint64_t ts_ns) noexcept;
  // Hands the buffered records to the file.
  void flush() noexcept;

 private:
  void record(bool near_line, std::uint64_t ts_ns, std::span<const std::uint8_t> head,
              std::span<const std::uint8_t> body, std::size_t original) noexcept;

  CaptureFile& file_;
  std::uint32_t interface_;
  CaptureFormat format_;
  std::uint32_t snap_;
  std::vector<std::uint8_t> buffer_;  // capacity fixed at construction
};

}  // namespace mtperf::atm

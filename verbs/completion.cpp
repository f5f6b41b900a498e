#include "verbs/completion.hpp"

#include <cerrno>
#include <cstdio>

#include "verbs/device_rules.hpp"

namespace mtperf::rdma {

int wc_errno(ibv_wc_status s) {
  switch (s) {
    case IBV_WC_WR_FLUSH_ERR:
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_REM_ABORT_ERR:
      return ECONNRESET;
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return ENOBUFS;
    case IBV_WC_LOC_LEN_ERR:
    case IBV_WC_REM_INV_REQ_ERR:
      return EMSGSIZE;
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_REM_ACCESS_ERR:
      return EACCES;
    default:
      return EIO;
  }
}

std::string wc_text(const ibv_wc& wc, const char* what) {
  char tail[96];
  std::snprintf(tail, sizeof tail, " (status %d, vendor error 0x%x)", int(wc.status),
                wc.vendor_err);
  std::string s = std::string(what) + ": " + ibv_wc_status_str(wc.status) + tail;
  if (wc.status == IBV_WC_RNR_RETRY_EXC_ERR) {
    s += "; RNR: the peer had no receive posted for " + std::to_string(kRnrRetry + 1) + " tries, " +
         std::to_string(rnr_timer_us(kMinRnrTimer)) +
         " us apart: its receives and our credits disagree";
  }
  return s;
}

const char* verb_name(Verb v) {
  switch (v) {
    case Verb::send:
      return "SEND";
    case Verb::write:
      return "RDMA WRITE";
    case Verb::write_imm:
      return "RDMA WRITE with immediate";
    case Verb::read:
      return "RDMA READ";
  }
  return "?";
}

}  // namespace mtperf::rdma

#include "verbs/oob_qp.hpp"

#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "verbs/cm.hpp"
#include "verbs/device_res.hpp"
#include "verbs/device_rules.hpp"
#include "verbs/gid_rules.hpp"
#include "verbs/tcp_exact.hpp"

namespace mtperf::rdma {

namespace {

constexpr uint8_t kHopLimit = 64;
// 4.096 us x 2^19 (2.1 s): what rdma_cm gives a RoCE QP on Linux 6.1 (its packet lifetime, 18,
// plus one), so that both paths retransmit alike; perftest's own default is 14 (67 ms), which an
// emulated device (soft-RoCE under TCG) can take longer than to answer. -O ack_timeout sets it.
constexpr uint8_t kDefaultAckTimeout = 19;
constexpr uint32_t kMaxGids = 256;

std::array<uint8_t, 16> address_gid(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) {
    uint8_t b[4];
    std::memcpy(b, &reinterpret_cast<const sockaddr_in*>(&a)->sin_addr, 4);
    return gid_of_ipv4(b);
  }
  std::array<uint8_t, 16> g{};
  std::memcpy(g.data(), &reinterpret_cast<const sockaddr_in6*>(&a)->sin6_addr, 16);
  return g;
}

std::string hex_gid(const std::array<uint8_t, 16>& g) {
  static const char* kHex = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < g.size(); ++i) {
    if (i > 0 && i % 2 == 0) s += ':';
    s += kHex[g[i] >> 4];
    s += kHex[g[i] & 15];
  }
  return s;
}

// The device of `local` (port 0): an rdma_cm id bound to it, then destroyed.
void find_device(VerbsApi& v, const sockaddr_storage& local, const std::string& name,
                 OobPort& out) {
  std::string what = "finding the RDMA device of " + name;
  rdma_event_channel* ch = make_channel(v);
  rdma_cm_id* id = nullptr;
  int err = 0;
  if (v.create_id(ch, &id, nullptr, RDMA_PS_TCP) != 0) {
    err = errno;
  } else {
    sockaddr_storage a = local;
    if (v.bind_addr(id, reinterpret_cast<sockaddr*>(&a)) != 0) {
      err = errno;
    } else {
      out.ctx = id->verbs;
      out.port = id->port_num;
    }
  }
  destroy_id(v, id);
  v.destroy_event_channel(ch);
  if (err != 0) throw_errno(what + ": rdma_" + (id ? "bind_addr" : "create_id"), err);
  if (!out.ctx || out.port == 0) {
    throw std::runtime_error(what + ": the address is on no RDMA device (`rdma link` lists them)");
  }
}

}  // namespace

OobPort oob_port(VerbsApi& v, const sockaddr_storage& local, const std::string& name,
                 const RdmaSettings& s) {
  OobPort p;
  find_device(v, local, name, p);
  std::string dev = std::string(v.device_name(p.ctx)) + " port " + std::to_string(p.port);
  ibv_port_attr pa{};
  if (int rc = v.query_port(p.ctx, p.port, &pa); rc != 0) throw_errno("ibv_query_port " + dev, rc);
  if (pa.state != IBV_PORT_ACTIVE) {
    throw std::runtime_error(dev + " is not ACTIVE (" + ibv_port_state_str(pa.state) + ")");
  }
  p.link = pa.link_layer == IBV_LINK_LAYER_INFINIBAND ? kLinkIb : kLinkEthernet;
  p.mtu = uint8_t(pa.active_mtu);
  if (p.mtu < IBV_MTU_256 || p.mtu > IBV_MTU_4096) {
    throw std::runtime_error(dev + ": active MTU " + std::to_string(p.mtu) + " out of range");
  }
  p.lid = pa.lid;
  std::vector<GidEntry> table;
  uint32_t n = std::min<uint32_t>(uint32_t(std::max(pa.gid_tbl_len, 0)), kMaxGids);
  for (uint32_t i = 0; i < n; ++i) {
    ibv_gid_entry e{};
    if (v.query_gid_ex(p.ctx, p.port, i, &e) != 0) continue;  // an empty entry
    GidEntry g;
    g.index = i;
    g.type = e.gid_type == IBV_GID_TYPE_ROCE_V2   ? GidType::roce_v2
             : e.gid_type == IBV_GID_TYPE_ROCE_V1 ? GidType::roce_v1
                                                  : GidType::ib;
    std::memcpy(g.gid.data(), e.gid.raw, 16);
    if (g.gid == std::array<uint8_t, 16>{}) continue;
    table.push_back(g);
  }
  GidChoice c = choose_gid(table, p.link == kLinkEthernet, address_gid(local), s.gid_index);
  if (c.index < 0) throw std::runtime_error(dev + ": " + c.why);
  p.gid_index = c.index;
  for (const GidEntry& g : table) {
    if (int(g.index) == c.index) p.gid = g.gid;
  }
  return p;
}

void oob_init(VerbsApi& v, ibv_qp* qp, const OobPort& p) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = p.port;
  // What the QP lets a peer do; the memory regions say where (resources.hpp's remote parts).
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  if (int rc = v.modify_qp(qp, &a, mask); rc != 0) throw_errno("ibv_modify_qp to INIT", rc);
}

void oob_rtr_rts(VerbsApi& v, ibv_qp* qp, const OobPort& p, const OobQp& mine, const OobQp& peer,
                 const RdmaSettings& s) {
  ReadDepths depths = oob_read_depths(mine.depths, peer.depths);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = ibv_mtu(path_mtu(mine.mtu, peer.mtu));
  a.dest_qp_num = peer.qpn;
  a.rq_psn = peer.psn;
  a.max_dest_rd_atomic = depths.responder_resources;
  a.min_rnr_timer = kMinRnrTimer;
  a.ah_attr.port_num = p.port;
  a.ah_attr.dlid = peer.lid;
  if (p.link == kLinkEthernet || s.gid_index != kUnset) {
    a.ah_attr.is_global = 1;
    std::memcpy(a.ah_attr.grh.dgid.raw, peer.gid.data(), 16);
    a.ah_attr.grh.sgid_index = uint8_t(p.gid_index);
    a.ah_attr.grh.hop_limit = kHopLimit;
    a.ah_attr.grh.traffic_class = s.tos == kUnset ? 0 : uint8_t(s.tos);
  }
  int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  if (int rc = v.modify_qp(qp, &a, mask); rc != 0) {
    throw_errno("ibv_modify_qp to RTR (peer QP " + std::to_string(peer.qpn) + ", GID " +
                    hex_gid(peer.gid) + ", MTU " + std::to_string(128 << a.path_mtu) + ")",
                rc);
  }
  ibv_qp_attr r{};
  r.qp_state = IBV_QPS_RTS;
  r.timeout = s.ack_timeout == kUnset ? kDefaultAckTimeout : uint8_t(s.ack_timeout);
  r.retry_cnt = kTransportRetry;
  r.rnr_retry = kRnrRetry;
  r.sq_psn = mine.psn;
  r.max_rd_atomic = depths.initiator_depth;
  mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
         IBV_QP_MAX_QP_RD_ATOMIC;
  if (int rc = v.modify_qp(qp, &r, mask); rc != 0) throw_errno("ibv_modify_qp to RTS", rc);
}

OobPort oob_port_of_socket(VerbsApi& v, int fd, const std::string& name, const RdmaSettings& s) {
  sockaddr_storage local = local_address(fd);
  if (local.ss_family == AF_INET) reinterpret_cast<sockaddr_in*>(&local)->sin_port = 0;
  if (local.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6*>(&local)->sin6_port = 0;
  return oob_port(v, local, name, s);
}

uint32_t random_psn() {
  std::random_device rd;
  return rd() & 0xffffff;
}

std::string read_oob_hello(int fd, int64_t deadline_ns, uint64_t cookie, uint32_t flow, Verb verb,
                           uint8_t link, OobHello& out) {
  std::array<uint8_t, kOobBytes> buf{};
  if (std::string why = recv_exact(fd, buf.data(), buf.size(), deadline_ns); !why.empty()) {
    return why;
  }
  if (OobError e = decode_oob(buf.data(), buf.size(), out); e != OobError::ok) {
    return std::string(to_string(e));
  }
  if (out.qp.link != link) return "the peer's port has another link layer";
  ConnInfo info;
  return check_conn_info(buf.data() + 40, kPdBytes, cookie, flow, uint8_t(verb), info);
}

}  // namespace mtperf::rdma

// Every workload on loopback with client and server as separate processes: `mtperf serve` on a
// port the kernel picks, `mtperf run -H` against it, the JSON report read back. Both sides'
// whole-test totals travel in the report, so the two ends are checked against each other.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include "tests/support/text.hpp"

#include "control/protocol.hpp"
#include "transports/inet/inet.hpp"

using nlohmann::json;

namespace {

constexpr int kProcessTimeoutMs = 60000;

struct Pipe {
  int rd = -1, wr = -1;
  Pipe() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    rd = fds[0];
    wr = fds[1];
  }
  ~Pipe() {
    close_rd();
    close_wr();
  }
  void close_rd() {
    if (rd >= 0) ::close(rd);
    rd = -1;
  }
  void close_wr() {
    if (wr >= 0) ::close(wr);
    wr = -1;
  }
};

// Starts MTPERF_BINARY with `args`; stdout (and stderr when given) go to the pipes' write ends.
// The child dies with the test process, so a crashed test leaves no server behind.
pid_t spawn(const std::vector<std::string>& args, int out_fd, int err_fd) {
  std::vector<std::string> all = {MTPERF_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(out_fd, STDOUT_FILENO);
    if (err_fd >= 0) dup2(err_fd, STDERR_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

struct Result {
  int rc = -1;
  std::string out, err;
};

// Runs `mtperf ARGS...` to completion, collecting its stdout and stderr.
Result run(const std::vector<std::string>& args) {
  Pipe out, err;
  pid_t pid = spawn(args, out.wr, err.wr);
  out.close_wr();
  err.close_wr();
  Result r;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kProcessTimeoutMs);
  pollfd p[2] = {{out.rd, POLLIN, 0}, {err.rd, POLLIN, 0}};
  while (p[0].fd >= 0 || p[1].fd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || poll(p, 2, int(left.count())) == 0) {
      kill(pid, SIGKILL);
      FAIL_CHECK("mtperf " << args.at(0) << " ran past " << kProcessTimeoutMs << " ms");
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (p[i].fd < 0 || p[i].revents == 0) continue;
      char buf[4096];
      ssize_t n = read(p[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? r.out : r.err).append(buf, size_t(n));
      } else if (n == 0 || errno != EINTR) {
        p[i].fd = -1;
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

// `mtperf serve --port 0 --bind 127.0.0.1`, stopped (SIGTERM) and reaped when the tests end,
// whatever they found.
class ServeProcess {
 public:
  ServeProcess() {
    pid_ = spawn({"serve", "--port", "0", "--bind", "127.0.0.1"}, out_.wr, -1);
    out_.close_wr();
    std::string line;
    char c;
    pollfd p{out_.rd, POLLIN, 0};
    while (line.find('\n') == std::string::npos && poll(&p, 1, 10000) > 0 &&
           read(out_.rd, &c, 1) == 1) {
      line += c;
    }
    auto at = line.find(" port ");
    if (at == std::string::npos) {
      stop();
      throw std::runtime_error("mtperf serve did not say its port: '" + line + "'");
    }
    port_ = std::stoi(line.substr(at + 6));
  }
  ~ServeProcess() { stop(); }
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  bool alive() const { return pid_ > 0 && kill(pid_, 0) == 0; }

 private:
  void stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 100 && waitpid(pid_, &status, WNOHANG) == 0; ++i)
      usleep(100000);
    if (waitpid(pid_, &status, WNOHANG) == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
    pid_ = -1;
  }

  Pipe out_;
  pid_t pid_ = -1;
  int port_ = 0;
};

ServeProcess& server() {
  static ServeProcess s;
  return s;
}

// `mtperf run -H SERVER ARGS --format json -l 1 --warmup 0.2`, checked to succeed; the report.
json run_json(std::vector<std::string> args) {
  std::vector<std::string> all = {"run", "-H", server().address(), "--format", "json",
                                  "-l",  "1",  "--warmup",         "0.2",      "-q"};
  all.insert(all.end(), args.begin(), args.end());
  Result r = run(all);
  INFO("stderr: " << r.err);
  REQUIRE(r.rc == 0);
  json j = json::parse(r.out, nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  REQUIRE(j.at("schema") == 1);
  CHECK(j.at("summary").at("errors").empty());
  return j;
}

uint64_t u64(const json& flow, const char* key) {
  INFO(key);
  REQUIRE(flow.at(key).is_number_unsigned());
  return flow.at(key).get<uint64_t>();
}

// A stream flow's bytes: the sender's whole-test count equals the receiver's (the receiver
// reads to the end of the stream), and the window saw some of them.
void check_stream_flow(const json& f, const std::string& direction) {
  CHECK(f.at("direction") == direction);
  CHECK(u64(f, "bytes") > 0);
  CHECK(f.at("throughput_bps").get<double>() > 0);
  CHECK(f.at("error").is_null());
  bool up = direction == "c2s";
  uint64_t sent = u64(f, up ? "client_bytes_sent" : "server_bytes_sent");
  uint64_t received = u64(f, up ? "server_bytes_received" : "client_bytes_received");
  CHECK(sent > 0);
  CHECK(sent == received);
  CHECK(u64(f, "bytes") <= received);
}

// A TCP rr/crr flow: every request was answered before the connection closed, so both ends
// counted the same transactions and bytes.
void check_rr_flow(const json& f, const std::string& direction) {
  CHECK(f.at("direction") == direction);
  CHECK(u64(f, "transactions") > 0);
  CHECK(u64(f, "client_transactions") == u64(f, "server_transactions"));
  CHECK(u64(f, "client_bytes_sent") == u64(f, "server_bytes_received"));
  CHECK(u64(f, "server_bytes_sent") == u64(f, "client_bytes_received"));
}

void check_latency(const json& summary) {
  REQUIRE(summary.at("latency_us").is_object());
  CHECK(summary.at("latency_us").at("mean").get<double>() > 0);
  CHECK(summary.at("latency_us").at("count").get<uint64_t>() > 0);
}

// crr's samples: a connect is timed with its transaction, in the window that counts the
// transaction (workloads/job.hpp, PhaseClock::window_closed). So the connects timed are the
// transactions timed, exactly; and those are transactions the window counts, but for at most one
// a flow that read the window open just as it closed.
void check_crr_counts(const json& s, uint64_t flows) {
  const uint64_t connects = s.at("connect_latency_us").at("count").get<uint64_t>();
  const uint64_t timed = s.at("latency_us").at("count").get<uint64_t>();
  const uint64_t transactions = s.at("transactions").get<uint64_t>();
  INFO("connects timed " << connects << ", transactions timed " << timed << ", counted "
                         << transactions << ", flows " << flows);
  CHECK(connects == timed);
  CHECK(timed <= transactions + flows);
}

}  // namespace

TEST_CASE("stream: client and server agree on every byte", "[loopback]") {
  json s = run_json({"-w", "stream"}).at("summary");
  CHECK(s.at("throughput_bps").get<double>() > 0);
  REQUIRE(s.at("flows").size() == 1);
  check_stream_flow(s.at("flows")[0], "c2s");
}

TEST_CASE("stream: lo carried at least the payload the application sent", "[loopback]") {
  // `mtperf run -w stream -l 0.5 --format json` against the serving process over 127.0.0.1.
  Result r = run({"run", "-H", server().address(), "--format", "json", "-l", "0.5", "--warmup",
                  "0.2", "-q", "-w", "stream"});
  INFO("stderr: " << r.err);
  REQUIRE(r.rc == 0);
  const json s = json::parse(r.out).at("summary");
  INFO("local_netdev: " << s.at("local_netdev").dump());
  REQUIRE(s.at("local_netdev").size() == 1);
  const json& lo = s.at("local_netdev")[0];
  CHECK(lo.at("device") == "lo");
  uint64_t app = u64(lo, "app_bytes_sent");
  CHECK(app > 0);
  INFO("lo device/app bytes " << lo.at("wire_payload_ratio"));
  CHECK(u64(lo, "tx_bytes") >= app);
  CHECK(lo.at("carried") == true);
  double ratio = lo.at("wire_payload_ratio").get<double>();
  // At least the payload. No upper bound: lo also carries whatever else runs on this host at the
  // time (ctest runs tests side by side), which a 1.61 under TSan once showed.
  CHECK(ratio >= 1.0);
  CHECK(u64(lo, "errors") == 0);
  CHECK(s.at("local_tcp").contains("RetransSegs"));
  REQUIRE(s.at("remote_netdev").size() == 1);  // the server reached over 127.0.0.1: lo too
  CHECK(s.at("remote_netdev")[0].at("device") == "lo");
}

TEST_CASE("--mss: no segment larger than it, whichever end sends", "[loopback]") {
  for (const char* w : {"stream", "maerts"}) {
    INFO(w);
    const json j = run_json({"-w", w, "--mss", "1000"});
    const json& it = j.at("iterations")[0];
    uint64_t bytes = 0;  // in the measured window, as the segment counter
    for (const json& f : it.at("flows"))
      bytes += u64(f, "bytes");
    // The host's segment counter over the window: other traffic only adds segments, so bytes
    // per segment can only fall below what the MSS allows (about 39,000 without it).
    const uint64_t segments = u64(it.at("local_tcp"), "OutSegs");
    REQUIRE(segments > 0);
    CHECK(bytes / segments <= 1000);
    CHECK(bytes > 1000 * 1000);
  }
}

TEST_CASE("maerts: the server sends, the client receives it all", "[loopback]") {
  json s = run_json({"-w", "maerts"}).at("summary");
  CHECK(s.at("throughput_s2c_bps").get<double>() > 0);
  REQUIRE(s.at("flows").size() == 1);
  check_stream_flow(s.at("flows")[0], "s2c");
}

TEST_CASE("bidir: both directions, each agreeing end to end", "[loopback]") {
  json s = run_json({"-w", "bidir", "-P", "2"}).at("summary");
  CHECK(s.at("throughput_c2s_bps").get<double>() > 0);
  CHECK(s.at("throughput_s2c_bps").get<double>() > 0);
  REQUIRE(s.at("flows").size() == 4);
  check_stream_flow(s.at("flows")[0], "c2s");
  check_stream_flow(s.at("flows")[1], "c2s");
  check_stream_flow(s.at("flows")[2], "s2c");
  check_stream_flow(s.at("flows")[3], "s2c");
}

TEST_CASE("rr: transactions, latency, and both ends agree", "[loopback]") {
  json s = run_json({"-w", "rr", "-r", "1,1"}).at("summary");
  CHECK(s.at("transaction_rate").get<double>() > 0);
  check_latency(s);
  REQUIRE(s.at("flows").size() == 1);
  check_rr_flow(s.at("flows")[0], "rr");
}

TEST_CASE("rr with several requests in flight", "[loopback]") {
  json s = run_json({"-w", "rr", "-r", "64,1024", "--burst", "4", "-P", "2"}).at("summary");
  CHECK(s.at("transaction_rate").get<double>() > 0);
  REQUIRE(s.at("flows").size() == 2);
  for (auto& f : s.at("flows"))
    check_rr_flow(f, "rr");
}

TEST_CASE("crr: a connection per transaction", "[loopback]") {
  json s = run_json({"-w", "crr"}).at("summary");
  CHECK(s.at("transaction_rate").get<double>() > 0);
  check_latency(s);
  REQUIRE(s.at("flows").size() == 1);
  check_rr_flow(s.at("flows")[0], "crr");
  // Each connect timed (a handshake on loopback is well under a round trip with its data), and
  // none failed.
  const json& c = s.at("connect_latency_us");
  REQUIRE(c.is_object());
  CHECK(c.at("count").get<uint64_t>() > 0);
  check_crr_counts(s, 1);
  CHECK(c.at("p50").get<double>() <= s.at("latency_us").at("p50").get<double>());
  CHECK(s.at("connect_failures") ==
        json({{"refused", 0}, {"timed_out", 0}, {"no_port", 0}, {"other", 0}}));
  CHECK(run_json({"-w", "rr"}).at("summary").at("connect_latency_us").is_null());
}

// Issue 40: a busy host stretches the moments between the window's readings; the counts must
// not move with it. Spinning threads beside the test, as many as the CPUs and one more.
TEST_CASE("crr on a loaded host: the connects timed are exactly the transactions timed",
          "[loopback]") {
  std::atomic<bool> stop{false};
  std::vector<std::thread> hog;
  for (unsigned i = 0; i <= std::max(1u, std::thread::hardware_concurrency()); ++i)
    hog.emplace_back([&stop] {
      volatile uint64_t spin = 0;
      while (!stop.load(std::memory_order_relaxed))
        spin = spin + 1;
    });
  json s;
  try {
    s = run_json({"-w", "crr", "-P", "4"}).at("summary");
  } catch (...) {
    stop = true;
    for (auto& t : hog)
      t.join();
    throw;
  }
  stop = true;
  for (auto& t : hog)
    t.join();
  check_crr_counts(s, 4);
}

TEST_CASE("crr --rate: new connections paced over all flows", "[loopback]") {
  json j = run_json({"-w", "crr", "-P", "2", "--rate", "400"});
  CHECK(j.at("test").at("conn_rate") == 400);
  const double rate = j.at("summary").at("transaction_rate").get<double>();
  INFO("crr at " << rate << " transactions/s, 400 asked");
  CHECK(rate <= 400 * 1.1);
  CHECK(rate >= 400 * 0.5);  // a loaded host may fall behind; it never runs ahead
}

TEST_CASE("rr over UDP with different request and response sizes", "[loopback]") {
  json s = run_json({"-w", "rr", "-p", "udp", "-r", "1024,2048"}).at("summary");
  CHECK(s.at("transaction_rate").get<double>() > 0);
  check_latency(s);
  REQUIRE(s.at("flows").size() == 1);
  const json& f = s.at("flows")[0];
  CHECK(u64(f, "transactions") > 0);
  // A datagram may be lost, so only this much is certain: no answer without a request.
  CHECK(u64(f, "client_transactions") <= u64(f, "server_transactions"));
  CHECK(u64(f, "server_bytes_sent") == 2 * u64(f, "server_bytes_received"));
  CHECK(u64(f, "client_bytes_received") % 2048 == 0);
}

TEST_CASE("UDP stream at 100 Mbit/s: no loss, the rate asked for", "[loopback]") {
  // A 4 MiB receive buffer rides out a receiver descheduled for a while on a busy machine; an
  // unloaded loopback drops nothing either way.
  json s =
      run_json({"-w", "stream", "-p", "udp", "--rate", "100M", "--rcvbuf", "4M"}).at("summary");
  REQUIRE(s.at("udp_loss_percent").is_number());
  CHECK(s.at("udp_loss_percent").get<double>() == 0);
  CHECK(s.at("throughput_bps").get<double>() == Approx(100e6).epsilon(0.10));
  REQUIRE(s.at("flows").size() == 1);
  const json& f = s.at("flows")[0];
  const json& udp = f.at("udp");
  CHECK(udp.at("lost") == 0);
  // Every datagram sent was received: nothing was cut off at the end either.
  CHECK(udp.at("received") == udp.at("sent"));
  CHECK(u64(f, "client_bytes_sent") == u64(f, "server_bytes_received"));
}

TEST_CASE("text and csv reports", "[loopback]") {
  std::vector<std::string> base = {
      "run", "-H", server().address(), "-l", "0.3", "--warmup", "0", "-q", "-w", "rr"};
  std::vector<std::string> text_args = base, csv_args = base;
  text_args.insert(text_args.end(), {"--format", "text"});
  csv_args.insert(csv_args.end(), {"--format", "csv"});
  Result text = run(text_args);
  INFO("stderr: " << text.err);
  CHECK(text.rc == 0);
  CHECK_THAT(text.out, Catch::Contains("rr"));
  Result csv = run(csv_args);
  INFO("stderr: " << csv.err);
  CHECK(csv.rc == 0);
  std::vector<std::string> rows = mtperf::test::split_lines(csv.out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].rfind("WORKLOAD,", 0) == 0);
  CHECK(std::count(rows[0].begin(), rows[0].end(), ',') ==
        std::count(rows[1].begin(), rows[1].end(), ','));
  CHECK(rows[1].rfind("rr,tcp,socket,1,", 0) == 0);
}

TEST_CASE("without -H the test runs against an in-process server", "[loopback]") {
  Result r = run({"run", "-w", "stream", "-l", "0.3", "--warmup", "0", "-q", "--format", "json"});
  INFO("stderr: " << r.err);
  REQUIRE(r.rc == 0);
  json s = json::parse(r.out).at("summary");
  REQUIRE(s.at("flows").size() == 1);
  check_stream_flow(s.at("flows")[0], "c2s");
}

TEST_CASE("a malformed or over-limit request leaves the server serving", "[loopback]") {
  using namespace mtperf;
  SockAddr where = inet::resolve(server().address(), 0);
  {
    int fd = inet::connect_to(where, Proto::tcp, SocketOptions{}, 5000);
    std::string junk = "SSH-2.0-OpenSSH_9.2\r\n";
    CHECK(inet::write_all(fd, junk.data(), junk.size(), 5000));
    try {
      control::Message m = control::recv_message(fd, control::kMaxResultBody, 5000);
      CHECK(m.type == control::MsgType::error);
      CHECK_THAT(m.body.value("message", ""), Catch::Contains("magic"));
    } catch (const control::ProtocolError&) {
      // closed without a word: also an answer
    }
    ::close(fd);
  }
  {
    int fd = inet::connect_to(where, Proto::tcp, SocketOptions{}, 5000);
    control::send_message(fd, {control::MsgType::hello, {{"version", control::kVersion}}}, 5000);
    control::expect(fd, control::MsgType::welcome, control::kMaxRequestBody, 5000);
    json test = {{"workload", "stream"}, {"flows", 100000}};
    control::send_message(fd, {control::MsgType::test, {{"test", test}}}, 5000);
    control::Message m = control::recv_message(fd, control::kMaxResultBody, 5000);
    CHECK(m.type == control::MsgType::error);
    CHECK_THAT(m.body.value("message", ""), Catch::Contains("flows"));
    ::close(fd);
  }
  CHECK(server().alive());
  json s = run_json({"-w", "stream"}).at("summary");
  check_stream_flow(s.at("flows")[0], "c2s");
}

TEST_CASE("an unreachable server: non-zero exit, one line on stderr", "[loopback]") {
  Result r = run({"run", "-H", "127.0.0.1:1", "-l", "0.3", "-q"});
  CHECK(r.rc != 0);
  CHECK(r.rc != 2);  // not a usage error
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_THAT(r.err, Catch::Contains("127.0.0.1:1"));
}

TEST_CASE("a bad option exits with 2 and names it", "[loopback]") {
  Result r = run({"run", "--turbo"});
  CHECK(r.rc == 2);
  CHECK_THAT(r.err, Catch::Contains("turbo"));
  r = run({"run", "-w", "flood"});
  CHECK(r.rc == 2);
  CHECK_THAT(r.err, Catch::Contains("option -w: unknown workload 'flood'"));  // as typed
  r = run({"run", "-i", "3,5"});
  CHECK(r.rc == 2);
  r = run({"run", "127.0.0.1"});  // a host without -H
  CHECK(r.rc == 2);
  r = run({"serve", "--port", "notaport"});
  CHECK(r.rc == 2);
}

TEST_CASE("--verify: every byte checked on both ends, all as sent", "[loopback][verify]") {
  // io_uring where this kernel allows it: two sends in flight on one TCP socket once
  // interleaved their bytes there (an 8 KiB stream showed it within a second).
  Result t = run({"transports"});
  bool uring = t.out.find("\nuring    yes       yes") != std::string::npos;
  std::vector<std::vector<std::string>> cases = {{"-w", "stream", "-m", "8K"},
                                                 {"-w", "bidir"},
                                                 {"-w", "rr", "-r", "100,3000", "--burst", "4"},
                                                 {"-w", "crr", "-r", "64,1000"},
                                                 {"-w", "stream", "-p", "udp", "--rate", "100M"},
                                                 {"-w", "rr", "-p", "udp", "-r", "1024,2048"}};
  if (uring) {
    cases.push_back({"-T", "uring", "-w", "stream", "-m", "8K"});
    cases.push_back({"-T", "uring", "-w", "maerts"});
    cases.push_back({"-T", "uring", "-w", "rr", "-r", "100,3000", "--burst", "4"});
  }
  for (auto args : cases) {
    std::string what;
    for (auto& a : args)
      what += a + " ";
    INFO(what);
    args.push_back("--verify");
    json s = run_json(args).at("summary");
    REQUIRE(s.at("verify").is_object());
    CHECK(s.at("verify").at("bytes_checked").get<uint64_t>() > 0);
    CHECK(s.at("verify").at("bad_receives") == 0);
    CHECK(s.at("verify").at("first_mismatches").empty());
    for (const auto& f : s.at("flows")) {
      REQUIRE(f.at("verify").is_object());
      CHECK(f.at("verify").at("bytes_checked").get<uint64_t>() > 0);
    }
  }
  // Without --verify there is nothing to report.
  CHECK(run_json({"-w", "rr"}).at("summary").at("verify").is_null());
}

TEST_CASE("--check: a verdict, exit 3 when a check fails, JUnit XML", "[loopback][check]") {
  char dir[] = "/tmp/mtperf-junit-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string xml = std::string(dir) + "/results.xml";
  auto read = [](const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  std::vector<std::string> base = {
      "run",      "-H",  server().address(), "-w",       "stream", "-l", "0.5",
      "--warmup", "0.1", "--verify",         "--format", "junit",  "-o", xml};
  auto with = [&](const std::string& checks) {
    auto a = base;
    a.push_back("--check");
    a.push_back(checks);
    return run(a);
  };
  Result pass = with("throughput>0,errors==0,verify==0");
  INFO(pass.err);
  CHECK(pass.rc == 0);
  std::string doc = read(xml);
  CHECK_THAT(doc, Catch::Contains("<testsuites tests=\"3\" failures=\"0\">"));
  CHECK_THAT(doc, Catch::Contains("name=\"verify==0\""));

  Result fail = with("throughput>0,throughput>=1T");
  CHECK(fail.rc == 3);
  CHECK_THAT(fail.err, Catch::Contains("checks failed: throughput>=1T (measured"));
  doc = read(xml);
  CHECK_THAT(doc, Catch::Contains("<testsuites tests=\"2\" failures=\"1\">"));
  CHECK_THAT(doc, Catch::Contains("<failure message=\"measured"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("--interval: intervals cover the window, the last one ending with it", "[loopback]") {
  // 1.2 s in steps of 0.5 s: [0, 0.5], [0.5, 1.0] and the last, partial [1.0, 1.2].
  for (const char* workload : {"rr", "stream"}) {
    INFO("workload " << workload);
    Result r = run({"run", "-H", server().address(), "--format", "json", "-l", "1.2", "--warmup",
                    "0.2", "-q", "-w", workload, "--interval", "0.5"});
    INFO("stderr: " << r.err);
    REQUIRE(r.rc == 0);
    const json s = json::parse(r.out).at("summary");
    const json& iv = s.at("intervals");
    REQUIRE(iv.size() == 3);
    CHECK(iv[0].at("start_s").get<double>() == 0.0);
    for (size_t i = 1; i < iv.size(); ++i)
      CHECK(iv[i].at("start_s").get<double>() == iv[i - 1].at("end_s").get<double>());
    // Each boundary is taken when the clock thread wakes: within 50 ms of its nominal time.
    CHECK(iv[0].at("end_s").get<double>() == Approx(0.5).margin(0.05));
    CHECK(iv[2].at("end_s").get<double>() == Approx(s.at("window_s").get<double>()).margin(1e-3));
    CHECK(iv[2].at("end_s").get<double>() == Approx(1.2).margin(0.05));
    uint64_t transactions = 0;
    for (const json& i : iv)
      transactions += i.at("transactions").get<uint64_t>();
    if (std::string(workload) == "rr") {
      CHECK(transactions == s.at("transactions").get<uint64_t>());  // nothing left out
      CHECK(iv[2].at("transactions").get<uint64_t>() > 0);
    } else {
      CHECK(iv[2].at("bytes_sent").get<uint64_t>() > 0);
    }
  }
}

TEST_CASE("interim lines are in the workload's own unit, the last interval too", "[loopback]") {
  struct Case {
    const char* workload;
    const char* unit;
    const char* other;
  };
  for (const Case c : {Case{"rr", "trans/s", "Mbit/s"}, Case{"crr", "trans/s", "Mbit/s"},
                       Case{"stream", "Mbit/s", "trans/s"}}) {
    INFO("workload " << c.workload);
    Result r = run({"run", "-H", server().address(), "-l", "1", "--warmup", "0", "-w", c.workload,
                    "--interval", "0.5"});
    INFO("stderr: " << r.err);
    REQUIRE(r.rc == 0);
    std::vector<std::string> lines;
    for (const std::string& line : mtperf::test::split_lines(r.err))
      if (line.find(" s] ") != std::string::npos) lines.push_back(line);
    REQUIRE(lines.size() == 2);  // [0, 0.5] and [0.5, 1.0]: the window's end is reported
    for (const std::string& line : lines) {
      CHECK_THAT(line, Catch::Contains(c.unit));
      CHECK_THAT(line, !Catch::Contains(c.other));
    }
  }
}

// The line the server logs for each connection, and the key file read again while tests run.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "control/client.hpp"
#include "control/local_server.hpp"
#include "control/protocol.hpp"
#include "control/server.hpp"
#include "control/session_log.hpp"

using namespace mtperf;
using namespace mtperf::control;

namespace {

// The server's log lines, collected from its threads.
class Sink {
 public:
  std::function<void(const std::string&)> fn() {
    return [this](const std::string& line) {
      std::lock_guard lock(mu_);
      lines_.push_back(line);
      cv_.notify_all();
    };
  }
  // The first line containing `text`, waiting up to 5 s for it; "" when none came.
  std::string wait_for(const std::string& text) {
    std::unique_lock lock(mu_);
    std::string found;
    cv_.wait_for(lock, std::chrono::seconds(5), [&] {
      for (const auto& l : lines_) {
        if (l.find(text) != std::string::npos) {
          found = l;
          return true;
        }
      }
      return false;
    });
    return found;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> lines_;
};

TestSpec short_test(Workload w, double seconds = 0.3) {
  TestSpec s;
  s.workload = w;
  s.duration_s = seconds;
  s.warmup_s = 0;
  return s;
}

TestOutcome run(const LocalServer& server, const TestSpec& spec, const std::string& key = "") {
  ClientOptions o;
  o.server = server.address();
  o.key = key;
  return run_test(spec, o);
}

// A directory of its own under $TMPDIR or /tmp, removed with what is in it.
struct TempDir {
  std::string path;
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base ? base : "/tmp") + "/mtperf-key-XXXXXX";
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::string cmd = "rm -rf '" + path + "'";
    [[maybe_unused]] int rc = std::system(cmd.c_str());
  }
};

void write_file(const std::string& path, const std::string& text, mode_t mode = 0600) {
  std::ofstream(path, std::ios::trunc) << text;
  REQUIRE(::chmod(path.c_str(), mode) == 0);
}

}  // namespace

TEST_CASE("log values are bare or quoted, and a line stays one line", "[server][log]") {
  CHECK(log_value("10.0.0.1:5000") == "10.0.0.1:5000");
  CHECK(log_value("") == "\"\"");
  CHECK(log_value("a b") == "\"a b\"");
  CHECK(log_value("say \"hi\"\\") == "\"say \\\"hi\\\"\\\\\"");
  CHECK(log_value("x=1") == "\"x=1\"");
  CHECK(log_value("two\nlines") == "\"two lines\"");
  TestLog log;
  log.client = "[::1]:7";
  log.result = TestLog::Result::refused;
  log.why = "no";
  CHECK(format_test_log(log) == "client=[::1]:7 result=refused reason=no");
  log.spec = TestSpec{};
  log.spec->flows = 4;
  log.not_connected = 3;
  CHECK_THAT(format_test_log(log), Catch::Contains(" flows=4 not_connected=3 result=refused"));
}

TEST_CASE("the server logs a finished stream test with its own byte counts", "[server][log]") {
  Sink sink;
  ServerOptions o;
  o.log = sink.fn();
  LocalServer server(o);
  TestOutcome out = run(server, short_test(Workload::stream));
  REQUIRE(out.server);
  REQUIRE(out.server->flows.size() == 1);
  const uint64_t recv = out.server->flows[0].total.bytes_recv;
  CHECK(recv > 0);
  std::string line = sink.wait_for("result=");
  INFO(line);
  CHECK_THAT(line, Catch::StartsWith("client=127.0.0.1:"));
  CHECK_THAT(line, Catch::Contains(" workload=stream proto=tcp transport=" + TestSpec{}.transport +
                                   " flows=1 "));
  CHECK_THAT(line, Catch::Contains(" bytes_sent=0 bytes_recv=" + std::to_string(recv) + " "));
  CHECK_THAT(line, Catch::EndsWith(" result=ok"));
  CHECK(line.find("transactions=") == std::string::npos);
  CHECK(line.find('\n') == std::string::npos);
}

TEST_CASE("the server logs the transactions of an rr test", "[server][log]") {
  Sink sink;
  ServerOptions o;
  o.log = sink.fn();
  LocalServer server(o);
  TestSpec spec = short_test(Workload::rr);
  spec.flows = 2;
  TestOutcome out = run(server, spec);
  REQUIRE(out.server);
  uint64_t tx = 0, sent = 0, recv = 0;
  for (const auto& f : out.server->flows) {
    tx += f.total.transactions;
    sent += f.total.bytes_sent;
    recv += f.total.bytes_recv;
  }
  CHECK(tx > 0);
  std::string line = sink.wait_for("result=");
  INFO(line);
  CHECK_THAT(line, Catch::Contains(" workload=rr proto=tcp "));
  CHECK_THAT(line, Catch::Contains(" flows=2 "));
  CHECK_THAT(line, Catch::Contains(" bytes_sent=" + std::to_string(sent) +
                                   " bytes_recv=" + std::to_string(recv) +
                                   " transactions=" + std::to_string(tx) + " result=ok"));
}

TEST_CASE("the server logs a refused test with the reason", "[server][log]") {
  Sink sink;
  ServerOptions o;
  o.log = sink.fn();
  o.key = "right";
  LocalServer server(o);
  CHECK_THROWS(run(server, short_test(Workload::stream), "wrong"));
  std::string line = sink.wait_for("result=");
  INFO(line);
  CHECK_THAT(line, Catch::StartsWith("client=127.0.0.1:"));
  CHECK_THAT(line, Catch::Contains(" result=refused reason=\"authentication failed"));
  CHECK(line.find("bytes_") == std::string::npos);
  // A client of another key (or none) leaves at the challenge, the server's proof not its
  // key's: the line says so, not only that the connection closed.
  CHECK_THAT(line, Catch::Contains("no AUTH after the key challenge (a client without the key"));
}

TEST_CASE("MTPERF_KEY is the key when no file is given; a file wins", "[server]") {
  ::setenv("MTPERF_KEY", "  from the environment \n", 1);
  CHECK(load_key("") == "from the environment");
  TempDir dir;
  write_file(dir.path + "/key", "from a file\n");
  CHECK(load_key(dir.path + "/key") == "from a file");
  ::unsetenv("MTPERF_KEY");
  CHECK(load_key("").empty());
}

TEST_CASE("a key file is refused when others may read it, or when it holds no key", "[server]") {
  TempDir dir;
  const std::string path = dir.path + "/key";
  write_file(path, "  secret key\n");
  CHECK(read_key_file(path) == "secret key");
  write_file(path, "secret\n", 0640);
  CHECK_THROWS_WITH(read_key_file(path), Catch::Contains("chmod 600"));
  write_file(path, "secret\n", 0604);
  ServerOptions o;
  o.key_file = path;
  CHECK_THROWS_WITH(LocalServer(o), Catch::Contains("open to group or others"));
  write_file(path, " \n\t\n");
  CHECK_THROWS_WITH(read_key_file(path), Catch::Contains("holds no key"));
  CHECK_THROWS_WITH(read_key_file(dir.path + "/none"), Catch::Contains("No such file"));
  o.key = "both";
  CHECK_THROWS_AS(resolved(o), std::invalid_argument);
}

TEST_CASE("a reloaded key file holds for new clients; a running test finishes", "[server]") {
  TempDir dir;
  const std::string path = dir.path + "/key";
  write_file(path, "key-A\n");
  Sink sink;
  ServerOptions o;
  o.key_file = path;
  o.log = sink.fn();
  LocalServer server(o);
  TestOutcome first = run(server, short_test(Workload::stream), "key-A");
  CHECK(first.client.errors.empty());

  // A test under key A runs across the reload.
  TestOutcome running;
  std::thread long_test([&] { running = run(server, short_test(Workload::stream, 1.5), "key-A"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  write_file(path, "key-B\n");
  server.server().request_reload();  // what SIGHUP does
  CHECK_THAT(sink.wait_for("event=reload"), Catch::EndsWith("result=ok"));
  long_test.join();
  CHECK(running.client.errors.empty());
  REQUIRE(running.server);
  CHECK(running.server->errors.empty());
  CHECK(running.client.window_s > 1.0);

  CHECK_THROWS_WITH(run(server, short_test(Workload::stream), "key-A"),
                    Catch::Contains("authentication"));
  TestOutcome after = run(server, short_test(Workload::stream), "key-B");
  CHECK(after.client.errors.empty());

  // A broken file keeps the key the server has.
  write_file(path, "key-C\n", 0644);
  CHECK_THROWS_WITH(server.server().reload_key(), Catch::Contains("chmod 600"));
  CHECK(run(server, short_test(Workload::stream), "key-B").client.errors.empty());
}

TEST_CASE("a reload without a key file is refused and logged", "[server]") {
  Sink sink;
  ServerOptions o;
  o.log = sink.fn();
  LocalServer server(o);
  CHECK_THROWS_WITH(server.server().reload_key(), Catch::Contains("--key-file"));
  server.server().request_reload();
  CHECK_THAT(sink.wait_for("event=reload"), Catch::Contains("result=error"));
}

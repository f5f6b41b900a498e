// Every command and subcommand of the built mtperf binary: --help and -h print that command's
// own usage and exit 0; an unknown option or a bad value exits 2 with a message that names the
// option as typed (and the value as typed); defaults are printed as a person writes them.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace {

struct Result {
  int rc = -1;
  std::string out, err;
};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `mtperf ARGS` (words without quoting needs), stdin from /dev/null.
Result mtperf(const std::string& args) {
  static const std::filesystem::path dir = [] {
    char tmpl[] = "/tmp/mtperf-usage-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    return std::filesystem::path(tmpl);
  }();
  const std::string cmd = std::string(MTPERF_BINARY) + " " + args + " </dev/null >" +
                          (dir / "out").string() + " 2>" + (dir / "err").string();
  const int status = std::system(cmd.c_str());
  Result r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  return r;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

// Each command, and the words that must come before an option for it to be read (sweep needs
// --adapters before it looks at anything else).
struct Command {
  std::string name;
  std::string before_bogus;
};

const std::vector<Command>& commands() {
  static const std::vector<Command> all = {
      {"run", ""},
      {"serve", ""},
      {"suite", ""},
      {"sweep", "--adapters 1"},
      {"compare", "-T socket,socket"},
      {"report", ""},
      {"transports", ""},
      {"topology", ""},
      {"testbed", ""},
      {"testbed up", ""},
      {"testbed down", ""},
      {"testbed status", ""},
#ifdef MTPERF_HAVE_ATM
      {"atm", ""},
      {"atm up", ""},
      {"atm down", ""},
      {"atm status", ""},
      {"atm cells", ""},
      {"atm decode", ""},
#endif
  };
  return all;
}

}  // namespace

TEST_CASE("--help and -h print the command's own usage and exit 0") {
  for (const Command& c : commands()) {
    for (const char* help : {"--help", "-h"}) {
      const Result r = mtperf(c.name + " " + help);
      INFO("mtperf " << c.name << " " << help << "\nstdout:\n" << r.out << "stderr:\n" << r.err);
      CHECK(r.rc == 0);
      CHECK(r.err.empty());
      const std::string head = "usage: mtperf " + c.name;
      REQUIRE(r.out.size() > head.size());
      CHECK(r.out.rfind(head, 0) == 0);
      CHECK((r.out[head.size()] == ' ' || r.out[head.size()] == '\n'));
      CHECK(count(r.out, "usage:") == 1);  // its own, not its siblings'
    }
  }
}

TEST_CASE("usage texts print defaults as a person writes them") {
  for (const Command& c : commands()) {
    const Result r = mtperf(c.name + " --help");
    INFO("mtperf " << c.name << " --help\n" << r.out);
    CHECK(r.out.find("(=") == std::string::npos);       // Boost's "arg (=10)"
    CHECK(r.out.find("[=") == std::string::npos);       // Boost's "[=arg(=default)]"
    CHECK(r.out.find(" arg ") == std::string::npos);    // an argument without a name
    CHECK(r.out.find("0000000") == std::string::npos);  // 0.10000000000000001
    CHECK(r.out.find("9999999") == std::string::npos);
  }
  const Result run = mtperf("run --help");
  CHECK(run.out.find("--udp-timeout SECONDS") != std::string::npos);
  CHECK(run.out.find("(default 0.1)") != std::string::npos);
  CHECK(run.out.find("--testbed [NAME]") != std::string::npos);
  // Renamed options list their old spellings, still read.
  CHECK(run.out.find("old spellings, still read: --bind (--pin)") != std::string::npos);
#ifdef MTPERF_HAVE_ATM
  const Result up = mtperf("atm up --help");
  CHECK(up.out.find("--rate (--atm-rate), --mtu (--atm-mtu), --cpus (--irq-cpus)") !=
        std::string::npos);
#endif
}

TEST_CASE("an unknown option exits 2 and is named as typed") {
  for (const Command& c : commands()) {
    for (const std::string bogus : {"--bogus-option", "--bogus-option=3", "-Z"}) {
      const std::string args = c.name + " " + c.before_bogus + " " + bogus;
      const Result r = mtperf(args);
      INFO("mtperf " << args << "\nstdout:\n" << r.out << "stderr:\n" << r.err);
      CHECK(r.rc == 2);
      CHECK(r.out.empty());
      CHECK(r.err.rfind("mtperf " + c.name.substr(0, c.name.find(' ')), 0) == 0);
      CHECK(r.err.find("'" + bogus + "'") != std::string::npos);
    }
  }
}

TEST_CASE("a bad value exits 2 naming the option and the value as typed") {
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {"run -l soon", "option -l: 'soon' is not a number"},
      {"run --len=soon", "option --len: 'soon' is not a number"},
      {"run -Px", "option -P: 'x' is not a whole number"},
      {"run -l", "option -l needs a value"},
      {"run --mptcp=yes", "option --mptcp takes no value"},
      {"run -l 1 --length 2", "option -l is given more than once"},
      {"run 10.0.0.2", "unexpected argument '10.0.0.2'"},
      {"run --lenght 3", "unrecognised option '--lenght'; did you mean --length?"},
      {"run -l -1", "option -l/--length: -1 s is outside 0.05..3600 s"},
      {"run --threads -1", "option --threads: -1 is outside 0..256"},
      {"run -T io_uring", "option -T: unknown transport 'io_uring'"},
      {"run -T uring -O ring_size=100",
       "option -O: uring option ring_size: expected a power of two"},
      {"suite -l 0", "option -l/--length: 0 s is outside 0.05..3600 s"},
      // Issue 40: the option as typed, never an internal name (--test); an option the workload
      // does not read is refused, naming the workloads that read it.
      {"run -w rr -p udp -r 8", "option -r: UDP datagrams carry a 16-byte sequence header"},
      {"run -w rr -p udp --rr-size 8", "option --rr-size: UDP datagrams carry a 16-byte"},
      {"run -w stream -r 1,1", "option -r: -w stream does not use it (it sets rr, crr)"},
      {"run -w maerts --burst 4", "option --burst: -w maerts does not use it (it sets rr)"},
      {"run -w rr -m 1K", "option -m: -w rr does not use it (it sets stream, maerts, bidir)"},
      {"run -w rr --rate 1G", "option --rate: -w rr does not use it"},
      {"run -w rr --udp-timeout 0.5", "option --udp-timeout: a TCP test does not use it"},
      {"run -w crr -p udp", "option -w: crr needs a connection-oriented protocol (tcp)"},
      {"compare -T socket,socket -w stream -r 64", "option -r: -w stream does not use it"},
      {"run --pin irq", "option --pin needs --adapters"},
      {"run --bind irq", "option --bind needs --adapters"},
      {"run --adapters auto:1 --bind often", "option --bind: 'often' is not irq, numa, none"},
      {"run --adapters auto:1 --bind irq --pin none", "option --bind is given more than once"},
      {"serve --port notaport", "option --port: 'notaport' is not a whole number in 0..65535"},
      {"suite -l soon", "option -l: 'soon' is not a number"},
      {"suite --lenght 3", "did you mean --length?"},
      {"suite --format csv", "option --format: 'csv' is not text or json"},
      {"sweep --adapters 0", "option --adapters: '0' is not a count of 1..64"},
      {"sweep --adapters 1 -w sideways", "option -w: 'sideways' is not outbound"},
      {"sweep --adapters 1 -p udp", "option -p: the sweep's rows set it"},
      {"sweep --adapters 1 -l soon", "option -l: 'soon' is not a number"},
      {"sweep", "an axis is required: one of --adapters, --message-size, --flows or --mtu"},
      {"sweep -w rr -l 1", "an axis is required: one of --adapters, --message-size"},
      {"sweep --adapters 1..2 --flows 1..4",
       "options --adapters and --flows: a sweep varies one axis; give one of --adapters, "
       "--message-size, --flows or --mtu"},
      {"sweep --message-size 8K --mtu 1500 --testbed", "options --message-size and --mtu"},
      {"sweep --message-size 8K,64K -w rr", "option -w: 'rr' is a request/response row"},
      {"sweep --message-size 8K -w udp-rr-1k", "option -w: 'udp-rr-1k' is a request/response"},
      {"sweep --message-size 8K,64K -m 1K", "option -m: the --message-size axis sets it"},
      {"sweep --message-size 8K..64K", "option --message-size: '8K..64K': give a list"},
      {"sweep --message-size 64K,8K", "option --message-size: values must ascend"},
      {"sweep --message-size 32M", "option --message-size: '32M' is not a message size of 1..16M"},
      {"sweep --flows 1..16 -P 2", "option -P: the --flows axis sets it"},
      {"sweep --flows 0", "option --flows: '0' is not a count of 1..100000"},
      {"sweep --flows 1..100", "option --flows: '1..100' is 100 columns; at most 64"},
      {"sweep --mtu 1500,9000", "option --mtu: only with --testbed"},
      {"sweep --mtu 1500,90000 --testbed", "option --mtu: '90000' is not an MTU of 68..65535"},
      {"sweep --m 1", "option '--m' is ambiguous"},
      {"compare", "compare needs two configurations or more: -T A,B, or --variant twice"},
      {"compare -T socket,nosuch", "nosuch: option -T: unknown transport 'nosuch'"},
      {"compare -T socket,socket -i 1", "option -i: 1 is not 2..1000"},
      {"compare -T socket,socket -w sideways", "option -w: 'sideways' is not stream"},
      {"compare -T socket,socket --baseline uring", "option --baseline: 'uring' is none of"},
      {"compare -T socket,socket --level 0.95", "option --level: 0.95 is not a percentage"},
      {"compare -T socket,socket -I 95,5", "option -I: not for compare"},
      {"compare -T socket --variant cc=bbr --variant wait=never",
       "wait=never: option --wait: unknown wait mode 'never'"},
      {"compare -T socket,socket -l soon", "option -l: 'soon' is not a number"},
      {"compare -T uring --variant '-O ring_size=3' --variant wait=spin",
       "-O ring_size=3: option -O: uring option ring_size: expected a power of two"},
      {"compare -T socket,socket --format xml", "option --format: 'xml' is not text, json or csv"},
      {"report", "mtperf report: no JSON file given"},
      {"report a.json -o", "option -o needs a value"},
      {"report --ouput x.html a.json", "did you mean --output?"},
      {"topology --format xml", "option --format: 'xml' is not text or json"},
      {"topology --root", "option --root needs a value"},
      {"testbed up --adapters 0", "option --adapters: '0' is not 1..64"},
      {"testbed up --adapters 1 --rate fast", "option --rate: rate 'fast'"},
      {"testbed down --name Bad!", "option --name: testbed name 'Bad!'"},
      {"testbed dwn", "unknown subcommand 'dwn'; did you mean 'down'?"},
#ifdef MTPERF_HAVE_ATM
      {"atm up --mode token-ring", "option --mode: mode 'token-ring'"},
      {"atm up --mode clip --rate OC3",
       "option --rate: expected a whole number in 1..100,000,000, oc3, oc3c, oc12 or oc12c, got "
       "'OC3'"},
      {"atm up --mode clip --atm-rate OC3",
       "option --atm-rate: expected a whole number in 1..100,000,000"},
      {"atm up --mode clip --mtu 20", "option --mtu: expected a whole number in 68..65527 or 0"},
      {"atm up --mode clip --irq-cpus x", "option --irq-cpus: "},
      {"run -T clip --atm-rate OC3",
       "option --atm-rate: expected a whole number in 1..100,000,000"},
      {"sweep --testbed --mtu 1500,9000 -T clip", "option --mtu: sets a veth testbed's links"},
      {"atm up --mode clip --adapters 0", "option --adapters: '0' is not a number in 1..256"},
      {"atm status --name Bad!", "option --name: testbed name 'Bad!'"},
      {"atm cells --vpi 256 --vci 32 --encap llc --hex 00",
       "--vpi: '256' is not a number in 0..255"},
      {"atm decode --encap x", "--encap"},
      {"atm stat", "unknown subcommand 'stat'; did you mean 'status'?"},
#endif
  };
  for (const Case& c : cases) {
    const Result r = mtperf(c.args);
    INFO("mtperf " << c.args << "\nstderr:\n" << r.err);
    CHECK(r.rc == 2);
    CHECK(r.err.find(c.message) != std::string::npos);
  }
}

// MTPERF_HELP_FORMAT=json: the descriptions the man pages and the bash completion are generated
// from (packaging/gen_docs.py) are those --help prints.
TEST_CASE("MTPERF_HELP_FORMAT=json prints the options --help lists, as JSON") {
  ::setenv("MTPERF_HELP_FORMAT", "json", 1);
  const Result top = mtperf("--help");
  const Result run = mtperf("run --help");
  const Result testbed = mtperf("testbed --help");
  const Result up = mtperf("testbed up -h");
  ::unsetenv("MTPERF_HELP_FORMAT");
  REQUIRE(top.rc == 0);
  const auto t = nlohmann::json::parse(top.out);
  CHECK(t["commands"][0]["name"] == "run");
  CHECK(t["transports"].size() >= 1);
  CHECK(t["workloads"].size() == 5);
  REQUIRE(run.rc == 0);
  const auto r = nlohmann::json::parse(run.out);
  CHECK(r["name"] == "run");
  size_t listed = 0;
  for (const auto& o : r["options"]) {
    ++listed;
    if (o["long"] == "length") {
      CHECK(o["short"] == "l");
      CHECK(o["arg"] == "SECONDS");
      CHECK(o["default"] == "10");
      CHECK(o["help"] == "measured window");
    }
    if (o["long"] == "testbed") {
      CHECK(o["optional_arg"] == true);
      CHECK(o["implicit"] == "default");
    }
    if (o["long"] == "quiet") CHECK(o["takes_value"] == false);
  }
  // as many as the usage text lists, -h/--help among them
  const std::string text = mtperf("run --help").out;
  CHECK(listed == count(text, "\n  -") + count(text, "\n      --"));
  REQUIRE(testbed.rc == 0);
  CHECK(nlohmann::json::parse(testbed.out)["subcommands"][0]["name"] == "up");
  REQUIRE(up.rc == 0);
  CHECK(nlohmann::json::parse(up.out)["name"] == "testbed up");
}

// Issue 40: a two-letter slip gets its "did you mean" too; the command list says what each
// command is and docs/cli.md's table lists every one of them.
TEST_CASE("the command list: a near miss is named, and docs/cli.md lists every command") {
  const Result rn = mtperf("rn -l 1");
  CHECK(rn.rc == 2);
  CHECK(rn.err.find("unknown command 'rn'; did you mean 'mtperf run'?") != std::string::npos);
  const Result help = mtperf("--help");
  REQUIRE(help.rc == 0);
  CHECK(help.out.find("scalability") == std::string::npos);  // sweep has four axes
  CHECK(help.out.find("adapters, message sizes, flows or a testbed's MTU") != std::string::npos);
  const std::string docs = slurp(std::filesystem::path(MTPERF_FIXTURES) / "../../docs/cli.md");
  REQUIRE(!docs.empty());
  std::istringstream lines(help.out);
  int listed = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  ", 0) != 0 || line.size() < 3 || line[2] == ' ') continue;
    const std::string name = line.substr(2, line.find(' ', 2) - 2);
    INFO("mtperf --help lists " << name);
    CHECK(docs.find("| [`" + name) != std::string::npos);
    ++listed;
  }
  CHECK(listed >= 10);
}

TEST_CASE("a key kept in MTPERF_KEY is not offered to run's own in-process server") {
  // A user who exports MTPERF_KEY for the servers elsewhere still runs the embedded default: the
  // in-process server asks no key, and the client must not refuse it as a downgrade.
  ::setenv("MTPERF_KEY", "a key for the servers elsewhere", 1);
  const Result r = mtperf("run -w rr -l 0.2 --warmup 0 -q --format json");
  ::unsetenv("MTPERF_KEY");
  INFO(r.err);
  CHECK(r.rc == 0);
  CHECK(r.out.find("\"transaction_rate\"") != std::string::npos);
}

// `mtperf report FILE.json... [-o FILE]`: mtperf's JSON documents as one self-contained HTML
// page (report/html.hpp). Every file is read and checked before anything is written, so a bad
// one leaves no half page behind.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "platform/command_line.hpp"
#include "report/html.hpp"

namespace mtperf::cli {

namespace {

namespace fs = std::filesystem;

// Larger than any document mtperf writes (a suite with every transport is a few MB).
constexpr std::uintmax_t kMaxDocumentBytes = 256u << 20;

// A file that cannot be turned into a section; the message starts with the file's name.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// nlohmann's "[json.exception.parse_error.101] parse error at ..." without the bracket.
std::string parse_message(const std::string& what) {
  const size_t close = what.find("] ");
  return close == std::string::npos ? what : what.substr(close + 2);
}

ReportInput read_document(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st))
    throw InputError(path + ": cannot open: " + (ec ? ec.message() : std::strerror(ENOENT)));
  if (fs::is_directory(st)) throw InputError(path + ": is a directory, not a JSON file");
  const std::uintmax_t size = fs::is_regular_file(st) ? fs::file_size(path, ec) : 0;
  if (!ec && size > kMaxDocumentBytes)
    throw InputError(path + ": " + std::to_string(size >> 20) +
                     " MiB is larger than any mtperf document (at most 256 MiB read)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
  ReportInput input{path, {}};
  try {
    input.doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path + ": not JSON: " + parse_message(e.what()));
  }
  try {
    document_kind(input.doc);
  } catch (const std::runtime_error& e) {
    throw InputError(path + ": " + e.what());
  }
  return input;
}

void write_page(const std::string& path, const std::string& page) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError(path + ": cannot write: " + std::strerror(errno));
  out << page;
  out.close();
  if (!out) throw InputError(path + ": cannot write: " + std::strerror(errno));
}

}  // namespace

int report_command(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  CommandSpec spec("report", "FILE.json... [-o FILE] [--title TEXT]",
                   "Turns mtperf's JSON documents (run, suite, sweep and compare --format json) "
                   "into one self-contained HTML page: charts as inline SVG with a table under "
                   "each, no script, nothing fetched; light and readable printed.");
  spec.options.add_options()("output,o", po::value<std::string>()->value_name("FILE"),
                             "write the page to FILE (default: standard output)")(
      "title",
      po::value<std::string>()->default_value("mtperf report", "mtperf report")->value_name("TEXT"),
      "the page's title");
  spec.hidden.add_options()("file", po::value<std::vector<std::string>>(), "the JSON documents");
  spec.positional = "file";
  spec.about =
      "example:\n"
      "  mtperf compare -T socket,uring -w stream,rr -i 5 --format json > cmp.json\n"
      "  mtperf report cmp.json -o report.html\n";
  int rc = 0;
  const auto cl = read_command_line(spec, args, std::cout, std::cerr, rc);
  if (!cl) return rc;
  if (!cl->has("file"))
    return usage_error(spec, std::cerr,
                       "no JSON file given (mtperf run|suite|sweep|compare --format json writes "
                       "one)");
  try {
    std::vector<ReportInput> inputs;
    for (const std::string& path : cl->get<std::vector<std::string>>("file"))
      inputs.push_back(read_document(path));
    const std::string page = html_report(inputs, cl->get<std::string>("title"));
    if (cl->has("output"))
      write_page(cl->get<std::string>("output"), page);
    else
      std::cout << page << std::flush;
  } catch (const std::exception& e) {
    std::cerr << "mtperf report: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace mtperf::cli

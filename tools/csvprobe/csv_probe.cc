// quiver-csv-probe: Quiver's CSV splitter (import/csv_reader.h) beside libcsv, the packaged C
// library (Debian libcsv-dev), and a bare newline scan, on the same bytes in memory, one thread.
// Issue 11 asked for a hand-written splitter only if it beats the packaged libraries.
//
//   quiver-csv-probe [--rows N] [--passes P]
//
// The text is the capacity bench's CSV shape (bench/capacity/import_family.cc): N vertex rows
// `id,name,age,score` then 10 N edge rows `source,target,TYPE,since`; one name in 16 is quoted
// and holds a comma and a doubled quote. Each pass splits the whole text into fields and counts
// them (every splitter must find the same count); the figure is MB of text per CPU second of the
// thread, median of the passes.
//
// What each does per field: Quiver's reader also checks UTF-8 and keeps each field's line and
// column (for its error messages) and unescapes a quoted field holding a doubled quote into an
// arena (other fields are views of the text); libcsv copies every field into its own buffer and
// calls a function per field and per row; the newline scan only finds line ends (memchr), a floor
// for any splitter that reads every byte.
#include <csv.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli_args.h"
#include "import/csv_reader.h"

namespace quiver::bench {
namespace {

struct Args {
  std::uint64_t rows = 1'000'000;
  int passes = 7;
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr, "quiver-csv-probe: %s\nusage: quiver-csv-probe [--rows N] [--passes P]\n", why);
  std::exit(2);
}

Args Parse(int argc, char** argv) {
  cli::CliArgs flags;
  for (const char* name : {"--rows", "--passes"}) flags.AddOption(name);
  std::string error;
  if (!flags.Parse(argc - 1, argv + 1, &error)) Usage(error.c_str());
  if (!flags.positional().empty()) Usage("unexpected argument");
  Args a;
  std::uint64_t passes = static_cast<std::uint64_t>(a.passes);
  if (flags.Has("--rows") && !flags.GetU64("--rows", &a.rows)) Usage("--rows must be a whole number");
  if (flags.Has("--passes") && !flags.GetU64("--passes", &passes)) Usage("--passes must be a whole number");
  if (a.rows == 0 || passes == 0 || passes > 1000)
    Usage("sizes must be positive (and --passes at most 1000)");
  a.passes = static_cast<int>(passes);
  return a;
}

// The text, and how many fields it holds.
std::string Text(std::uint64_t rows, std::uint64_t* fields) {
  std::string t;
  t.reserve(rows * 11 * 30);
  std::uint64_t state = 20261205;
  auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  char line[128];
  for (std::uint64_t i = 0; i < rows; ++i) {
    const bool quoted = i % 16 == 0;
    const int n = quoted
                      ? std::snprintf(line, sizeof line, "%llu,\"name, \"\"%llu\"\"\",%llu,0.%06llu\n",
                                      static_cast<unsigned long long>(i), static_cast<unsigned long long>(i),
                                      static_cast<unsigned long long>(next() % 100),
                                      static_cast<unsigned long long>(next() % 1000000))
                      : std::snprintf(line, sizeof line, "%llu,name%llu,%llu,0.%06llu\n",
                                      static_cast<unsigned long long>(i), static_cast<unsigned long long>(i),
                                      static_cast<unsigned long long>(next() % 100),
                                      static_cast<unsigned long long>(next() % 1000000));
    t.append(line, static_cast<std::size_t>(n));
  }
  for (std::uint64_t i = 0; i < rows * 10; ++i) {
    const int n = std::snprintf(
        line, sizeof line, "%llu,%llu,KNOWS,%llu\n", static_cast<unsigned long long>(i / 10),
        static_cast<unsigned long long>(next() % rows), static_cast<unsigned long long>(next() % 100000));
    t.append(line, static_cast<std::size_t>(n));
  }
  *fields = rows * 4 + rows * 10 * 4;
  return t;
}

std::uint64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

std::uint64_t SplitQuiver(const std::string& text) {
  auto reader = import::CsvReader::OverBytes("probe.csv", text, import::CsvDialect{}, 1);
  std::uint64_t fields = 0;
  while (true) {
    Result<bool> more = reader->Next();
    if (!more.ok()) {
      std::fprintf(stderr, "quiver-csv-probe: %s\n", more.status().ToString().c_str());
      std::exit(1);
    }
    if (!*more) break;
    fields += reader->fields().size();
  }
  return fields;
}

struct LibcsvCounts {
  std::uint64_t fields = 0, rows = 0;
};

std::uint64_t SplitLibcsv(const std::string& text) {
  csv_parser p;
  if (csv_init(&p, CSV_STRICT) != 0) std::exit(1);
  LibcsvCounts counts;
  auto on_field = [](void*, std::size_t, void* data) { ++static_cast<LibcsvCounts*>(data)->fields; };
  auto on_row = [](int, void* data) { ++static_cast<LibcsvCounts*>(data)->rows; };
  if (csv_parse(&p, text.data(), text.size(), on_field, on_row, &counts) != text.size()) {
    std::fprintf(stderr, "quiver-csv-probe: libcsv: %s\n", csv_strerror(csv_error(&p)));
    std::exit(1);
  }
  csv_fini(&p, on_field, on_row, &counts);
  csv_free(&p);
  return counts.fields;
}

std::uint64_t ScanNewlines(const std::string& text) {
  std::uint64_t lines = 0;
  for (const char* p = text.data();
       (p = static_cast<const char*>(
            std::memchr(p, '\n', static_cast<std::size_t>(text.data() + text.size() - p)))) != nullptr;
       ++p)
    ++lines;
  return lines;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int Run(const Args& a) {
  std::uint64_t expected = 0;
  const std::string text = Text(a.rows, &expected);
  const double mb = static_cast<double>(text.size()) / 1e6;
  std::printf("%.1f MB of CSV: %llu vertex rows, %llu edge rows, %llu fields; %d passes\n", mb,
              static_cast<unsigned long long>(a.rows), static_cast<unsigned long long>(a.rows * 10),
              static_cast<unsigned long long>(expected), a.passes);
  struct Way {
    const char* name;
    std::uint64_t (*split)(const std::string&);
    std::uint64_t expect;
    std::vector<double> rates;
  };
  Way ways[] = {{"newline scan (memchr)", ScanNewlines, a.rows * 11, {}},
                {"quiver CsvReader", SplitQuiver, expected, {}},
                {"libcsv (CSV_STRICT)", SplitLibcsv, expected, {}}};
  for (int pass = 0; pass < a.passes; ++pass) {
    for (Way& w : ways) {
      const std::uint64_t t0 = ThreadCpuNs();
      const std::uint64_t n = w.split(text);
      const double seconds = static_cast<double>(ThreadCpuNs() - t0) / 1e9;
      if (n != w.expect) {
        std::fprintf(stderr, "quiver-csv-probe: %s counted %llu, expected %llu\n", w.name,
                     static_cast<unsigned long long>(n), static_cast<unsigned long long>(w.expect));
        return 1;
      }
      w.rates.push_back(mb / seconds);
    }
  }
  const double scan = Median(ways[0].rates);
  for (Way& w : ways)
    std::printf("%-24s %8.0f MB/s per cpu s (median)  %.3f of the newline scan\n", w.name, Median(w.rates),
                Median(w.rates) / scan);
  std::printf("quiver / libcsv: %.2f\n", Median(ways[1].rates) / Median(ways[2].rates));
  return 0;
}

}  // namespace
}  // namespace quiver::bench

int main(int argc, char** argv) { return quiver::bench::Run(quiver::bench::Parse(argc, argv)); }

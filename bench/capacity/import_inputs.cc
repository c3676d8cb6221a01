// Writes the import family's input files and measures the raw ceilings on them (import_inputs.h).
#include "import_inputs.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <numeric>
#include <string_view>
#include <utility>

#include "graphs.h"
#include "simdjson.h"
#include "timing.h"

namespace quiver::capacity {

[[noreturn]] void ImportFail(const std::string& what) { Die("import", InternalError(what)); }

namespace {

constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
// Rows of each kind a generator keeps to check an import against.
constexpr std::uint64_t kSamples = 64;

[[noreturn]] void FailErrno(const std::string& what, const std::string& path) {
  ImportFail(what + " " + path + ": " + std::strerror(errno));
}

// Appends text to a file through a 1 MiB buffer, written with write(2).
class OutFile {
 public:
  explicit OutFile(std::string path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) FailErrno("cannot create", path_);
    buf_.reserve(kChunkBytes + 256);
  }
  OutFile(const OutFile&) = delete;
  OutFile& operator=(const OutFile&) = delete;
  ~OutFile() { Close(); }

  OutFile& operator<<(std::string_view s) {
    buf_.append(s);
    return MaybeFlush();
  }
  OutFile& operator<<(char c) {
    buf_.push_back(c);
    return MaybeFlush();
  }
  OutFile& operator<<(std::int64_t v) {
    char text[24];
    const auto r = std::to_chars(text, text + sizeof text, v);
    return *this << std::string_view(text, static_cast<std::size_t>(r.ptr - text));
  }
  OutFile& operator<<(double v) {
    char text[32];
    const auto r = std::to_chars(text, text + sizeof text, v);
    return *this << std::string_view(text, static_cast<std::size_t>(r.ptr - text));
  }
  // Writes what is buffered and closes the file; returns the bytes written.
  std::uint64_t Close() {
    if (fd_ < 0) return bytes_;
    Flush();
    ::close(fd_);
    fd_ = -1;
    return bytes_;
  }

 private:
  OutFile& MaybeFlush() {
    if (buf_.size() >= kChunkBytes) Flush();
    return *this;
  }
  void Flush() {
    for (std::size_t done = 0; done < buf_.size();) {
      const ssize_t n = ::write(fd_, buf_.data() + done, buf_.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) FailErrno("cannot write", path_);
      done += static_cast<std::size_t>(n);
    }
    bytes_ += buf_.size();
    buf_.clear();
  }

  std::string path_;
  int fd_ = -1;
  std::string buf_;
  std::uint64_t bytes_ = 0;
};

// Reads `path` with read(2) in kChunkBytes chunks and hands `lines(begin, end)` each run of whole
// lines read (the file's last line may lack its '\n'). Returns the bytes read.
template <typename Fn>
std::uint64_t ReadLines(const std::string& path, Fn&& lines) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) FailErrno("cannot open", path);
  std::vector<char> buf(2 * kChunkBytes);
  std::size_t held = 0;
  std::uint64_t total = 0;
  while (true) {
    if (held > kChunkBytes) ImportFail(path + ": a line longer than 1 MiB");
    const ssize_t n = ::read(fd, buf.data() + held, kChunkBytes);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) FailErrno("cannot read", path);
    if (n == 0) {
      if (held > 0) lines(buf.data(), buf.data() + held);
      break;
    }
    total += static_cast<std::uint64_t>(n);
    held += static_cast<std::size_t>(n);
    const char* nl = static_cast<const char*>(::memrchr(buf.data(), '\n', held));
    if (nl == nullptr) continue;
    const auto whole = static_cast<std::size_t>(nl + 1 - buf.data());
    lines(buf.data(), buf.data() + whole);
    std::memmove(buf.data(), buf.data() + whole, held - whole);
    held -= whole;
  }
  ::close(fd);
  return total;
}

// 0..n-1 in a shuffled order (Fisher-Yates, seeded).
std::vector<std::uint32_t> ShuffledIds(std::uint64_t n, std::uint64_t salt) {
  std::vector<std::uint32_t> ids(n);
  std::iota(ids.begin(), ids.end(), 0u);
  Rng rng(kSeed ^ salt);
  for (std::uint64_t i = n - 1; i > 0; --i) std::swap(ids[i], ids[rng.Uniform(i + 1)]);
  return ids;
}

std::string NameOf(Rng& rng) {
  std::string name(6 + rng.Uniform(7), 'a');
  for (char& c : name) c = static_cast<char>('a' + rng.Uniform(26));
  return name;
}

// Parses "a b" lines of `path` with std::from_chars into the sum of every a + b; `lines` counts them.
std::uint64_t ParseEvlpEdges(const std::string& path, std::uint64_t* lines) {
  std::uint64_t sum = 0, n = 0;
  ReadLines(path, [&](const char* p, const char* end) {
    while (p < end) {
      std::int64_t a = 0, b = 0;
      auto r = std::from_chars(p, end, a);
      if (r.ec != std::errc() || r.ptr == end || *r.ptr != ' ') ImportFail(path + ": not an EVLP edge line");
      r = std::from_chars(r.ptr + 1, end, b);
      if (r.ec != std::errc()) ImportFail(path + ": not an EVLP edge line");
      sum += static_cast<std::uint64_t>(a + b);
      ++n;
      p = r.ptr;
      if (p < end && *p++ != '\n') ImportFail(path + ": not an EVLP edge line");
    }
  });
  *lines = n;
  return sum;
}

}  // namespace

ImportInputs WriteEvlpInputs(const std::string& dir, std::uint64_t v) {
  ImportInputs in;
  in.dir = dir;
  in.vertex_files = {dir + "/graph.v"};
  in.edge_files = {dir + "/graph.e"};
  in.vertices = v;
  in.edges = v * kImportOutDegree;
  const std::uint64_t stride = std::max<std::uint64_t>(1, in.edges / kSamples);
  const std::vector<std::uint32_t> ids = ShuffledIds(v, 0xe1);
  Rng rng(kSeed ^ 0xe2);
  OutFile vf(in.vertex_files[0]), ef(in.edge_files[0]);
  for (std::uint64_t p = 0; p < v; ++p) {
    const auto source = static_cast<std::int64_t>(ids[p]);
    vf << source << '\n';
    for (std::uint64_t j = 0; j < kImportOutDegree; ++j) {
      const auto target = static_cast<std::int64_t>(rng.Uniform(v));
      ef << source << ' ' << target << '\n';
      in.endpoint_sum += static_cast<std::uint64_t>(source + target);
      const std::uint64_t k = p * kImportOutDegree + j;
      if (k % stride == 0) in.edge_samples.push_back({k, source, target, 0});
    }
  }
  in.bytes = vf.Close() + ef.Close();
  return in;
}

namespace {

// The CSV and JSON Lines files: one generator (the same seed, so the same rows), two spellings.
ImportInputs WriteRowInputs(const std::string& dir, std::uint64_t v, bool jsonl) {
  ImportInputs in;
  in.dir = dir;
  in.vertex_files = {dir + (jsonl ? "/vertices.jsonl" : "/vertices.csv")};
  in.edge_files = {dir + (jsonl ? "/edges.jsonl" : "/edges.csv")};
  in.vertices = v;
  in.edges = v * kImportOutDegree;
  const std::uint64_t v_stride = std::max<std::uint64_t>(1, v / kSamples);
  const std::uint64_t e_stride = std::max<std::uint64_t>(1, in.edges / kSamples);
  const std::vector<std::uint32_t> ids = ShuffledIds(v, 0xc1);
  Rng rng(kSeed ^ 0xc2);
  OutFile vf(in.vertex_files[0]), ef(in.edge_files[0]);
  if (!jsonl) {
    vf << "id:ID,name,age:int,score:double\n";
    ef << ":START_ID,:END_ID,:TYPE,since:int\n";
  }
  for (std::uint64_t p = 0; p < v; ++p) {
    const auto id = static_cast<std::int64_t>(ids[p]);
    const std::string name = NameOf(rng);
    const auto age = static_cast<std::int64_t>(18 + rng.Uniform(80));
    const double score = static_cast<double>(rng.Uniform(1'000'000)) / 1000.0;
    if (jsonl) {
      vf << "{\"id\":\"" << id << "\",\"properties\":{\"name\":\"" << name << "\",\"age\":" << age
         << ",\"score\":" << score;
      // A whole score gets ".0": written as "3" it would be an int64.
      if (score == static_cast<double>(static_cast<std::int64_t>(score))) vf << ".0";
      vf << "}}\n";
    } else {
      vf << id << ',' << name << ',' << age << ',' << score << '\n';
    }
    in.int_sum += static_cast<std::uint64_t>(age);
    if (p % v_stride == 0) in.vertex_samples.push_back({p, id, age, name, score});
  }
  for (std::uint64_t p = 0; p < v; ++p) {
    for (std::uint64_t j = 0; j < kImportOutDegree; ++j) {
      const auto source = static_cast<std::int64_t>(ids[p]);
      const auto target = static_cast<std::int64_t>(rng.Uniform(v));
      const auto since = static_cast<std::int64_t>(1970 + rng.Uniform(56));
      if (jsonl) {
        ef << "{\"start\":\"" << source << "\",\"end\":\"" << target
           << "\",\"type\":\"KNOWS\",\"properties\":{\"since\":" << since << "}}\n";
      } else {
        ef << source << ',' << target << ",KNOWS," << since << '\n';
      }
      in.int_sum += static_cast<std::uint64_t>(since);
      const std::uint64_t k = p * kImportOutDegree + j;
      if (k % e_stride == 0) in.edge_samples.push_back({k, source, target, since});
    }
  }
  in.bytes = vf.Close() + ef.Close();
  return in;
}

}  // namespace

ImportInputs WriteCsvInputs(const std::string& dir, std::uint64_t v) { return WriteRowInputs(dir, v, false); }

ImportInputs WriteJsonlInputs(const std::string& dir, std::uint64_t v) {
  return WriteRowInputs(dir, v, true);
}

double ReadInputSeconds(const ImportInputs& in) {
  std::vector<char> buf(kChunkBytes);
  double best = 1e30;
  for (int pass = 0; pass < kImportCeilingPasses; ++pass) {
    std::uint64_t bytes = 0;
    const std::uint64_t t0 = NowNs();
    for (const auto* files : {&in.vertex_files, &in.edge_files}) {
      for (const std::string& path : *files) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) FailErrno("cannot open", path);
        for (ssize_t n; (n = ::read(fd, buf.data(), buf.size())) != 0;) {
          if (n < 0 && errno == EINTR) continue;
          if (n < 0) FailErrno("cannot read", path);
          bytes += static_cast<std::uint64_t>(n);
        }
        ::close(fd);
      }
    }
    best = std::min(best, SecondsSince(t0));
    if (bytes != in.bytes) ImportFail("the input files changed size while read");
  }
  return best;
}

double ParseEvlpSeconds(const ImportInputs& in) {
  double best = 1e30;
  for (int pass = 0; pass < kImportCeilingPasses; ++pass) {
    std::uint64_t sum = 0, lines = 0, n = 0;
    const std::uint64_t t0 = NowNs();
    for (const std::string& path : in.edge_files) {
      sum += ParseEvlpEdges(path, &n);
      lines += n;
    }
    best = std::min(best, SecondsSince(t0));
    Consume(sum);
    if (lines != in.edges || sum != in.endpoint_sum)
      ImportFail("the raw EVLP parse disagrees with the files");
  }
  return best;
}

double SplitCsvSeconds(const ImportInputs& in) {
  double best = 1e30;
  for (int pass = 0; pass < kImportCeilingPasses; ++pass) {
    std::uint64_t commas = 0, lines = 0;
    const std::uint64_t t0 = NowNs();
    for (const auto* files : {&in.vertex_files, &in.edge_files}) {
      for (const std::string& path : *files) {
        ReadLines(path, [&](const char* p, const char* end) {
          std::uint64_t c = 0, l = 0;
          for (; p < end; ++p) {
            c += *p == ',';
            l += *p == '\n';
          }
          commas += c;
          lines += l;
        });
      }
    }
    best = std::min(best, SecondsSince(t0));
    const std::uint64_t files = in.vertex_files.size() + in.edge_files.size();
    if (lines != in.vertices + in.edges + files || commas != 3 * lines)
      ImportFail("the raw CSV split disagrees with the files");
  }
  return best;
}

namespace {

// Reads every member of `object` (nested objects too), adding its int values to *sum; the
// objects read. simdjson's errors stop the bench.
void VisitJson(simdjson::ondemand::object object, std::uint64_t* sum) {
  for (auto field : object) {
    simdjson::ondemand::value v;
    if (field.value().get(v) != simdjson::SUCCESS) ImportFail("the raw JSON Lines parse failed");
    simdjson::ondemand::json_type type;
    if (v.type().get(type) != simdjson::SUCCESS) ImportFail("the raw JSON Lines parse failed");
    if (type == simdjson::ondemand::json_type::object) {
      simdjson::ondemand::object inner;
      if (v.get_object().get(inner) != simdjson::SUCCESS) ImportFail("the raw JSON Lines parse failed");
      VisitJson(inner, sum);
    } else if (type == simdjson::ondemand::json_type::number) {
      simdjson::ondemand::number n;
      if (v.get_number().get(n) != simdjson::SUCCESS) ImportFail("the raw JSON Lines parse failed");
      if (n.is_int64()) *sum += static_cast<std::uint64_t>(n.get_int64());
      Consume(static_cast<std::uint64_t>(n.as_double()));
    } else {
      std::string_view s;
      if (v.get_string().get(s) != simdjson::SUCCESS) ImportFail("the raw JSON Lines parse failed");
      Consume(s.size());
    }
  }
}

}  // namespace

double ParseJsonlSeconds(const ImportInputs& in) {
  double best = 1e30;
  simdjson::ondemand::parser parser;
  std::string padded;
  for (int pass = 0; pass < kImportCeilingPasses; ++pass) {
    std::uint64_t objects = 0, sum = 0;
    const std::uint64_t t0 = NowNs();
    for (const auto* files : {&in.vertex_files, &in.edge_files}) {
      for (const std::string& path : *files) {
        ReadLines(path, [&](const char* p, const char* end) {
          padded.assign(p, end);
          const std::size_t n = padded.size();
          padded.append(simdjson::SIMDJSON_PADDING, '\0');
          simdjson::ondemand::document_stream stream;
          if (parser.iterate_many(padded.data(), n, simdjson::ondemand::DEFAULT_BATCH_SIZE).get(stream) !=
              simdjson::SUCCESS)
            ImportFail("the raw JSON Lines parse failed");
          for (auto doc : stream) {
            simdjson::ondemand::object object;
            if (doc.get_object().get(object) != simdjson::SUCCESS)
              ImportFail("the raw JSON Lines parse failed");
            VisitJson(object, &sum);
            ++objects;
          }
        });
      }
    }
    best = std::min(best, SecondsSince(t0));
    if (objects != in.vertices + in.edges || sum != in.int_sum)
      ImportFail("the raw JSON Lines parse disagrees with the files");
  }
  return best;
}

Json SequentialWriteSeconds(const std::string& dir, std::uint64_t bytes) {
  const std::string path = dir + "/ceiling-import-write.dat";
  std::vector<char> block(kChunkBytes);
  for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<char>('0' + i % 10);
  const std::uint64_t t0 = NowNs();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  std::string why;
  if (fd < 0) {
    why = std::string("open: ") + std::strerror(errno);
  } else {
    for (std::uint64_t done = 0; done < bytes && why.empty();) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBytes, bytes - done));
      const ssize_t w = ::write(fd, block.data(), n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) why = std::string("write: ") + std::strerror(errno);
      done += w > 0 ? static_cast<std::uint64_t>(w) : 0;
    }
    if (why.empty() && ::fdatasync(fd) != 0) why = std::string("fdatasync: ") + std::strerror(errno);
    ::close(fd);
  }
  const double seconds = SecondsSince(t0);
  ::unlink(path.c_str());
  return why.empty() ? Positive(seconds, "no time elapsed") : NotMeasured(why);
}

}  // namespace quiver::capacity

// The replay driver: runs a fuzz target's LLVMFuzzerTestOneInput over every
// file named on the command line or found (non-recursively, in name order)
// in a directory named there, without libFuzzer. Linked with each target as
// fuzz_replay_<target> in the normal builds, so the committed corpora and
// crash reproducers (tests/fuzz/corpus/<target>/) are replayed by ctest
// (label fuzz-replay) under any compiler and sanitizer, SQLite-fuzzcheck
// style.
//
//   fuzz_replay_wal_decode tests/fuzz/corpus/wal_decode [more dirs or files]
//
// A failed check in the target aborts (the file being replayed is printed
// first); exit status 1 if no input was found, so a missing corpus fails too.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::vector<std::filesystem::path> Inputs(int argc, char** argv) {
  std::vector<std::filesystem::path> out;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path arg(argv[i]);
    std::error_code ec;
    if (!std::filesystem::is_directory(arg, ec)) {
      out.push_back(arg);
      continue;
    }
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(arg, ec))
      if (entry.is_regular_file(ec)) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    out.insert(out.end(), files.begin(), files.end());
  }
  return out;
}

bool ReadFile(const std::filesystem::path& path, std::vector<std::uint8_t>* bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  bytes->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <corpus dir or file>...\n", argv[0]);
    return 2;
  }
  std::size_t runs = 0, bytes_total = 0;
  for (const std::filesystem::path& path : Inputs(argc, argv)) {
    std::vector<std::uint8_t> bytes;
    if (!ReadFile(path, &bytes)) {
      std::fprintf(stderr, "cannot read %s\n", path.c_str());
      return 1;
    }
    std::fprintf(stderr, "replaying %s (%zu bytes)\n", path.c_str(), bytes.size());
    // An empty vector's data() may be null; libFuzzer never passes null.
    static const std::uint8_t kEmpty = 0;
    LLVMFuzzerTestOneInput(bytes.empty() ? &kEmpty : bytes.data(), bytes.size());
    ++runs;
    bytes_total += bytes.size();
  }
  std::printf("%s: replayed %zu inputs (%zu bytes), no failures\n", argv[0], runs, bytes_total);
  return runs > 0 ? 0 : 1;
}

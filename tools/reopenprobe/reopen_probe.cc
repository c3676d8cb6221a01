// quiver-reopen-probe: opens one kept durable graph directory again and again, timing each open.
//
//   quiver-reopen-probe --dir D [--runs R] [--threads T]
//
// D is a durable graph directory made by someone else (quiver-bench keeps none: copy one, or build
// one with a checkpoint and a WAL tail). Each run opens D (automatic checkpoints off, none on
// Close, so every run replays the same tail), reads the counts, closes the graph and destroys it.
// Per run: the open's wall time, OpenStats' split (checkpoint load, WAL replay), the tail replayed,
// and the process's user and system CPU and minor page faults over the open (getrusage), then the
// same for the close and destruction. Run 1 is a fresh process's open; later runs open after a
// graph as large was freed in the same process, as quiver-bench's load row does.
#include <sys/resource.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli_args.h"
#include "quiver/quiver.h"

namespace quiver {
namespace {

struct Usage {
  double wall = 0, user = 0, sys = 0;
  long minflt = 0;
};

double Seconds(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
}

Usage Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return Usage{static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9, Seconds(ru.ru_utime),
               Seconds(ru.ru_stime), ru.ru_minflt};
}

Usage Since(const Usage& a) {
  const Usage b = Now();
  return Usage{b.wall - a.wall, b.user - a.user, b.sys - a.sys, b.minflt - a.minflt};
}

[[noreturn]] void Die(const char* what, const Status& s) {
  std::fprintf(stderr, "quiver-reopen-probe: %s: %s\n", what, s.ToString().c_str());
  std::exit(1);
}

int Main(int argc, char** argv) {
  cli::CliArgs flags;
  flags.AddOption("--dir");
  flags.AddOption("--runs", "1");
  flags.AddOption("--threads", "0");
  std::string error;
  std::uint64_t runs = 0, threads = 0;
  if (!flags.Parse(argc - 1, argv + 1, &error) || flags.Get("--dir").empty() ||
      !flags.GetU64("--runs", &runs) || !flags.GetU64("--threads", &threads)) {
    std::fprintf(stderr, "usage: quiver-reopen-probe --dir D [--runs R] [--threads T]\n%s\n", error.c_str());
    return 2;
  }
  Options o;
  o.durability = Durability::kDurable;
  o.durable.checkpoint_wal_bytes = 0;
  o.durable.checkpoint_on_close = false;
  o.durable.io_threads = static_cast<std::uint32_t>(threads);
  for (std::uint64_t run = 1; run <= runs; ++run) {
    const Usage start = Now();
    Result<std::unique_ptr<Graph>> g = Graph::Open(o, flags.Get("--dir"));
    const Usage open = Since(start);
    if (!g.ok()) Die("Graph::Open", g.status());
    const OpenStats st = (*g)->GetOpenStats();
    std::uint64_t elements = 0;
    {
      const Snapshot snap = (*g)->GetSnapshot();
      elements = snap.vertex_count() + snap.edge_count();
    }
    std::printf(
        "run %llu: open %.3f s wall (%.2fM elements/s; OpenStats %.3f s: load %.3f, replay %.3f; %llu "
        "batches), "
        "cpu %.3f user + %.3f sys, %ld minflt\n",
        static_cast<unsigned long long>(run), open.wall, static_cast<double>(elements) / open.wall / 1e6,
        static_cast<double>(st.open_microseconds) / 1e6,
        static_cast<double>(st.checkpoint_load_microseconds) / 1e6,
        static_cast<double>(st.wal_replay_microseconds) / 1e6,
        static_cast<unsigned long long>(st.wal_batches_replayed), open.user, open.sys, open.minflt);
    const Usage before_close = Now();
    if (Status s = (*g)->Close(); !s.ok()) Die("Close", s);
    g->reset();
    const Usage closed = Since(before_close);
    std::printf("       close + destroy %.3f s wall, cpu %.3f user + %.3f sys\n", closed.wall, closed.user,
                closed.sys);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace quiver

int main(int argc, char** argv) { return quiver::Main(argc, argv); }

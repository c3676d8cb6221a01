// quiver-feed-cost: what the change feed costs the committing thread.
//
// Commits a fixed workload of small batches to an in-memory graph on the
// calling thread (WriterOptions::caller_commits), so that an instruction
// count (valgrind --tool=callgrind) of the whole run is the writer's cost;
// the machine is too noisy for wall-clock comparisons of a few percent.
//
//   quiver-feed-cost none   no subscription: the feed's cost when unused
//   quiver-feed-cost sub    one subscription, read only after the commits,
//                           so the run counts the writer's side alone
//
// Example:
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null build/release/bench/quiver-feed-cost none
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "quiver/quiver.h"

int main(int argc, char** argv) {
  const bool subscribe = argc > 1 && std::strcmp(argv[1], "sub") == 0;
  constexpr int kVertices = 1000;
  constexpr int kBatches = 20000;
  auto graph = quiver::Graph::OpenInMemory().value();
  std::vector<quiver::VertexId> ids;
  {
    quiver::WriteBatch b;
    for (int i = 0; i < kVertices; ++i) b.AddVertex("Account", {{"n", std::int64_t{0}}});
    ids = graph->Write(std::move(b)).value().vertices;
  }
#ifndef QUIVER_FEED_COST_BASELINE
  std::unique_ptr<quiver::ChangeSubscription> sub;
  if (subscribe) sub = graph->Subscribe().value();
#else
  if (subscribe) return 2;
#endif
  for (int i = 0; i < kBatches; ++i) {
    quiver::WriteBatch b;
    quiver::VertexId v = ids[static_cast<std::size_t>(i * 7919) % ids.size()];
    b.SetProperty(v, "n", std::int64_t{i});
    quiver::NewVertex n = b.AddVertex("Transfer", {{"amount", std::int64_t{i}}, {"memo", "x"}});
    b.AddEdge("FROM", n, v);
    if (!graph->Write(std::move(b)).ok()) return 1;
  }
  // With more batches than ChangeFeedOptions::max_retained_batches the
  // consumer fell behind: resume from the oldest batch retained.
  std::uint64_t read = 0;
#ifndef QUIVER_FEED_COST_BASELINE
  if (sub && !sub->TryNext().ok()) {
    const quiver::SequenceNumber oldest =
        graph->GetSnapshot().sequence() + 1 - quiver::Options{}.change_feed.max_retained_batches;
    sub = graph->Subscribe(oldest).value();
  }
  if (sub)
    while (true) {
      auto r = sub->TryNext();
      if (!r.ok() || *r == nullptr) break;
      ++read;
    }
#endif
  std::printf("batches %d, read from the feed %llu, sequence %llu\n", kBatches,
              static_cast<unsigned long long>(read),
              static_cast<unsigned long long>(graph->GetSnapshot().sequence()));
  return 0;
}

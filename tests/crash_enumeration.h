// Crash-point enumeration with the engine running as it does in production:
// several producer threads with several batches in flight each (so commit
// groups hold several batches), background checkpoints on, explicit
// checkpoints now and then, small WAL segments, and values over one WAL
// fragment (groups of several records). Used by durability_enumeration_test
// (the figures) and durability_negative_control_test (the checks of the
// checker).
//
// The workload is not deterministic (threads), so each crash point runs it
// afresh on a SimFileSystem armed to die at mutating operation n, and the
// oracle is built from what that very run did: every batch carries a marker
// vertex (random_workload.h), the batches acknowledged with sequence s are
// recorded, and a recovered graph's markers, in id order, name the batches
// it holds in commit order. Replaying those batches in that order on a
// volatile graph gives the state recovery must show, element for element.
//
// States are compared by StateFingerprint (every element, property,
// adjacency entry and name id). Per crash point and crash policy it checks:
//   1. Open succeeds (else: recovery failure, and every acknowledged batch
//      counts as lost);
//   2. the recovered sequence M >= every acknowledged sequence (else the
//      difference is lost), the first acknowledged markers are exactly the
//      acknowledged batches in order, the rest are batches that were in
//      flight (else a phantom), and the state equals the replay of the
//      marked batches (else a mismatch);
//   3. the independent reader (independent_reader.h), run on the crashed
//      files before Open, rebuilds the same state;
//   4. a second crash at an operation inside that recovery, under the same
//      policy, then a third open: the same state again (not only the same
//      sequence);
//   5. (one policy per crash point, or every policy with
//      fallback_every_policy) the newest checkpoint of the crashed
//      directory damaged as well: Open must fall back to the previous one
//      (or, with none, to a log that starts at sequence 1) and recover the
//      same state. This is what two checkpoint generations promise, and
//      what removing files before the directory fsync that publishes the
//      newer checkpoint breaks: a power cut can then keep the removals and
//      lose the new name, leaving one checkpoint and no log before it.
//   6. (EnumerationConfig::indexes) a unique index on the markers is
//      created before the producers start and an ordered one of any type on
//      Person.p0 after they finish (a build over the data): index commits
//      are counted in the sequence (markers + index commits = M, each index
//      commit where the workload made it), the oracle makes the same ones,
//      every index declared in the recovered state is ready (Open finishes
//      a build a crash cut), and every ready index answers as a brute-force
//      scan of the recovered snapshot does (index_oracle.h).
//
// The graph lives in kEnumerationDir, below the simulator's mount point
// kEnumerationMount: the graph directory is then an entry of a simulated
// parent that a crash can lose like any file's name (a mount point never
// disappears), so the parent fsyncs of Open are checked too.
//
// Thread safety: RunCrashEnumeration is single-threaded apart from the
// producers it starts.
#ifndef QUIVER_TESTS_CRASH_ENUMERATION_H_
#define QUIVER_TESTS_CRASH_ENUMERATION_H_

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "env/random.h"
#include "env/sim_file_system.h"
#include "graph_impl.h"
#include "independent_reader.h"
#include "index_oracle.h"
#include "quiver/quiver.h"
#include "random_workload.h"
#include "test_util.h"
#include "write/write_batch_internal.h"

namespace quiver::test_util {

inline constexpr char kEnumerationMount[] = "/vol";
inline constexpr char kEnumerationDir[] = "/vol/db";

// A file system holding only the mount point; the enumeration numbers its
// crash points from the operation after the mount's creation.
inline std::unique_ptr<env::SimFileSystem> NewEnumerationDisk() {
  auto fs = std::make_unique<env::SimFileSystem>();
  if (!fs->CreateDir(kEnumerationMount).ok()) std::abort();
  return fs;
}

struct EnumerationConfig {
  Options options;
  std::uint64_t seed = 1;
  int producers = 3;
  int bursts_per_producer = 8;
  int max_in_flight = 4;           // batches a producer submits before waiting
  int checkpoint_one_in = 6;       // producer 0 calls Checkpoint() after this share of bursts
  int big_value_one_in = 12;       // batches with a value over one WAL fragment
  std::uint64_t crash_points = 0;  // 0: every operation; else about this many, evenly spread
  // Check 5 (a damaged newest checkpoint) under every crash policy, not one
  // policy per crash point: the negative controls need it to see a lost
  // second generation, which only some policies produce.
  bool fallback_every_policy = false;
  // Unsynced writes (WriteOptions::sync = false): one batch in this many is
  // written unsynced (0: none), and a producer calls Graph::Sync() after one
  // burst in `sync_one_in` (0: never). Then only synced batches, and
  // unsynced ones a successful Sync() covered, must survive; of the other
  // unsynced ones a crash may lose a suffix (the prefix and replay checks
  // see anything else).
  int unsynced_one_in = 0;
  int sync_one_in = 0;
  // Check 6: an index created before the producers and one after them.
  bool indexes = false;
  // The negative control of check 6: the index oracle drops one element
  // from every expected answer (index_oracle.h), so mismatches must show.
  bool corrupt_index_oracle = false;
  // Negative controls: stop after the first crash point that lost an
  // acknowledged commit, failed to recover or found no fallback (what they
  // must see); the crash points after it would only repeat the finding.
  bool stop_at_first_loss = false;
};

// The indexes of check 6: one on the empty graph, one over the data.
inline IndexSpec EnumerationFrontIndex() {
  return {.name = "mark_batch",
          .label = std::string(kMarkerLabel),
          .keys = {"batch"},
          .kind = IndexKind::kUnique,
          .type = ValueType::kInt64};
}
inline IndexSpec EnumerationTailIndex() {
  return {.name = "person_p0", .label = "Person", .keys = {"p0"}, .kind = IndexKind::kOrdered};
}

struct EnumerationFigures {
  std::uint64_t total_ops = 0;  // of the reference run
  std::uint64_t crash_points = 0;
  std::uint64_t recoveries = 0;
  std::uint64_t acked_verified = 0;        // acknowledged batches found in recovered states
  std::uint64_t acked_lost = 0;            // acknowledged-durable batches missing
  std::uint64_t unsynced_lost = 0;         // acknowledged unsynced batches missing (allowed: a suffix)
  std::uint64_t unsynced_kept = 0;         // ... found, without a Sync() covering them
  std::uint64_t recovery_failures = 0;     // Open failed on a crashed state
  std::uint64_t state_mismatches = 0;      // not the replay of a prefix; phantoms
  std::uint64_t second_crash_diffs = 0;    // the state after a crash during recovery differs
  std::uint64_t reader_disagreements = 0;  // the independent reader differs or fails
  std::uint64_t fallback_checks = 0;       // crashed states opened with the newest checkpoint damaged
  std::uint64_t fallback_failures = 0;     // ... that failed to open or recovered another state
  std::uint64_t batches = 0;               // of the reference run: acknowledged batches
  std::uint64_t groups = 0;                // ... in this many commit groups
  std::uint64_t checkpoints = 0;           // ... and this many checkpoints written
  std::uint64_t big_groups = 0;            // ... and batches carrying a value over one fragment
  std::uint64_t unsynced_batches = 0;      // ... and batches acknowledged unsynced
  std::uint64_t syncs = 0;                 // ... and successful Graph::Sync() calls
  std::uint64_t index_checks = 0;          // check 6: index answers compared with a scan
  std::uint64_t index_mismatches = 0;      // ... that differed, or an index missing or still building
  std::uint64_t index_builds_cut = 0;      // recovered states holding an index declared, never made ready
  std::vector<std::string> first_failures;

  std::uint64_t violations() const {
    return acked_lost + recovery_failures + state_mismatches + second_crash_diffs + reader_disagreements +
           fallback_failures + index_mismatches;
  }
  void Add(const EnumerationFigures& o);
};

std::ostream& operator<<(std::ostream& out, const EnumerationFigures& f);

// What one run of the workload did.
struct WorkloadTrace {
  std::mutex mu;
  std::map<std::uint64_t, WriteBatch> batches;    // marker -> the batch submitted
  std::map<SequenceNumber, std::uint64_t> acked;  // sequence -> marker
  std::set<std::uint64_t> big;                    // markers of batches with a value over one fragment
  std::set<SequenceNumber> unsynced;              // acknowledged with sync = false
  SequenceNumber synced_through = 0;              // a successful Sync() made 1..this durable
  std::uint64_t syncs = 0;                        // successful Sync() calls
  SequenceNumber index_acked = 0;  // the sequence the last CreateIndex that returned OK reached

  // The highest sequence a crash must not take back: the last acknowledged
  // synced batch, or what a Sync() or a CreateIndex covered.
  SequenceNumber MustSurvive() const {
    SequenceNumber m = std::max(synced_through, index_acked);
    for (auto it = acked.rbegin(); it != acked.rend(); ++it) {
      if (unsynced.contains(it->first)) continue;
      m = std::max(m, it->first);
      break;
    }
    return m;
  }
};

inline void RunProducer(Graph& g, const EnumerationConfig& c, int p, WorkloadTrace* trace) {
  std::mt19937_64 rng(c.seed * 1'000'003 + static_cast<std::uint64_t>(p));
  std::uint64_t next = 0;
  for (int burst = 0; burst < c.bursts_per_producer; ++burst) {
    std::vector<std::pair<std::uint64_t, std::future<Result<CommitInfo>>>> pending;
    std::set<std::uint64_t> unsynced_markers;
    {
      const Snapshot s = g.GetSnapshot();
      const int n = 1 + static_cast<int>(rng() % static_cast<std::uint64_t>(c.max_in_flight));
      for (int i = 0; i < n; ++i) {
        RandomBatchOptions o;
        o.marker = (static_cast<std::uint64_t>(p) + 1) * 1'000'000 + ++next;
        o.big_value_one_in = c.big_value_one_in;
        bool big = false;
        o.made_big = &big;
        WriteBatch b = RandomBatch(s, rng, o);
        {
          std::lock_guard<std::mutex> lock(trace->mu);
          trace->batches.emplace(o.marker, b);
          if (big) trace->big.insert(o.marker);
        }
        const bool unsynced =
            c.unsynced_one_in > 0 && rng() % static_cast<std::uint64_t>(c.unsynced_one_in) == 0;
        pending.emplace_back(o.marker, g.WriteAsync(std::move(b), WriteOptions{.sync = !unsynced}));
        if (unsynced) unsynced_markers.insert(o.marker);
      }
    }
    bool stop = false;
    for (auto& [marker, f] : pending) {
      Result<CommitInfo> r = f.get();
      if (r.ok()) {
        std::lock_guard<std::mutex> lock(trace->mu);
        trace->acked[r->sequence] = marker;
        if (unsynced_markers.contains(marker)) trace->unsynced.insert(r->sequence);
      } else if (r.status().code() != StatusCode::kNotFound) {
        stop = true;  // the crash point: DurabilityUnknown, Poisoned, IOError
      }
    }
    if (stop) return;
    if (c.sync_one_in > 0 && rng() % static_cast<std::uint64_t>(c.sync_one_in) == 0) {
      // Every version published before the call holds only synced or
      // held-back groups, so Sync() makes all of it durable.
      const SequenceNumber published = g.GetSnapshot().sequence();
      if (!g.Sync().ok()) return;  // the crash point
      std::lock_guard<std::mutex> lock(trace->mu);
      trace->synced_through = std::max(trace->synced_through, published);
      ++trace->syncs;
    }
    if (p == 0 && c.checkpoint_one_in > 0 && rng() % static_cast<std::uint64_t>(c.checkpoint_one_in) == 0)
      g.Checkpoint().IgnoreError();  // a failed checkpoint loses nothing
  }
}

// Runs the workload on `fs` (dying at its crash point, if armed).
inline void RunEnumerationWorkload(env::SimFileSystem* fs, const EnumerationConfig& c, WorkloadTrace* trace,
                                   EnumerationFigures* reference = nullptr) {
  auto g = GraphImpl::OpenDurable(c.options, kEnumerationDir, fs);
  if (!g.ok()) return;  // the crash came during the first open
  if (c.indexes) {
    if (!(*g)->CreateIndex(EnumerationFrontIndex()).ok()) return;  // the crash point
    trace->index_acked = (*g)->GetSnapshot().sequence();
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < c.producers; ++p)
    producers.emplace_back(RunProducer, std::ref(**g), std::cref(c), p, trace);
  for (std::thread& t : producers) t.join();
  if (c.indexes && (*g)->CreateIndex(EnumerationTailIndex()).ok())
    trace->index_acked = (*g)->GetSnapshot().sequence();
  if (reference != nullptr) {
    const DurabilityStats d = (*g)->GetDurabilityStats();
    reference->groups = d.commit_groups;
    reference->checkpoints = d.checkpoints_written;
  }
}

// Marker ids of `s`, in vertex-id (= commit) order.
inline std::vector<std::uint64_t> Markers(const Snapshot& s) {
  std::vector<std::uint64_t> out;
  const std::optional<LabelId> label = s.FindLabel(kMarkerLabel);
  if (!label) return out;
  for (VertexId v : s.Vertices(*label)) {
    std::optional<PropertyView> b = s.GetProperty(v, "batch");
    out.push_back(b && b->type() == ValueType::kInt64 ? static_cast<std::uint64_t>(*b->as_int64()) : 0);
  }
  return out;
}

// test_util::Fingerprint without the order of a vertex's edge groups: that
// order (one group per edge type) depends on the vertex's history (which
// type came first, which group emptied) and is not part of the contract, so
// a graph loaded from a checkpoint may list the groups in another order
// than the graph that wrote it. Everything else counts, name ids included.
inline std::uint64_t StateFingerprint(const Snapshot& s) {
  Fingerprinter f;
  f.Add(s.sequence());
  f.Add(s.vertex_id_limit());
  f.Add(s.edge_id_limit());
  for (VertexId v : s.Vertices()) {
    f.Add(v.value());
    f.Add(s.LabelOf(v)->value());
    for (const PropertyRange::Entry& e : s.Properties(v)) {
      f.Add(e.key.value());
      f.Add(e.value);
    }
    for (Direction d : {Direction::kOut, Direction::kIn}) {
      std::map<std::uint64_t, std::vector<std::uint64_t>> groups;  // by type id
      for (EdgeGroup g : s.Edges(v, d)) {
        std::vector<std::uint64_t>& list = groups[g.type.value()];
        for (const EdgeEntry& e : g.entries) {
          list.push_back(e.edge().value());
          list.push_back(e.neighbor().value());
        }
      }
      for (const auto& [type, list] : groups) {
        f.Add(type);
        f.Add(list.data(), list.size() * sizeof(std::uint64_t));
      }
    }
  }
  for (EdgeId e : s.Edges()) {
    f.Add(e.value());
    const EdgeInfo info = *s.GetEdge(e);
    f.Add(info.type.value());
    f.Add(info.source.value());
    f.Add(info.target.value());
    for (const PropertyRange::Entry& p : s.Properties(e)) {
      f.Add(p.key.value());
      f.Add(p.value);
    }
  }
  return f.hash();
}

class CrashEnumerator {
 public:
  explicit CrashEnumerator(EnumerationConfig c) : c_(std::move(c)) {}

  EnumerationFigures Run() {
    {
      std::unique_ptr<env::SimFileSystem> fs = NewEnumerationDisk();
      const std::uint64_t mount_ops = fs->operation_count();
      WorkloadTrace trace;
      RunEnumerationWorkload(fs.get(), c_, &trace, &f_);
      f_.total_ops = fs->operation_count() - mount_ops;
      f_.batches = trace.acked.size();
      f_.unsynced_batches = trace.unsynced.size();
      f_.syncs = trace.syncs;
      for (const auto& [seq, marker] : trace.acked) f_.big_groups += trace.big.contains(marker);
    }
    const std::uint64_t stride =
        c_.crash_points == 0 ? 1 : std::max<std::uint64_t>(1, f_.total_ops / c_.crash_points);
    if (const std::uint64_t only = EnvOr("QUIVER_ENUM_ONLY_OP", 0); only != 0) {
      CrashAt(only);  // reproduces one crash point of a failure message
      return f_;
    }
    // The first point at a random offset of the seed's own: with seed % stride,
    // seeds 1 and 2 sampled points one operation apart.
    const std::uint64_t first = 1 + env::Rng::Derive(c_.seed, 0x5a3b1e).Uniform(stride);
    for (std::uint64_t n = first; n <= f_.total_ops; n += stride) {
      CrashAt(n);
      if (c_.stop_at_first_loss && f_.acked_lost + f_.recovery_failures + f_.fallback_failures > 0) break;
    }
    return f_;
  }

 private:
  void Note(const std::string& what) {
    if (f_.first_failures.size() < 10) f_.first_failures.push_back(what);
  }

  void CrashAt(std::uint64_t n) {
    ++f_.crash_points;
    std::unique_ptr<env::SimFileSystem> fs_owner = NewEnumerationDisk();
    env::SimFileSystem& fs = *fs_owner;
    fs.SetCrashAtOperation(fs.operation_count() + n);
    WorkloadTrace trace;
    RunEnumerationWorkload(&fs, c_, &trace);
    for (env::CrashPolicy policy : env::kAllCrashPolicies) {
      const std::string where = "seed " + std::to_string(c_.seed) + ", crash at op " + std::to_string(n) +
                                ", policy " + std::to_string(static_cast<int>(policy));
      std::unique_ptr<env::SimFileSystem> disk = fs.Clone();
      disk->Crash(policy, n * 31 + static_cast<std::uint64_t>(policy));
      Recover(*disk, policy, n, trace, where);
    }
  }

  void Recover(env::SimFileSystem& disk, env::CrashPolicy policy, std::uint64_t n, const WorkloadTrace& trace,
               const std::string& where) {
    ++f_.recoveries;
    const SequenceNumber acked = trace.MustSurvive();
    test::DirectoryFiles files;
    if (Result<std::vector<std::string>> names = disk.ListDir(kEnumerationDir); names.ok())
      files.names = std::move(*names);
    files.read = [&disk](const std::string& name) {
      return disk.ReadFileForTest(std::string(kEnumerationDir) + "/" + name);
    };
    Result<test::ReaderState> independent = test::ReadGraphFiles(files);
    std::unique_ptr<env::SimFileSystem> before_recovery = disk.Clone();
    const std::uint64_t ops_before = disk.operation_count();
    auto g = GraphImpl::OpenDurable(c_.options, kEnumerationDir, &disk);
    if (!g.ok()) {
      ++f_.recovery_failures;
      f_.acked_lost += trace.acked.size();
      Note(where + ": open failed: " + g.status().ToString());
      return;
    }
    const std::uint64_t recovery_ops = disk.operation_count() - ops_before;
    const Snapshot s = (*g)->GetSnapshot();
    const std::uint64_t state = StateFingerprint(s);
    CheckAgainstTrace(s, state, trace, acked, where, independent.ok() ? &*independent : nullptr);
    if (!independent.ok()) {
      ++f_.reader_disagreements;
      Note(where + ": independent reader failed: " + independent.status().ToString());
    } else if (auto diff = test::CompareWithSnapshot(*independent, s)) {
      ++f_.reader_disagreements;
      Note(where + ": independent reader differs: " + *diff);
    }
    g->reset();
    if (c_.fallback_every_policy ||
        static_cast<std::uint64_t>(policy) == n % std::size(env::kAllCrashPolicies))
      CheckFallback(*before_recovery, state, where);
    if (recovery_ops == 0) return;
    // A second crash, inside that recovery, then a third open.
    before_recovery->SetCrashAtOperation(before_recovery->operation_count() + 1 + n % recovery_ops);
    { auto cut = GraphImpl::OpenDurable(c_.options, kEnumerationDir, before_recovery.get()); }
    before_recovery->Crash(policy, n + 17);
    auto again = GraphImpl::OpenDurable(c_.options, kEnumerationDir, before_recovery.get());
    if (!again.ok()) {
      ++f_.recovery_failures;
      Note(where + ": open after a crash during recovery failed: " + again.status().ToString());
    } else if (StateFingerprint((*again)->GetSnapshot()) != state) {
      ++f_.second_crash_diffs;
      Note(where + ": a crash during recovery changed the recovered state (sequence " +
           std::to_string(s.sequence()) + " -> " + std::to_string((*again)->GetSnapshot().sequence()) + ")");
    }
  }

  // Check 5: a copy of the crashed directory with its newest checkpoint
  // damaged recovers `state` all the same.
  void CheckFallback(const env::SimFileSystem& crashed, std::uint64_t state, const std::string& where) {
    std::unique_ptr<env::SimFileSystem> disk = crashed.Clone();
    std::string newest;
    if (Result<std::vector<std::string>> names = disk->ListDir(kEnumerationDir); names.ok()) {
      for (const std::string& name : *names)
        if (name.starts_with("checkpoint-") && name.ends_with(".qck")) newest = name;  // sorted names
    }
    if (newest.empty()) return;
    const std::string path = std::string(kEnumerationDir) + "/" + newest;
    const Result<std::string> bytes = disk->ReadDurableForTest(path);
    if (!bytes.ok() || bytes->empty()) return;
    if (!disk->FlipBit(path, 8 * (bytes->size() / 2)).ok()) return;
    ++f_.fallback_checks;
    auto g = GraphImpl::OpenDurable(c_.options, kEnumerationDir, disk.get());
    if (!g.ok()) {
      ++f_.fallback_failures;
      Note(where + ": with " + newest + " damaged, open failed: " + g.status().ToString());
    } else if (StateFingerprint((*g)->GetSnapshot()) != state) {
      ++f_.fallback_failures;
      Note(where + ": with " + newest + " damaged, another state was recovered (sequence " +
           std::to_string((*g)->GetSnapshot().sequence()) + ")");
    }
  }

  static std::string FirstDifference(const std::string& recovered, const std::string& replayed) {
    std::size_t i = 0;
    while (i < recovered.size() && i < replayed.size() && recovered[i] == replayed[i]) ++i;
    const std::size_t from = recovered.rfind('\n', i) == std::string::npos ? 0 : recovered.rfind('\n', i) + 1;
    return "recovered \"" + recovered.substr(from, 200) + "\" vs replayed \"" + replayed.substr(from, 200) +
           "\"";
  }

  void CheckAgainstTrace(const Snapshot& s, std::uint64_t state, const WorkloadTrace& trace,
                         SequenceNumber acked, const std::string& where, const test::ReaderState* files) {
    const SequenceNumber m = s.sequence();
    if (m < acked) {
      f_.acked_lost += acked - m;
      Note(where + ": recovered sequence " + std::to_string(m) + " < acknowledged " + std::to_string(acked));
    }
    f_.acked_verified += std::min(m, acked);
    for (SequenceNumber u : trace.unsynced) {
      if (u <= trace.synced_through) continue;
      if (u > m) {
        ++f_.unsynced_lost;
      } else {
        ++f_.unsynced_kept;
      }
    }
    const std::vector<std::uint64_t> markers = Markers(s);
    // Index commits (check 6): `front` before the first batch (the index
    // made on the empty graph: its declaration, then its ready commit),
    // `tail` after the last. A batch commits only after both front ones.
    std::uint64_t front = 0, tail = 0;
    const std::uint64_t others = m >= markers.size() ? m - markers.size() : 0;
    if (c_.indexes && m >= markers.size()) {
      front = markers.empty() ? others : 2;
      tail = markers.empty() ? 0 : others - std::min<std::uint64_t>(others, 2);
    }
    if (markers.size() + front + tail != m || front > 2 || tail > 2) {
      ++f_.state_mismatches;
      Note(where + ": " + std::to_string(markers.size()) + " batches visible at sequence " +
           std::to_string(m));
      return;
    }
    auto oracle = Graph::OpenInMemory(c_.options).value();
    if (!MakeIndexCommits(*oracle, EnumerationFrontIndex(), front)) {
      ++f_.state_mismatches;
      Note(where + ": the oracle could not make the index commits before the batches");
      return;
    }
    for (std::size_t i = 0; i < markers.size(); ++i) {
      auto acked_at = trace.acked.find(i + 1 + front);
      auto batch = trace.batches.find(markers[i]);
      if ((acked_at != trace.acked.end() && acked_at->second != markers[i]) || batch == trace.batches.end()) {
        ++f_.state_mismatches;
        Note(where + ": sequence " + std::to_string(i + 1) + " holds batch " + std::to_string(markers[i]) +
             ", not the one acknowledged there (or none submitted)");
        return;
      }
      Result<CommitInfo> r = oracle->Write(batch->second);
      if (!r.ok() || r->sequence != i + 1 + front) {
        ++f_.state_mismatches;
        Note(where + ": batch " + std::to_string(markers[i]) + " does not replay at sequence " +
             std::to_string(i + 1));
        return;
      }
    }
    if (!MakeIndexCommits(*oracle, EnumerationTailIndex(), tail)) {
      ++f_.state_mismatches;
      Note(where + ": the oracle could not make the index commits after the batches");
      return;
    }
    if (c_.indexes) CheckIndexes(s, front, tail, where);
    if (StateFingerprint(oracle->GetSnapshot()) != state) {
      ++f_.state_mismatches;
      std::optional<std::string> names;
      if (files != nullptr) names = test::CompareWithSnapshot(*files, oracle->GetSnapshot());
      Note(where + ": the recovered state is not the replay of its batches; first difference: " +
           FirstDifference(Dump(s), Dump(oracle->GetSnapshot())) +
           "; the files against the replay: " + names.value_or("no difference"));
    }
  }

  // Makes on `g` the first `n` commits of CreateIndex(spec): none, its
  // declaration alone (a crash cut the build), or both.
  static bool MakeIndexCommits(Graph& g, const IndexSpec& spec, std::uint64_t n) {
    if (n == 2) return g.CreateIndex(spec).ok();
    if (n == 0) return true;
    IndexOp define;
    define.spec = spec;
    return g.Write(internal::WriteBatchInternal::IndexBatch(OpKind::kDefineIndex, std::move(define))).ok();
  }

  // Check 6: every index declared in the recovered state is ready and
  // answers as a scan of it does.
  void CheckIndexes(const Snapshot& s, std::uint64_t front, std::uint64_t tail, const std::string& where) {
    std::vector<std::string> declared;
    if (front > 0) declared.push_back(EnumerationFrontIndex().name);
    if (tail > 0) declared.push_back(EnumerationTailIndex().name);
    if (front == 1 || tail == 1) ++f_.index_builds_cut;
    const std::vector<IndexInfo> listed = s.Indexes();
    ++f_.index_checks;
    bool as_declared = listed.size() == declared.size();
    for (std::size_t i = 0; as_declared && i < listed.size(); ++i)
      as_declared = listed[i].spec.name == declared[i] && listed[i].state == IndexState::kReady;
    if (!as_declared) {
      ++f_.index_mismatches;
      Note(where + ": the recovered indexes are not the " + std::to_string(declared.size()) +
           " declared ones, all ready");
    }
    test::IndexOracleResult r = test::CheckIndexAnswers(s, c_.corrupt_index_oracle);
    f_.index_checks += r.checks;
    f_.index_mismatches += r.mismatches;
    for (const std::string& m : r.messages) Note(where + ": " + m);
  }

  const EnumerationConfig c_;
  EnumerationFigures f_;
};

inline void EnumerationFigures::Add(const EnumerationFigures& o) {
  total_ops += o.total_ops;
  crash_points += o.crash_points;
  recoveries += o.recoveries;
  acked_verified += o.acked_verified;
  acked_lost += o.acked_lost;
  unsynced_lost += o.unsynced_lost;
  unsynced_kept += o.unsynced_kept;
  unsynced_batches += o.unsynced_batches;
  syncs += o.syncs;
  recovery_failures += o.recovery_failures;
  state_mismatches += o.state_mismatches;
  second_crash_diffs += o.second_crash_diffs;
  reader_disagreements += o.reader_disagreements;
  fallback_checks += o.fallback_checks;
  fallback_failures += o.fallback_failures;
  batches += o.batches;
  groups += o.groups;
  checkpoints += o.checkpoints;
  big_groups += o.big_groups;
  index_checks += o.index_checks;
  index_mismatches += o.index_mismatches;
  index_builds_cut += o.index_builds_cut;
  for (const std::string& s : o.first_failures)
    if (first_failures.size() < 10) first_failures.push_back(s);
}

inline std::ostream& operator<<(std::ostream& out, const EnumerationFigures& f) {
  out << "crash points: " << f.crash_points << " (of " << f.total_ops << " ops) x "
      << std::size(env::kAllCrashPolicies) << " policies = " << f.recoveries
      << " recoveries, acknowledged commits lost: " << f.acked_lost
      << ", recovery failures: " << f.recovery_failures
      << ", states not a replayed prefix: " << f.state_mismatches
      << ", second-crash state differences: " << f.second_crash_diffs
      << ", independent reader disagreements: " << f.reader_disagreements
      << ", newest checkpoint damaged: " << f.fallback_checks << " opens, " << f.fallback_failures
      << " without a fallback"
      << ", acked batches verified: " << f.acked_verified << "; reference runs: " << f.batches
      << " batches in " << f.groups << " groups, " << f.checkpoints << " checkpoints, " << f.big_groups
      << " batches over one WAL fragment";
  if (f.index_checks > 0)
    out << "; index checks: " << f.index_checks << ", index mismatches: " << f.index_mismatches
        << ", recovered states with an index build cut by the crash: " << f.index_builds_cut;
  return out;
}

}  // namespace quiver::test_util

#endif  // QUIVER_TESTS_CRASH_ENUMERATION_H_

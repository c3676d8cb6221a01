// The report: assembled by main, validated against schemas/capacity-report.schema.json by a real
// JSON Schema validator (Debian's python3-jsonschema, through scripts/validate-report) before it
// is written, and summarised into one line of bench/results/history.jsonl on --record.
#ifndef QUIVER_BENCH_CAPACITY_REPORT_H_
#define QUIVER_BENCH_CAPACITY_REPORT_H_

#include <string>

#include "figure.h"

namespace quiver::capacity {

// The schema's major version; a consumer refuses a report whose major it does not know.
inline constexpr int kSchemaVersion = 1;
// Compatible revisions within the major (schemaMinor): 1 adds the utilisation objects; 2 the analytics
// family; 3 the traversalLayout rows; 4 appendFdatasync.latencyMaxNs and
// writerStall.p99CommitLatencyDuringNs; 5 ceilings.overwriteFdatasync, the durable writes rows' ceiling;
// 6 the indexes family and the checkpoint rows' writerStall.deviceBesideWrites / p99DuringOverDevice;
// 7 the import family; 8 environment.allocator.hugePages; 9 the import rows csvSequentialRead and
// jsonlSequentialRead; 10 ceilings.freshMemoryTouch (first touch of new memory, and again right
// after) and evlpImportNewGraph as the median of the passes after a first, the first pass's figures
// in its detail (firstPass*, with the bytes it touched and their time at the first-touch ceiling);
// 11 the engine family (snapshot acquire + release on 1 and 2 threads, random-target edge inserts).
inline constexpr int kSchemaMinor = 12;

// Files of the source tree the bench uses at run time.
std::string SchemaPath();
std::string ValidatorPath();
std::string DefaultOutputPath();
std::string HistoryPath();
std::string GatePath();

// Current time as RFC 3339 UTC ("2026-11-29T22:33:08Z").
std::string UtcNow();

// Writes `report` to a temporary file beside `out`, validates it, and renames it to `out` only if
// it passes. Returns false (and removes the temporary file) otherwise; `error` says why.
bool ValidateAndWrite(const Json& report, const std::string& out, std::string* error);

// The line --record appends: commit, date, profile, environment digest, headline figures.
Json HistoryLine(const Json& report);
bool AppendHistory(const Json& line, const std::string& history, std::string* error);

// Runs scripts/release-gate on the recorded run `run_id` of `history`: with `enforce`, --publish (a pass
// marks it published and moves the baseline); otherwise --report-only. Returns the gate's exit code (0 pass,
// 1 fail, 2 inconsistent files); its verdict goes to stderr.
int RunGate(const std::string& run_id, const std::string& history, bool enforce);

}  // namespace quiver::capacity

#endif  // QUIVER_BENCH_CAPACITY_REPORT_H_

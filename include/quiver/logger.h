// Logger: the hook through which a durable graph tells an operator what it
// found and did that needs no answer but deserves a look: a torn log tail
// cut, a damaged checkpoint passed over, a salvage, a failed checkpoint, a
// graph poisoned by a WAL failure, a slow fdatasync, a failed close. Set one in
// Options::logger; without one nothing is reported (the same facts are in
// OpenStats and DurabilityStats).
//
// Events (the `event` argument; stable names, one call per occurrence):
//   torn_tail            kWarning  Open cut (or, read-only, ignored) a torn WAL tail
//   checkpoint_fallback  kWarning  Open passed over a damaged newest checkpoint
//   covered_damage       kWarning  Open skipped damaged WAL records a checkpoint holds
//   salvage              kError    Open gave up committed data after damage (salvage_wal_prefix)
//   checkpoint_failed    kError    a checkpoint failed; the WAL keeps everything (unless poisoned)
//   poisoned             kError    a WAL write or sync failed: writes are refused from now on
//   slow_sync            kWarning  a WAL fdatasync took longer than DurableOptions::slow_sync_microseconds
//   close_failed         kError    the Close a graph's destructor ran failed (no caller to tell)
// The message is one line of text with the facts (file, sizes, sequence
// numbers, the status); its wording may change, the event names do not.
//
// Example:
//   struct StderrLogger : quiver::Logger {
//     void Log(quiver::LogLevel, std::string_view event, std::string_view message) override {
//       std::fprintf(stderr, "quiver %.*s: %.*s\n", int(event.size()), event.data(),
//                    int(message.size()), message.data());
//     }
//   };
//   quiver::Options o;
//   o.logger = std::make_shared<StderrLogger>();
//
// Thread safety: Log is called from the thread that runs Open, the writer
// thread (or a thread in Write that commits its own batch, or the group
// queued with it: WriterOptions::caller_commits) and the checkpoint thread, possibly at
// once: it must be thread-safe. It must not call back into the graph: a
// Write, WriteAsync, Sync, Checkpoint or Close made from Log on the thread
// that is committing would wait for itself, so it fails with
// FailedPrecondition instead. Log should return quickly (the committing
// thread, and every producer behind it, waits for it). Log must not throw:
// an exception from it is caught and discarded with the event it was
// reporting (the graph carries on), so a logger that can fail should catch
// and count its own failures.
#ifndef QUIVER_LOGGER_H_
#define QUIVER_LOGGER_H_

#include <cstdint>
#include <string_view>

namespace quiver {

enum class LogLevel : std::uint8_t {
  kInfo = 0,
  kWarning = 1,
  kError = 2,
};

class Logger {
 public:
  virtual ~Logger() = default;
  // One event: `event` is one of the names above, `message` its facts.
  // Both are valid only during the call.
  virtual void Log(LogLevel level, std::string_view event, std::string_view message) = 0;
};

}  // namespace quiver

#endif  // QUIVER_LOGGER_H_

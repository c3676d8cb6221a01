// The child -> parent pipe protocol of the crash loop, and the parent's
// record of what one child said before it died.
//
// One event per line; each line is one write() of fewer than PIPE_BUF bytes,
// so lines from the child's threads never interleave, and every line written
// before the SIGKILL is still in the pipe for the parent to read after it.
//
//   P open-start                  about to open (recover) the graph
//   P open-done <seq> <us>        open returned: recovered sequence, open time
//   P checkpoint-start            an explicit Graph::Checkpoint() begins
//   P checkpoint-done <code>      it returned (StatusCodeName)
//   B <id>                        commit <id> is about to be submitted
//   A <id> <seq>                  Write returned OK with sequence <seq>
//   F <id> <code>                 Write failed (StatusCodeName)
//   I <create|drop> <name>        CreateIndex / DropIndex of a catalog index begins
//   J <create|drop> <name> <code> it returned (StatusCodeName)
//   E <message>                   the child gives up (open failed) and exits
//
// Thread safety: LineWriter::Write may be called from any thread; ChildLog
// and LineSplitter are single-threaded values.
#ifndef QUIVER_TOOLS_CRASHLOOP_CHILD_LOG_H_
#define QUIVER_TOOLS_CRASHLOOP_CHILD_LOG_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/ids.h"
#include "quiver/status.h"

namespace quiver::crashloop {

// Writes protocol lines to a pipe. A failed write (the parent is gone)
// ends the process: nobody is left to read what it would say.
class LineWriter {
 public:
  explicit LineWriter(int fd) : fd_(fd) {}
  // Appends '\n' and writes the line in one write(). Requires line.size() < 500.
  void Write(std::string_view line) const;

 private:
  int fd_;
};

// One index operation a child began (I), and how it ended (J) if it did.
struct IndexEvent {
  bool drop = false;
  std::string name;
  bool done = false;
  StatusCode code = StatusCode::kOk;
};

// Everything one child reported.
struct ChildLog {
  std::vector<IndexEvent> index_ops;              // in order: one thread at a time issues them
  std::set<std::uint64_t> begun;                  // B
  std::map<std::uint64_t, SequenceNumber> acked;  // A
  std::map<std::uint64_t, StatusCode> failed;     // F
  bool open_started = false;
  bool open_done = false;
  SequenceNumber child_recovered_sequence = 0;
  std::uint64_t child_open_us = 0;
  int checkpoints_in_flight = 0;  // explicit checkpoints begun and not returned
  std::uint64_t checkpoints_done = 0;
  std::string error;  // E, empty if none
  std::uint64_t malformed_lines = 0;

  // Records one line (without its '\n'); counts it as malformed if it does
  // not parse.
  void Add(std::string_view line);
};

// Cuts a byte stream into lines for a ChildLog; keeps a partial last line
// until its end arrives.
class LineSplitter {
 public:
  void Feed(std::string_view bytes, ChildLog* log);
  // A partial line left when the stream ended (the child never writes one).
  bool has_partial() const { return !partial_.empty(); }

 private:
  std::string partial_;
};

}  // namespace quiver::crashloop

#endif  // QUIVER_TOOLS_CRASHLOOP_CHILD_LOG_H_

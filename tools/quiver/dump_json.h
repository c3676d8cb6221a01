// DumpJsonLines: `quiver dump --json`, the dump's text (include/quiver/dump.h,
// docs/wal_format.md and docs/checkpoint_format.md give its grammar) as JSON
// Lines: one object per line of the dump, that is per file, header, commit
// group, batch, operation, checkpoint block, name, index definition, element,
// end, trailer and damage. Every object has "file" (the file's name) and
// "record" (what the line is), the numbers the line's grammar fixes (offsets,
// sizes, sequences, ids) as numbers, and "text": the line as the text dump
// prints it, without its indent, so nothing the text shows is lost.
//
// Example (one line each):
//   {"file":"wal-00000000000000000001.log","record":"file","kind":"wal","bytes":20480}
//   {"file":"wal-00000000000000000001.log","record":"group","offset":4096,"bytes":4096,
//    "first_sequence":1,"last_sequence":1,"text":"group at 4096, 4096 bytes, sequence 1"}
//   {"file":"wal-00000000000000000001.log","record":"operation","sequence":1,
//    "text":"add vertex v0 :Person {name: \"Ada\"}"}
//
// Thread safety: none; one per dump.
#ifndef QUIVER_TOOLS_QUIVER_DUMP_JSON_H_
#define QUIVER_TOOLS_QUIVER_DUMP_JSON_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "cli.h"

namespace quiver::cli {

class DumpJsonLines {
 public:
  explicit DumpJsonLines(std::FILE* out) : out_(out) {}

  // Takes the dump's next line (a DumpLineFn's argument) and prints its
  // object, or nothing for the blank line between files.
  void Line(std::string_view line);
  // The object of one line (null for a blank line); Line prints it.
  Json ToJson(std::string_view line);

 private:
  Json FileRecord(std::string_view text);
  Json WalRecord(int depth, std::string_view text);
  Json CheckpointRecord(int depth, std::string_view text);
  // What every record of the current file starts with.
  Json Record(std::string_view record) const;

  std::FILE* out_;
  std::string file_;         // the file being dumped
  bool checkpoint_ = false;  // whether it is a checkpoint (else a WAL segment)
  std::uint64_t batch_ = 0;  // the WAL batch whose operations follow
};

}  // namespace quiver::cli

#endif  // QUIVER_TOOLS_QUIVER_DUMP_JSON_H_

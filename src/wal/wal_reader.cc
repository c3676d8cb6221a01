#include "wal/wal_reader.h"

#include <algorithm>

#include "base/strings.h"

namespace quiver::wal {
namespace {

// Whether `b`, the byte at offset 8 of a record header, is a record type.
bool IsRecordTypeByte(std::byte b) {
  const auto t = static_cast<std::uint8_t>(b);
  return t >= static_cast<std::uint8_t>(RecordType::kFull) &&
         t <= static_cast<std::uint8_t>(RecordType::kPadding);
}

// True if a CRC-valid record starts somewhere in [from, end) with a first
// sequence of at least `min_first`: evidence of committed data past damage.
// (Only the last group can be unsynced when a crash comes, since each group
// is synced before the next is written; its own fragments may persist in any
// order, so they are no evidence.)
// A padding record at `ignored_padding` (the header's padding of a segment
// whose header is damaged) is no such evidence.
bool ValidRecordAfter(std::span<const std::byte> bytes, std::uint64_t from, SequenceNumber min_first,
                      std::uint64_t ignored_padding = 0) {
  for (std::uint64_t pos = (from + 7) & ~std::uint64_t{7}; pos + kRecordHeaderBytes <= bytes.size();
       pos += 8) {
    // The type byte first: a cheap skip over a zeroed end or a payload.
    if (!IsRecordTypeByte(bytes[pos + 8])) continue;
    auto header = bytes.subspan(pos, kRecordHeaderBytes);
    auto h = ParseRecordHeader(header);
    if (!h || h->first_sequence < min_first) continue;
    if (pos == ignored_padding && h->type == RecordType::kPadding) continue;
    if (pos + kRecordHeaderBytes + h->length > bytes.size()) continue;
    if (RecordCrcMatches(header, bytes.subspan(pos + kRecordHeaderBytes, h->length))) return true;
  }
  return false;
}

// The padding after a payload (up to 8-byte alignment, as far as the file
// goes) lies outside the CRC, so it must be exactly zero: any other byte there
// is damage.
bool PaddingIsZero(std::span<const std::byte> bytes, std::uint64_t from) {
  for (std::uint64_t i = from; i < bytes.size() && (i & 7) != 0; ++i)
    if (bytes[i] != std::byte{0}) return false;
  return true;
}

// Where reading may resume, by guess, after damage at `pos` when no record
// boundary past it is known: the first CRC-valid record past it that starts
// a group in [from, covered], or 0. The record may lie inside a payload that
// happens to hold a well-formed record, so nothing read from there on may
// be replayed (the caller refuses a group above `covered`).
std::uint64_t GuessResumePastCoveredDamage(std::span<const std::byte> bytes, std::uint64_t pos,
                                           SequenceNumber from, SequenceNumber covered) {
  if (from == 0 || from > covered) return 0;
  for (std::uint64_t at = pos + 8; at + kRecordHeaderBytes <= bytes.size(); at += 8) {
    if (!IsRecordTypeByte(bytes[at + 8])) continue;
    auto header = bytes.subspan(at, kRecordHeaderBytes);
    auto h = ParseRecordHeader(header);
    if (!h || (h->type != RecordType::kFull && h->type != RecordType::kFirst)) continue;
    if (h->first_sequence < from || h->first_sequence > covered) continue;
    if (at + kRecordHeaderBytes + h->length > bytes.size()) continue;
    if (RecordCrcMatches(header, bytes.subspan(at + kRecordHeaderBytes, h->length))) return at;
  }
  return 0;
}

}  // namespace

Status ScanSegment(std::span<const std::byte> bytes, const GroupVisitor& visit, SegmentScan* scan,
                   SequenceNumber covered, std::uint64_t covered_end) {
  *scan = SegmentScan{};
  scan->file_bytes = bytes.size();
  auto header = DecodeSegmentHeader(bytes);
  if (auto version = NewerFormatVersion(bytes); !header && version)
    return UnknownVersionError("WAL segment", *version, kOldestFormatVersion, kFormatVersion);
  if (!header) {
    // A header that never reached the disk whole: the segment was being
    // created when the process died. Nothing in it was acknowledged. No
    // group is appended before the header (with its padding to the first
    // page boundary, version 3) is synced, so a segment longer than its
    // header's page, or holding a valid record other than the header's
    // padding, had a durable header: its damage is no torn creation.
    if (bytes.size() > kWalPageBytes ||
        ValidRecordAfter(bytes, kSegmentHeaderBytes, 1, /*ignored_padding=*/kSegmentHeaderBytes)) {
      scan->bad_offset = 0;
      return CorruptionError("WAL segment header damaged");
    }
    scan->tail_bytes = bytes.size();
    return Status::Ok();
  }
  scan->header_valid = true;
  scan->header = *header;
  SequenceNumber next = header->first_sequence;
  scan->next_sequence = next;
  std::uint64_t pos = kSegmentHeaderBytes;
  scan->valid_end = pos;
  std::vector<std::byte> assembled;
  bool in_group = false;
  SequenceNumber group_first = 0, group_last = 0;
  // The page rule (version 3, wal_format.h): the header's padding record
  // comes first; a group whose records end off a page boundary counts only
  // once its padding record is read (the group's records and padding are
  // one append and one sync, so a group without it was never acknowledged).
  const bool padded = IsPaddedVersion(header->format_version);
  bool header_padding_due = padded;
  bool padding_due = false;
  std::span<const std::byte> done_payload;  // of the group whose padding is due
  // Reading resumed past covered damage at a guessed boundary: nothing from
  // there on may be replayed.
  bool guessed = false;
  // Damage at `pos`: true if reading resumed past it (all of it covered).
  auto resume = [&]() {
    const SequenceNumber from = in_group ? group_first : next;
    if (from == 0 || from > covered) return false;
    if (covered_end == kCoveredToTheEnd || (covered_end != 0 && covered_end > pos)) {
      // A true boundary, from the checkpoint: the group after it starts
      // there (or in a later segment), and everything before is covered.
      const std::uint64_t at = std::min<std::uint64_t>(covered_end, bytes.size());
      if (covered_end != kCoveredToTheEnd && (at != covered_end || at % 8 != 0)) return false;
      scan->covered_damage_bytes += at - pos;
      scan->skipped_to_end = covered_end == kCoveredToTheEnd;
      pos = at;
      scan->valid_end = at;
      next = covered + 1;
      in_group = false;
      header_padding_due = padding_due = false;
      return true;
    }
    if (covered_end != 0 || guessed) return false;  // damage after the known boundary is not covered
    const std::uint64_t at = GuessResumePastCoveredDamage(bytes, pos, from, covered);
    if (at == 0) return false;
    scan->covered_damage_bytes += at - pos;
    pos = at;
    next = ParseRecordHeader(bytes.subspan(at, kRecordHeaderBytes))->first_sequence;
    in_group = false;
    header_padding_due = padding_due = false;
    guessed = true;
    return true;
  };
  auto cannot_skip = [&]() {
    scan->bad_offset = pos;
    return CorruptionError(base::StrCat(
        "WAL segment ", header->segment_number,
        ": damage the checkpoint covers is followed by groups "
        "above it, and the checkpoint (format 1) does not say where they start, so the damage cannot be "
        "skipped safely"));
  };
  while (pos + kRecordHeaderBytes <= bytes.size()) {
    auto hbytes = bytes.subspan(pos, kRecordHeaderBytes);
    auto h = ParseRecordHeader(hbytes);
    if (!h || pos + kRecordHeaderBytes + h->length > bytes.size()) {
      if (resume()) continue;
      break;
    }
    auto payload = bytes.subspan(pos + kRecordHeaderBytes, h->length);
    if (!RecordCrcMatches(hbytes, payload) || !PaddingIsZero(bytes, pos + kRecordHeaderBytes + h->length)) {
      if (resume()) continue;
      break;
    }
    // Visits the group whose last record (and padding, if any) ends at pos.
    auto finish_group = [&](std::span<const std::byte> group_payload) -> Status {
      if (guessed && group_last > covered) return cannot_skip();
      QUIVER_RETURN_IF_ERROR(visit(group_first, group_last, group_payload));
      next = group_last + 1;
      scan->last_sequence = group_last;
      // The next record starts 8-aligned even if the file ends inside this
      // record's padding (a cut there loses nothing): recovery zero-fills up
      // to valid_end so appends continue where a reader will look.
      scan->valid_end = pos;
      ++scan->groups;
      return Status::Ok();
    };
    const std::uint64_t record_end = pos + kRecordHeaderBytes + PaddedLength(h->length);
    if (h->type == RecordType::kPadding) {
      if (!padded) {
        scan->bad_offset = pos;
        return CorruptionError(base::StrCat(
            "WAL segment ", header->segment_number, ": padding record at offset ", pos,
            " in a format version ", header->format_version, " segment (padding came with version 3)"));
      }
      const bool in_place =
          record_end % kWalPageBytes == 0 &&
          (header_padding_due
               ? pos == kSegmentHeaderBytes && h->first_sequence == header->first_sequence &&
                     h->last_sequence == header->first_sequence
               : padding_due && h->first_sequence == group_first && h->last_sequence == group_last);
      if (!in_place) {
        scan->bad_offset = pos;
        return CorruptionError(base::StrCat("WAL segment ", header->segment_number,
                                            ": padding record at offset ", pos, " out of place"));
      }
      pos = record_end;
      scan->padding_bytes += kRecordHeaderBytes + h->length;
      if (header_padding_due) {
        header_padding_due = false;
        scan->valid_end = pos;
        continue;
      }
      padding_due = false;
      in_group = false;
      QUIVER_RETURN_IF_ERROR(finish_group(done_payload));
      continue;
    }
    if (header_padding_due || padding_due) {
      scan->bad_offset = pos;
      return CorruptionError(base::StrCat("WAL segment ", header->segment_number, ": record at offset ", pos,
                                          " where a padding record must be (format version 3)"));
    }
    bool starts = h->type == RecordType::kFull || h->type == RecordType::kFirst;
    // A whole, CRC-valid record that does not continue the log (a stale
    // record of a removed segment where the disk lost a write, a misdirected
    // one) is damage like any other where the checkpoint covers the group
    // expected here and the record's own groups too: skipped the same way
    // (resume), or the groups proved after it would be refused, and salvage
    // would give them up. A record above the checkpoint is never skipped: it
    // proves an acknowledged group, misplaced. Anything else: Corruption (a
    // stale record in the tail too, though a crash that kept an append's
    // size but not its data can leave one: salvage then keeps every group).
    const bool continues =
        starts ? !in_group && h->first_sequence == next
               : in_group && h->first_sequence == group_first && h->last_sequence == group_last;
    if (!continues && h->last_sequence <= covered && resume()) continue;
    if (starts) {
      if (in_group || h->first_sequence != next) {
        scan->bad_offset = pos;
        return CorruptionError(base::StrCat("WAL segment ", header->segment_number, ": record at offset ",
                                            pos, " has sequence ", h->first_sequence, ", expected ", next));
      }
      group_first = h->first_sequence;
      group_last = h->last_sequence;
      assembled.clear();
    } else if (!in_group || h->first_sequence != group_first || h->last_sequence != group_last) {
      scan->bad_offset = pos;
      return CorruptionError(
          base::StrCat("WAL segment ", header->segment_number, ": stray fragment at offset ", pos));
    }
    in_group = h->type == RecordType::kFirst || h->type == RecordType::kMiddle;
    pos = record_end;
    if (in_group) {
      assembled.insert(assembled.end(), payload.begin(), payload.end());
      continue;
    }
    if (h->type == RecordType::kLast) {
      assembled.insert(assembled.end(), payload.begin(), payload.end());
      payload = assembled;
    }
    if (padded && pos % kWalPageBytes != 0) {
      // Whole, but not yet acknowledged unless its padding follows.
      padding_due = true;
      in_group = true;
      done_payload = payload;
      continue;
    }
    QUIVER_RETURN_IF_ERROR(finish_group(payload));
  }
  // Damage inside the header's page (format 3) lies in bytes synced before
  // any group was written: any valid piece of a group after it, even of the
  // group expected next, proves the damage hit durable bytes.
  const SequenceNumber proof_from = header_padding_due ? next : next + 1;
  if (pos < bytes.size() && ValidRecordAfter(bytes, pos + 1, proof_from)) {
    scan->bad_offset = pos;
    return CorruptionError(base::StrCat("WAL segment ", header->segment_number, ": damaged record at offset ",
                                        pos, " is followed by committed records"));
  }
  // After a guessed resume even the interrupted group's own pieces count:
  // the stop may lie inside a payload, before real records.
  if (guessed && pos < bytes.size() && ValidRecordAfter(bytes, pos + 1, covered + 1)) return cannot_skip();
  scan->next_sequence = next;
  scan->tail_bytes = bytes.size() > scan->valid_end ? bytes.size() - scan->valid_end : 0;
  // The zeroed end (version 3): the writer zero-fills a segment ahead of its
  // appends, synced, and each group overwrites whole pages of it. Past a
  // valid end on a page boundary after the header's page, bytes that are all
  // zero are that unused end, not a torn tail (any other byte there is one).
  if (padded && !guessed && scan->tail_bytes > 0 && scan->valid_end >= kWalPageBytes &&
      scan->valid_end % kWalPageBytes == 0 &&
      std::all_of(bytes.begin() + static_cast<std::ptrdiff_t>(scan->valid_end), bytes.end(),
                  [](std::byte b) { return b == std::byte{0}; })) {
    scan->zeroed_bytes = scan->tail_bytes;
    scan->tail_bytes = 0;
  }
  return Status::Ok();
}

Result<std::vector<std::byte>> ReadWholeFile(env::FileSystem* fs, const std::string& path) {
  QUIVER_ASSIGN_OR_RETURN(auto file, fs->OpenReadable(path));
  QUIVER_ASSIGN_OR_RETURN(std::uint64_t size, file->Size());
  std::vector<std::byte> out(size);
  std::uint64_t done = 0;
  while (done < size) {
    QUIVER_ASSIGN_OR_RETURN(std::size_t n, file->ReadAt(done, std::span<std::byte>(out).subspan(done)));
    if (n == 0) break;
    done += n;
  }
  out.resize(done);
  return out;
}

}  // namespace quiver::wal

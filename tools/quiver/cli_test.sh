#!/usr/bin/env bash
# End-to-end test of the quiver tool (ctest: cli.quiver): exit codes, error
# messages and output of every command, on the vendored
# LDBC Graphalytics example graph and on bad input.
# usage: cli_test.sh QUIVER_BINARY GRAPHALYTICS_DATA_DIR WORK_DIR GOLDEN_DIR
set -u
QUIVER=$1
DATA=$2
WORK=$3
GOLDEN=$4
rm -rf "$WORK"
mkdir -p "$WORK"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# expect_rc CODE COMMAND...: runs COMMAND, stdout to $WORK/out, stderr to $WORK/err.
expect_rc() {
  local want=$1
  shift
  "$@" >"$WORK/out" 2>"$WORK/err"
  local rc=$?
  [ "$rc" -eq "$want" ] || fail "'$*' exited $rc, want $want; stdout: $(cat "$WORK/out"); stderr: $(cat "$WORK/err")"
}
# expect_in out|err TEXT: the last command's stdout / stderr holds TEXT.
expect_in() {
  grep -qF -- "$2" "$WORK/$1" || fail "$1 lacks '$2'; it is: $(cat "$WORK/$1")"
}

# Usage errors exit 2; --help exits 0.
expect_rc 2 "$QUIVER"
expect_in err "no command"
expect_rc 2 "$QUIVER" frobnicate
expect_in err "unknown command 'frobnicate'"
expect_rc 2 "$QUIVER" import --bogus x "$WORK/g"
expect_in err "unknown option --bogus"
expect_rc 2 "$QUIVER" import "$WORK/g"
expect_in err "nothing to import"
expect_rc 2 "$QUIVER" import --format xml --vertices a.csv "$WORK/g"
expect_in err "--format must be csv, evlp or jsonl"
expect_rc 2 "$QUIVER" export "$WORK/g"
expect_in err "expected 2 argument(s), got 1"
expect_rc 0 "$QUIVER" --help
expect_in out "usage: quiver <command>"
for c in import export backup info verify dump neighbors path run; do
  expect_rc 0 "$QUIVER" "$c" --help
  expect_in out "usage: quiver $c"
done
expect_rc 0 "$QUIVER" stats --help
expect_in out "usage: quiver info"
# CLI11 formats each command's options with their text; -h is --help.
expect_rc 0 "$QUIVER" import -h
expect_in out "--vertices,--nodes [LABEL=]FILE[,FILE...]"
expect_in out "--skip-bad-rows N"
expect_rc 0 "$QUIVER" dump --help
expect_in out "--limit N"
expect_rc 2 "$QUIVER" info --bogus=1 "$WORK/g"
expect_in err "unknown option --bogus"
expect_rc 2 "$QUIVER" import --vertices
expect_in err "option --vertices needs a value"
expect_rc 2 "$QUIVER" info --json=false "$WORK/g"
expect_in err "option --json takes no value"
[ ! -e "$WORK/g" ] || fail "a usage error created the graph directory"

# The official example graph, EVLP, with an id index.
expect_rc 0 "$QUIVER" import --format evlp --id-index --vertices "$DATA/example-directed.v" \
  --edges "$DATA/example-directed.e" "$WORK/g"
expect_in out "imported 10 vertices and 17 edges"
expect_in out "created index Vertex.id"
expect_rc 0 "$QUIVER" stats "$WORK/g"
for line in "vertices 10" "edges 17" "label Vertex 10" "type EDGE 17" "key id vertices 10 edges 0" \
  "key weight vertices 0 edges 17" "index Vertex.id unique vertex Vertex(id) int64 entries 10"; do
  expect_in out "$line"
done
expect_rc 0 "$QUIVER" verify "$WORK/g"
expect_in out "ok"

# The same dataset named by its Graphalytics .properties file.
expect_rc 0 "$QUIVER" import --graphalytics "$DATA/example-directed.properties" "$WORK/gp"
expect_in out "imported 10 vertices and 17 edges"
expect_rc 0 "$QUIVER" stats "$WORK/gp"
for line in "vertices 10" "edges 17" "label Vertex 10" "type EDGE 17" "key weight vertices 0 edges 17"; do
  expect_in out "$line"
done
expect_rc 2 "$QUIVER" import --graphalytics "$DATA/example-directed.properties" --format csv "$WORK/gq"
expect_in err "--graphalytics reads EVLP"
expect_rc 1 "$QUIVER" import --graphalytics "$WORK/none.properties" "$WORK/gq"
[ ! -e "$WORK/gq" ] || fail "a failed import left a graph directory"

# EVLP export gives the original lines back.
expect_rc 0 "$QUIVER" export --format evlp "$WORK/g" "$WORK/evlp"
diff <(sort "$DATA/example-directed.v") <(sort "$WORK/evlp/graph.v") >/dev/null || fail "graph.v differs"
diff <(sort "$DATA/example-directed.e") <(sort "$WORK/evlp/graph.e") >/dev/null || fail "graph.e differs"

# CSV round trip through a second graph: the second export is byte-identical.
expect_rc 0 "$QUIVER" export "$WORK/g" "$WORK/csv1"
expect_in out "exported 10 vertices and 17 edges"
expect_rc 0 "$QUIVER" import --quiet --vertices "$WORK/csv1/vertices.csv" --edges "$WORK/csv1/edges.csv" "$WORK/g2"
[ ! -s "$WORK/out" ] || fail "--quiet printed: $(cat "$WORK/out")"
expect_rc 0 "$QUIVER" export "$WORK/g2" "$WORK/csv2"
cmp -s "$WORK/csv1/vertices.csv" "$WORK/csv2/vertices.csv" || fail "vertices.csv differs after a round trip"
cmp -s "$WORK/csv1/edges.csv" "$WORK/csv2/edges.csv" || fail "edges.csv differs after a round trip"
# An empty graph (made by a failed import through batches) takes the bulk path; a graph that
# holds elements goes through batches.
printf 'id:ID\nx,y\n' >"$WORK/bad.csv"
expect_rc 1 "$QUIVER" import --batches --vertices "$WORK/bad.csv" "$WORK/ge"
[ -e "$WORK/ge/QUIVER" ] || fail "the failed import through batches made no graph"
expect_rc 0 "$QUIVER" import --json --vertices "$WORK/csv1/vertices.csv" --edges "$WORK/csv1/edges.csv" "$WORK/ge"
expect_in out '"new_graph": true'
expect_rc 0 "$QUIVER" export "$WORK/ge" "$WORK/csv2e"
cmp -s "$WORK/csv1/edges.csv" "$WORK/csv2e/edges.csv" || fail "edges.csv differs after an import into an empty graph"
expect_rc 0 "$QUIVER" verify "$WORK/ge"
expect_rc 0 "$QUIVER" import --json --vertices "$WORK/csv1/vertices.csv" "$WORK/ge"
expect_in out '"new_graph": false'
# Neo4j's spellings: --nodes for --vertices, export --out for the second argument.
expect_rc 0 "$QUIVER" import --quiet --nodes "$WORK/csv1/vertices.csv" --edges "$WORK/csv1/edges.csv" "$WORK/g2n"
expect_rc 0 "$QUIVER" export --quiet --format csv "$WORK/g2n" --out "$WORK/csv2n"
cmp -s "$WORK/csv1/vertices.csv" "$WORK/csv2n/vertices.csv" || fail "vertices.csv differs through --nodes / --out"
cmp -s "$WORK/csv1/edges.csv" "$WORK/csv2n/edges.csv" || fail "edges.csv differs through --nodes / --out"
expect_rc 2 "$QUIVER" export --out "$WORK/csv-twice" "$WORK/g" "$WORK/csv-twice2"
expect_in err "give the output directory once"
expect_rc 2 "$QUIVER" export --out= "$WORK/g"
expect_in err "--out needs a directory"
expect_rc 2 "$QUIVER" export --out= --quiet "$WORK/g"
expect_in err "--out needs a directory"
[ ! -e "$WORK/csv-twice" ] && [ ! -e "$WORK/csv-twice2" ] || fail "a usage error created an export directory"
# Any number of export threads writes the same files.
for t in 1 3; do
  expect_rc 0 "$QUIVER" export --quiet --threads "$t" "$WORK/g" "$WORK/csv-t$t"
  for f in vertices.csv edges.csv; do
    cmp -s "$WORK/csv1/$f" "$WORK/csv-t$t/$f" || fail "$f differs with --threads $t"
  done
done
expect_rc 2 "$QUIVER" export --threads 2000 "$WORK/g" "$WORK/csv-bad"
expect_in err "--threads needs a number (at most 1024)"
[ ! -e "$WORK/csv-bad" ] || fail "a usage error created the export directory"

# A header in its own file, Neo4j's way: HEADER,PART,PART gives the same graph.
head -n 1 "$WORK/csv1/edges.csv" >"$WORK/csv1/e-header.csv"
tail -n +2 "$WORK/csv1/edges.csv" | head -n 8 >"$WORK/csv1/e-part1.csv"
tail -n +10 "$WORK/csv1/edges.csv" >"$WORK/csv1/e-part2.csv"
expect_rc 0 "$QUIVER" import --quiet --vertices "$WORK/csv1/vertices.csv" \
  --edges "$WORK/csv1/e-header.csv,$WORK/csv1/e-part1.csv,$WORK/csv1/e-part2.csv" "$WORK/g2h"
expect_rc 0 "$QUIVER" export "$WORK/g2h" "$WORK/csv2h"
cmp -s "$WORK/csv1/edges.csv" "$WORK/csv2h/edges.csv" || fail "edges.csv differs after a header-file import"

# A label is only before the list; an empty file name is a usage error.
expect_rc 1 "$QUIVER" import --vertices "$WORK/csv1/vertices.csv,P=$WORK/csv1/vertices.csv" "$WORK/g2x"
expect_in err "P=$WORK/csv1/vertices.csv:0:0: no such file"
expect_rc 2 "$QUIVER" import --vertices "$WORK/csv1/vertices.csv," "$WORK/g2x"
expect_in err "an empty file name"

# JSON Lines round trip: export, import into a new graph, and its CSV export is the first one.
expect_rc 0 "$QUIVER" export --format jsonl "$WORK/g" "$WORK/jsonl"
expect_in out "wrote $WORK/jsonl/vertices.jsonl"
head -1 "$WORK/jsonl/vertices.jsonl" | grep -qF '{"id":1,"label":"Vertex","properties":{}}' ||
  fail "vertices.jsonl: $(head -2 "$WORK/jsonl/vertices.jsonl")"
expect_rc 0 "$QUIVER" import --format jsonl --vertices "$WORK/jsonl/vertices.jsonl" \
  --edges "$WORK/jsonl/edges.jsonl" "$WORK/gj"
expect_in out "imported 10 vertices and 17 edges into a new graph"
expect_rc 0 "$QUIVER" export "$WORK/gj" "$WORK/csvj"
cmp -s "$WORK/csv1/vertices.csv" "$WORK/csvj/vertices.csv" || fail "vertices.csv differs after a JSON Lines round trip"
cmp -s "$WORK/csv1/edges.csv" "$WORK/csvj/edges.csv" || fail "edges.csv differs after a JSON Lines round trip"
# Quiver ids exported (--jsonl-id-key '') and imported without keeping them give the same graph.
expect_rc 0 "$QUIVER" export --format jsonl --jsonl-id-key '' "$WORK/g" "$WORK/jsonl-qids"
head -1 "$WORK/jsonl-qids/vertices.jsonl" | grep -qF '{"id":0,"label":"Vertex","properties":{"id":1}}' ||
  fail "vertices.jsonl with Quiver ids: $(head -2 "$WORK/jsonl-qids/vertices.jsonl")"
expect_rc 0 "$QUIVER" import --format jsonl --jsonl-id-key '' --vertices "$WORK/jsonl-qids/vertices.jsonl" \
  --edges "$WORK/jsonl-qids/edges.jsonl" "$WORK/gq"
expect_rc 0 "$QUIVER" export "$WORK/gq" "$WORK/csvq"
cmp -s "$WORK/csv1/vertices.csv" "$WORK/csvq/vertices.csv" || fail "vertices.csv differs after a Quiver-id round trip"
cmp -s "$WORK/csv1/edges.csv" "$WORK/csvq/edges.csv" || fail "edges.csv differs after a Quiver-id round trip"
printf '{"id": 1}\n{"id": 2, "oops": 1}\n' >"$WORK/bad.jsonl"
expect_rc 1 "$QUIVER" import --format jsonl --vertices "V=$WORK/bad.jsonl" "$WORK/gbad"
expect_in err "bad.jsonl:2:11: unknown member \"oops\""
[ ! -e "$WORK/gbad" ] || fail "a failed JSON Lines import left $WORK/gbad"

# Gzip input: the same graph; a truncated file is an error naming it, and no graph.
gzip -c "$DATA/example-directed.e" >"$WORK/e.gz"
expect_rc 0 "$QUIVER" import --format evlp --vertices "$DATA/example-directed.v" --edges "$WORK/e.gz" "$WORK/ggz"
expect_in out "imported 10 vertices and 17 edges"
expect_rc 0 "$QUIVER" export --format evlp "$WORK/ggz" "$WORK/evlp-gz"
cmp -s "$WORK/evlp/graph.e" "$WORK/evlp-gz/graph.e" || fail "graph.e differs after a gzip import"
head -c 20 "$WORK/e.gz" >"$WORK/cut.gz"
expect_rc 1 "$QUIVER" import --format evlp --vertices "$DATA/example-directed.v" --edges "$WORK/cut.gz" "$WORK/gcut"
expect_in err "cut.gz:1:0: truncated gzip file"
[ ! -e "$WORK/gcut" ] || fail "a truncated gzip import left $WORK/gcut"

# Export never overwrites.
expect_rc 1 "$QUIVER" export "$WORK/g" "$WORK/csv1"
expect_in err "AlreadyExists"

# Bad input: exit 1, file:line:column, and no graph made (a new graph is built whole or not at all).
printf 'id:ID,age:int\np1,1\np2,x\n' >"$WORK/bad.csv"
expect_rc 1 "$QUIVER" import --vertices "P=$WORK/bad.csv" "$WORK/g3"
expect_in err "bad.csv:3:4: 'x' is not an int (column age)"
[ ! -e "$WORK/g3" ] || fail "a failed import into a new graph left $WORK/g3"
expect_rc 1 "$QUIVER" import --vertices "$WORK/nope.csv" "$WORK/g3"
expect_in err "nope.csv:0:0: no such file"
expect_rc 1 "$QUIVER" import --vertices "$WORK/bad.csv" "$WORK/g3"
expect_in err "bad.csv:1:1: no :LABEL column and no label for the file"

# --skip-bad-rows imports the rest and reports each rejected row.
expect_rc 0 "$QUIVER" import --skip-bad-rows 1 --report "$WORK/rejected.csv" --vertices "P=$WORK/bad.csv" "$WORK/g3"
expect_in out "imported 1 vertices and 0 edges"
expect_in out "(1 rows rejected)"
expect_in err "rejected $WORK/bad.csv:3:4: 'x' is not an int (column age)"
grep -qF "$WORK/bad.csv,3,4,'x' is not an int (column age),\"p2,x\"" "$WORK/rejected.csv" ||
  fail "report: $(cat "$WORK/rejected.csv")"
expect_in out "into a new graph"

# Into an existing graph the rows go through batches; bad input there changes nothing.
expect_rc 1 "$QUIVER" import --vertices "P=$WORK/bad.csv" "$WORK/g3"
expect_in err "bad.csv:3:4: 'x' is not an int (column age)"
printf 'id:ID\nq1\n' >"$WORK/more.csv"
expect_rc 0 "$QUIVER" import --vertices "P=$WORK/more.csv" "$WORK/g3"
expect_in out "imported 1 vertices and 0 edges in 1 batches"
expect_rc 0 "$QUIVER" info "$WORK/g3"
expect_in out "vertices 2"

# Read-only commands on a missing graph fail with 1.
expect_rc 1 "$QUIVER" info "$WORK/missing"
expect_in err "NotFound"

# info: the golden output, its timings and memory figures masked (they vary by run and allocator).
(cd "$WORK" && "$QUIVER" info g) >"$WORK/info" 2>"$WORK/err" || fail "info exited $?: $(cat "$WORK/err")"
sed -E -e 's/^memory [0-9]+ bytes allocated, [0-9.]+ per element$/memory N bytes allocated, N per element/' \
  -e 's/ in [0-9.]+ s$/ in T s/' "$WORK/info" >"$WORK/info.masked"
diff -u "$GOLDEN/info-example.golden" "$WORK/info.masked" >"$WORK/diff" ||
  fail "info differs from $GOLDEN/info-example.golden: $(cat "$WORK/diff")"
expect_rc 0 "$QUIVER" info --json "$WORK/g"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["vertices"] == 10 and d["edges"] == 17, d
assert d["labels"] == [{"name": "Vertex", "vertices": 10}], d["labels"]
assert d["indexes"][0]["name"] == "Vertex.id" and d["indexes"][0]["kind"] == "unique", d["indexes"]
assert d["files_ok"] and d["files"][0]["kind"] == "checkpoint", d["files"]
' "$WORK/out" || fail "info --json: $(cat "$WORK/out")"

# neighbors: by id and by external id (through the id index), to a depth.
expect_rc 0 "$QUIVER" neighbors "$WORK/g" 0
expect_in out "$(printf '2\tVertex\t1\t0\tEDGE\tout\t0')"
expect_in out "$(printf '7\tVertex\t1\t15\tEDGE\tin\t0')"
[ "$(wc -l <"$WORK/out")" -eq 4 ] || fail "neighbors 0: $(cat "$WORK/out")"
expect_rc 0 "$QUIVER" neighbors --by Vertex.id --direction out --depth 2 --show id "$WORK/g" 1
expect_in out "$(printf '9\tVertex\t2\t8\tEDGE\tout\t2\t10')"
expect_rc 0 "$QUIVER" neighbors --json --limit 1 "$WORK/g" 0
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["truncated"] and len(d["neighbors"]) == 1 and d["neighbors"][0]["vertex"] == 2, d
' "$WORK/out" || fail "neighbors --json: $(cat "$WORK/out")"
# Text columns escape what would break them: a tab in a string, ';' in a list element.
printf 'id:ID,name,tags:string[]\na,"t\tu",p\\;q;r\nb,v,\n' >"$WORK/esc-v.csv"
printf ':START_ID,:END_ID\na,b\n' >"$WORK/esc-e.csv"
expect_rc 0 "$QUIVER" import --quiet --id-index --vertices "P=$WORK/esc-v.csv" --edges "R=$WORK/esc-e.csv" "$WORK/gesc"
expect_rc 0 "$QUIVER" neighbors --by P.id --show name --show tags "$WORK/gesc" b
expect_in out "$(printf '\tt\\tu\t[p\\;q;r]')"
# The empty list prints as [], a list of one empty string as [\e] (both printed [] before).
printf '{"id":"x","label":"P","properties":{"t":{"strings":[]}}}\n{"id":"y","label":"P","properties":{"t":[""]}}\n{"id":"z","label":"P","properties":{}}\n' >"$WORK/lists-v.jsonl"
printf '{"start":"z","end":"x","type":"R"}\n{"start":"z","end":"y","type":"R"}\n' >"$WORK/lists-e.jsonl"
expect_rc 0 "$QUIVER" import --quiet --format jsonl --id-index --vertices "P=$WORK/lists-v.jsonl" \
  --edges "R=$WORK/lists-e.jsonl" "$WORK/glists"
expect_rc 0 "$QUIVER" neighbors --by P.id --show t "$WORK/glists" z
expect_in out "$(printf '\tout\t2\t[]')"
expect_in out "$(printf '\tout\t2\t[\\e]')"
expect_rc 1 "$QUIVER" neighbors "$WORK/g" 99
expect_in err "no vertex 99"
expect_rc 1 "$QUIVER" neighbors --by Vertex.id "$WORK/g" 99
expect_in err "no Vertex vertex with id = 99"
expect_rc 1 "$QUIVER" neighbors --by Vertex.name "$WORK/g" 1
expect_rc 2 "$QUIVER" neighbors --direction sideways "$WORK/g" 0

# path: shortest, weighted, k shortest; exit 3 when there is none.
expect_rc 0 "$QUIVER" path "$WORK/g" 0 9
expect_in out "cost 2: 0 -[e0:EDGE]-> 2 -[e8:EDGE]-> 9"
expect_rc 0 "$QUIVER" path --k 3 --direction both --by Vertex.id --show id "$WORK/g" 1 10
expect_in out "cost 2: 0(id=1) <-[e5:EDGE]- 2(id=3) -[e8:EDGE]-> 9(id=10)"
[ "$(wc -l <"$WORK/out")" -eq 3 ] || fail "path --k 3: $(cat "$WORK/out")"
expect_rc 0 "$QUIVER" path --weight weight --json "$WORK/g" 0 9
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
p = d["paths"][0]
assert p["vertices"][0] == 0 and p["vertices"][-1] == 9 and len(p["edges"]) == len(p["vertices"]) - 1, d
' "$WORK/out" || fail "path --json: $(cat "$WORK/out")"
expect_rc 3 "$QUIVER" path "$WORK/g" 0 1
expect_in out "no path from 0 to 1"

# run: each Graphalytics kernel against the reference output of the example graph (by external id).
# compare_ref REF OUT [ids]: OUT is "vertex,id,value" CSV; with "ids" its values are vertex ids,
# mapped to external ids first. Numbers agree to 1e-9 relative.
compare_ref() {
  awk -F'[ ,]' -v ids="${3:-}" '
    FNR == NR { if (FNR > 1) { ext[$1] = $2; val[$2] = $3 } next }
    {
      got = val[$1]
      if (ids != "") got = ext[got]
      if (got == "") { print "missing vertex " $1; bad = 1; next }
      if ($2 == "infinity" || got == "infinity") { if ($2 != got) { print $1 ": " got " != " $2; bad = 1 } next }
      d = got - $2; if (d < 0) d = -d
      m = $2 < 0 ? -$2 : $2
      if (d > 1e-9 * (m > 1 ? m : 1)) { print $1 ": " got " != " $2; bad = 1 }
    }
    END { exit bad }' "$2" "$1" >"$WORK/cmp" || fail "$2 against $1: $(cat "$WORK/cmp")"
}
run_ref() {  # run_ref NAME REF [ids] -- ARGS...
  local name=$1 ref=$2 ids=$3
  shift 4
  expect_rc 0 "$QUIVER" run --id-key id "$@" "$WORK/g"
  cp "$WORK/out" "$WORK/run-$name.csv"
  compare_ref "$DATA/$ref" "$WORK/run-$name.csv" "$ids"
}
run_ref bfs example-directed-BFS "" -- bfs --by Vertex.id --source 1
run_ref pr example-directed-PR "" -- pagerank --iterations 2 --damping 0.85
run_ref wcc example-directed-WCC ids -- wcc
run_ref cdlp example-directed-CDLP ids -- cdlp --iterations 2
run_ref lcc example-directed-LCC "" -- lcc
run_ref sssp example-directed-SSSP "" -- sssp --by Vertex.id --source 1 --weight weight
expect_in err "sssp over 10 vertices and 17 edges"
expect_rc 0 "$QUIVER" run triangles "$WORK/g"
expect_in out "triangles "
expect_rc 0 "$QUIVER" run --format jsonl --out "$WORK/pr.jsonl" pagerank "$WORK/g"
[ "$(wc -l <"$WORK/pr.jsonl")" -eq 10 ] || fail "pr.jsonl: $(cat "$WORK/pr.jsonl")"
python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert abs(sum(r["value"] for r in rows) - 1) < 1e-9, rows
' "$WORK/pr.jsonl" || fail "pr.jsonl: $(cat "$WORK/pr.jsonl")"
expect_rc 1 "$QUIVER" run --out "$WORK/pr.jsonl" pagerank "$WORK/g"
expect_in err "File exists"
expect_rc 2 "$QUIVER" run bfs "$WORK/g"
expect_in err "bfs needs --source"
expect_rc 2 "$QUIVER" run frobnicate "$WORK/g"
expect_in err "unknown algorithm 'frobnicate'"

# backup: a copy that opens to the same graph; never into a directory holding files.
expect_rc 0 "$QUIVER" backup "$WORK/g" "$WORK/g-copy"
expect_in out "backed up sequence 1"
expect_rc 0 "$QUIVER" verify "$WORK/g-copy"
expect_rc 0 "$QUIVER" export "$WORK/g-copy" "$WORK/csv-copy"
cmp -s "$WORK/csv1/vertices.csv" "$WORK/csv-copy/vertices.csv" || fail "the backup's vertices differ"
cmp -s "$WORK/csv1/edges.csv" "$WORK/csv-copy/edges.csv" || fail "the backup's edges differ"
expect_rc 1 "$QUIVER" backup "$WORK/g" "$WORK/csv1"
expect_in err "csv1"

# run --write-property writes the results back (a new commit), into the copy.
expect_rc 0 "$QUIVER" run --write-property rank pagerank "$WORK/g-copy"
expect_in out "wrote property rank of 10 vertices"
expect_rc 0 "$QUIVER" info "$WORK/g-copy"
expect_in out "key rank vertices 10 edges 0"
# The golden of a graph with a WAL after its checkpoint (the segment's size masked too: it
# depends on whether the file system preallocates).
(cd "$WORK" && "$QUIVER" info g-copy) >"$WORK/info" 2>"$WORK/err" || fail "info exited $?: $(cat "$WORK/err")"
sed -E -e 's/^memory [0-9]+ bytes allocated, [0-9.]+ per element$/memory N bytes allocated, N per element/' \
  -e 's/ in [0-9.]+ s$/ in T s/' -e 's/^(wal .*), [0-9]+ bytes,/\1, N bytes,/' "$WORK/info" >"$WORK/info.masked"
diff -u "$GOLDEN/info-wal.golden" "$WORK/info.masked" >"$WORK/diff" ||
  fail "info differs from $GOLDEN/info-wal.golden: $(cat "$WORK/diff")"

# dump: the records of each file (the library's golden tests pin the whole text).
expect_rc 0 "$QUIVER" dump "$WORK/g"
for line in "checkpoint-00000000000000000001.qck (636 bytes)" "header: format 5, graph " \
  'index "Vertex.id": unique on vertices :Vertex (id), type int64; declared at sequence 1, ready' \
  "v9 :Vertex {id: 10}" "e8 :EDGE v2 -> v9 {weight: 0.52}" "10 live vertices, 17 live edges"; do
  expect_in out "$line"
done
expect_rc 0 "$QUIVER" dump --wal "$WORK/g-copy"
expect_in out "set v0.rank = 0.16977227285104013"
expect_in out "end: 1 group, the log ends at 8192"
! grep -q "checkpoint-" "$WORK/out" || fail "dump --wal printed a checkpoint"
expect_rc 0 "$QUIVER" dump --checkpoint --no-values "$WORK/g-copy/checkpoint-00000000000000000002.qck"
expect_in out "block at 197: vertices, ids 0..9"
! grep -q "v0 :Vertex" "$WORK/out" || fail "dump --no-values printed elements"
expect_rc 1 "$QUIVER" dump "$WORK/missing"
expect_in err "NotFound"
# dump --json: JSON Lines against the golden files, the graph's UUID and the segment's size masked
# (it depends on whether the file system preallocates), and every line one object with its text.
mask_dump() {
  sed -E -e 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/<graph-uuid>/g' \
    -e 's/("record":"file","kind":"wal","bytes":)[0-9]+/\1N/' \
    -e 's/the log ends at ([0-9]+)(, the end of the file|; zeroed end of [0-9]+ bytes)/the log ends at \1<end>/' "$1"
}
for part in checkpoint wal; do
  expect_rc 0 "$QUIVER" dump --json --$part "$WORK/g-copy"
  mask_dump "$WORK/out" >"$WORK/dump.masked"
  diff -u "$GOLDEN/dump-$part.jsonl.golden" "$WORK/dump.masked" >"$WORK/diff" ||
    fail "dump --json --$part differs from $GOLDEN/dump-$part.jsonl.golden: $(cat "$WORK/diff")"
  python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    d = json.loads(line)
    assert d["file"] and d["record"], d
    assert d["record"] == "file" or d["text"], d
    n += 1
assert n > 5, n
' "$WORK/out" || fail "dump --json --$part: $(cat "$WORK/out")"
done
expect_rc 0 "$QUIVER" dump --json --no-values --limit 1 "$WORK/g-copy/checkpoint-00000000000000000002.qck"
! grep -q '"record":"vertex"' "$WORK/out" || fail "dump --json --no-values printed elements"
expect_in out '"record":"block","offset":197,"block":"vertices"'

# Review: a failed run changes nothing; an indexed key is refused before any write.
echo keep >"$WORK/exists.csv"
expect_rc 1 "$QUIVER" run --write-property c --out "$WORK/exists.csv" wcc "$WORK/g-copy"
expect_in err "File exists"
expect_rc 1 "$QUIVER" run --write-property id wcc "$WORK/g-copy"
expect_in err "index 'Vertex.id' covers that key"
expect_rc 0 "$QUIVER" info "$WORK/g-copy"
expect_in out "sequence 2"
! grep -q "^key c " "$WORK/out" || fail "a refused run wrote property c"
[ "$(cat "$WORK/exists.csv")" = keep ] || fail "run overwrote --out"
expect_rc 2 "$QUIVER" run --out "$WORK/tri.csv" triangles "$WORK/g"
expect_in err "triangles gives one number"
# Review: JSON output keeps its own members whatever --show / --id-key name.
expect_rc 0 "$QUIVER" path --json --show cost "$WORK/g" 0 9
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["paths"][0]["vertices"] == [0, 2, 9], d' \
  "$WORK/out" || fail "path --json --show: $(cat "$WORK/out")"
expect_rc 0 "$QUIVER" run --format jsonl --id-key vertex wcc "$WORK/g"
expect_in out '{"vertex":0,"value":0,"properties":{"vertex":null}}'
# Review: output that cannot be written is a failure.
"$QUIVER" run wcc "$WORK/g" >/dev/full 2>"$WORK/err"
[ $? -eq 1 ] || fail "run to a full device did not fail"
expect_in err "writing"
# Review: a stored name cannot forge a line of info's text.
printf '{"id": 1, "label": "evil\\nvertices 999"}\n' >"$WORK/evil.jsonl"
expect_rc 0 "$QUIVER" import --format jsonl --vertices "$WORK/evil.jsonl" "$WORK/gevil"
expect_rc 0 "$QUIVER" info "$WORK/gevil"
expect_in out 'label evil\x0avertices 999 1'
! grep -q '^vertices 999' "$WORK/out" || fail "a label forged a line of info"

# Progress on a terminal (script(1) gives the command one): a phase line on stderr, then cleared.
if command -v script >/dev/null 2>&1; then
  script -qec "$QUIVER import --format evlp --vertices $DATA/example-directed.v --edges $DATA/example-directed.e $WORK/g-tty" \
    /dev/null >"$WORK/tty" 2>&1 || fail "import on a terminal: $(cat "$WORK/tty")"
  grep -q "checking: " "$WORK/tty" || fail "no progress line on a terminal: $(cat -v "$WORK/tty")"
  grep -q "loading: " "$WORK/tty" || fail "no loading progress on a terminal: $(cat -v "$WORK/tty")"
  grep -q "rows/s" "$WORK/tty" || fail "import progress shows no rows per second: $(cat -v "$WORK/tty")"
  grep -q "MB/s" "$WORK/tty" || fail "import progress shows no bytes per second: $(cat -v "$WORK/tty")"
  # export: each file's rows, with rows and bytes per second; none with --json.
  script -qec "$QUIVER export $WORK/g-tty $WORK/csv-tty" /dev/null >"$WORK/tty" 2>&1 ||
    fail "export on a terminal: $(cat "$WORK/tty")"
  grep -q "vertices: [0-9]*/10 rows" "$WORK/tty" || fail "no vertices progress on a terminal: $(cat -v "$WORK/tty")"
  grep -q "edges: [0-9]*/17 rows (.* rows/s, .* MB/s" "$WORK/tty" ||
    fail "no edges progress on a terminal: $(cat -v "$WORK/tty")"
  script -qec "$QUIVER export --json $WORK/g-tty $WORK/csv-tty-json" /dev/null >"$WORK/tty" 2>&1 ||
    fail "export --json on a terminal: $(cat "$WORK/tty")"
  ! grep -q "rows/s" "$WORK/tty" || fail "export --json drew progress: $(cat -v "$WORK/tty")"
fi
# ... and none when stderr is not a terminal (every command above), or with --quiet.
expect_rc 0 "$QUIVER" import --format evlp --vertices "$DATA/example-directed.v" "$WORK/g-notty"
[ ! -s "$WORK/err" ] || fail "progress on a pipe: $(cat -v "$WORK/err")"

# verify finds a damaged checkpoint and exits 1; --json says which file.
ckpt=$(ls "$WORK/g"/checkpoint-*.qck | tail -1)
[ -n "$ckpt" ] || fail "no checkpoint in $WORK/g"
printf '\xff\xff\xff\xff' | dd of="$ckpt" bs=1 seek=100 conv=notrunc status=none
expect_rc 1 "$QUIVER" verify "$WORK/g"
expect_in err "Corruption"
expect_rc 1 "$QUIVER" dump "$WORK/g"
expect_in out "! stopped at offset "
expect_in err "Corruption"
expect_rc 1 "$QUIVER" dump --json "$WORK/g"
expect_in err "Corruption"
python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert rows[-1]["record"] == "stopped" and rows[-1]["offset"] > 0, rows[-1]
assert rows[-1]["text"].startswith("! stopped at offset "), rows[-1]
' "$WORK/out" || fail "dump --json of a damaged checkpoint: $(cat "$WORK/out")"
expect_rc 1 "$QUIVER" verify --json "$WORK/g"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert not d["ok"] and not d["files"][0]["ok"] and "Corruption" in d["files"][0]["status"], d
' "$WORK/out" || fail "verify --json: $(cat "$WORK/out")"

echo "cli.quiver: all checks passed"

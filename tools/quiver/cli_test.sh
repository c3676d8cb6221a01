#!/usr/bin/env bash
# End-to-end test of the quiver tool (ctest: cli.quiver): exit codes, error
# messages and output of import / export / stats / verify, on the vendored
# LDBC Graphalytics example graph and on bad input.
# usage: cli_test.sh QUIVER_BINARY GRAPHALYTICS_DATA_DIR WORK_DIR
set -u
QUIVER=$1
DATA=$2
WORK=$3
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
expect_in err "--format must be csv or evlp"
expect_rc 2 "$QUIVER" export "$WORK/g"
expect_in err "expected 2 argument(s), got 1"
expect_rc 0 "$QUIVER" --help
expect_in out "usage: quiver <command>"
for c in import export stats verify; do
  expect_rc 0 "$QUIVER" "$c" --help
  expect_in out "usage: quiver $c"
done
[ ! -e "$WORK/g" ] || fail "a usage error created the graph directory"

# The official example graph, EVLP, with an id index.
expect_rc 0 "$QUIVER" import --format evlp --id-index --vertices "$DATA/example-directed.v" \
  --edges "$DATA/example-directed.e" "$WORK/g"
expect_in out "imported 10 vertices and 17 edges"
expect_in out "created index Vertex.id"
expect_rc 0 "$QUIVER" stats "$WORK/g"
for line in "vertices 10" "edges 17" "label Vertex 10" "type EDGE 17" "key id vertices 10 edges 0" \
  "key weight vertices 0 edges 17" "index Vertex.id Vertex entries 10"; do
  expect_in out "$line"
done
expect_rc 0 "$QUIVER" verify "$WORK/g"
expect_in out "ok"

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
expect_rc 0 "$QUIVER" stats "$WORK/g3"
expect_in out "vertices 2"

# Read-only commands on a missing graph fail with 1.
expect_rc 1 "$QUIVER" stats "$WORK/missing"
expect_in err "NotFound"

# verify finds a damaged checkpoint and exits 1.
ckpt=$(ls "$WORK/g"/checkpoint-*.qck | tail -1)
[ -n "$ckpt" ] || fail "no checkpoint in $WORK/g"
printf '\xff\xff\xff\xff' | dd of="$ckpt" bs=1 seek=100 conv=notrunc status=none
expect_rc 1 "$QUIVER" verify "$WORK/g"
expect_in err "Corruption"

echo "cli.quiver: all checks passed"

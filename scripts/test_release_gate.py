#!/usr/bin/python3
"""Tests of scripts/release-gate (ctest: capacity.gate_unittest, label bench).

Run: /usr/bin/python3 scripts/test_release_gate.py [-v]

Every test builds a synthetic history and baseline in a temporary directory; nothing in the
source tree is read or written except the script itself.
"""
import contextlib
import importlib.machinery
import importlib.util
import io
import json
import os
import shutil
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def load_gate():
    loader = importlib.machinery.SourceFileLoader("release_gate", os.path.join(HERE, "release-gate"))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


gate = load_gate()

MACHINE = "1793dcedab31"
RATIOS = {"traversalRatio": 0.128, "checkpointRatio": 0.65, "durableWrites1ProducerRatio": 0.68}


# The rate figures whose headline carries the absolute figure beside the ratio, and the ceiling
# run() implies for each unless a test sets it: a fixed ceiling, so by default a ratio and its
# absolute figure move together and the ceiling-rose rule never applies.
ABSOLUTES = {"durableWrites1ProducerRatio": "durableWrites1ProducerPerSecond",
             "durableWrites32ProducersRatio": "durableWrites32ProducersPerSecond",
             "checkpointRatio": "checkpointMegabytesPerSecond",
             "loadRatio": "loadElementsPerSecond",
             "traversalRatio": "traversalBestEdgesPerSecond"}
CEILINGS = {"durableWrites1ProducerRatio": 12000, "durableWrites32ProducersRatio": 12000,
            "checkpointRatio": 710, "loadRatio": 4.5e9, "traversalRatio": 3.67e9}


def run(n, status="published", digest=MACHINE, profile="full", dirty=False, partial=False, rates=None,
        **figures):
    """A history line. `rates` maps a ratio to (absolute, ceiling) and sets both the ratio
    (absolute ÷ ceiling) and its absolute figure; `figures` then set headline keys (None removes
    one). An absolute figure not set either way is the ratio × CEILINGS."""
    headline = dict(RATIOS)
    for key, (absolute, ceiling) in (rates or {}).items():
        headline[key] = absolute / ceiling
        headline[ABSOLUTES[key]] = absolute
    headline.update(figures)  # after rates: a test can take one of their keys out again
    for key, absolute_key in ABSOLUTES.items():
        value = headline.get(key)
        if absolute_key not in headline and isinstance(value, (int, float)):
            headline[absolute_key] = value * CEILINGS[key]
    for key in [k for k, v in headline.items() if v is None]:
        del headline[key]
    return {"runId": f"run-{n}", "status": status, "commit": f"{n:040x}", "dirty": dirty,
            "dateUtc": f"2026-12-01T00:00:{n:02d}Z", "profile": profile, "partial": partial,
            "schemaVersion": 1, "environmentDigest": digest, "headline": headline}


class Files:
    """A history and a baseline in a temporary directory, and the gate run on them."""

    def __init__(self, test, runs, n=3, floor=0.1, min_runs=1):
        self.dir = tempfile.mkdtemp(prefix="release-gate-test-")
        test.addCleanup(shutil.rmtree, self.dir)
        self.history = os.path.join(self.dir, "history.jsonl")
        self.baseline_path = os.path.join(self.dir, "baseline.json")
        baseline = {"runs": n, "minRuns": min_runs, "noiseFloor": {"default": floor}, "entries": []}
        published = [r for r in runs[:-1] if r["status"] == "published"]
        keys = sorted({(r["profile"], r["environmentDigest"]) for r in published})
        baseline["entries"] = [gate.build_entry(runs[:-1], baseline, p, d) for p, d in keys]
        gate.write_history(self.history, runs)
        gate.write_baseline(self.baseline_path, baseline)

    def gate(self, *extra):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = gate.main(["--history", self.history, "--baseline", self.baseline_path, *extra])
        return code, out.getvalue() + err.getvalue()

    def runs(self):
        return gate.read_history(self.history)

    def baseline(self):
        with open(self.baseline_path, encoding="utf-8") as f:
            return json.load(f)


class GateTest(unittest.TestCase):

    def test_clear_regression_fails_and_names_the_figure(self):
        files = Files(self, [run(1), run(2, traversalRatio=0.13), run(3, traversalRatio=0.125),
                             run(4, status="candidate", traversalRatio=0.064)])
        code, out = files.gate("--publish")
        self.assertEqual(code, 1, out)
        line = next(l for l in out.splitlines() if "traversalRatio" in l)
        self.assertIn("REGRESSED", line)
        self.assertIn("0.064", line)          # its value
        self.assertIn("baseline 0.128", line)  # the baseline: the median of 0.128, 0.13, 0.125
        self.assertIn("band 10.0 %", line)     # the floor: the spread is 3.9 %
        self.assertIn("verdict FAIL", out)
        self.assertEqual(files.runs()[-1]["status"], "candidate")  # not published

    def test_noise_within_band_passes_and_publishes(self):
        files = Files(self, [run(1), run(2, traversalRatio=0.10), run(3, traversalRatio=0.15),
                             run(4, status="candidate", traversalRatio=0.092, checkpointRatio=0.62)],
                      min_runs=3)
        # Spread 2 × MAD 0.022 / 0.128 = 34 % sets traversalRatio's band; 0.092 is inside it.
        code, out = files.gate("--publish")
        self.assertEqual(code, 0, out)
        self.assertIn("verdict PASS", out)
        self.assertRegex(out, r"ok +traversalRatio = 0.092; baseline 0.128, band 34.4 %")
        runs = files.runs()
        self.assertEqual(runs[-1]["status"], "published")
        entry = files.baseline()["entries"][0]
        self.assertEqual(entry["runIds"], ["run-2", "run-3", "run-4"])  # the last N = 3
        self.assertEqual(gate.cross_check(files.baseline(), runs), [])

    def test_missing_figure_is_reported_missing_not_a_pass_or_zero(self):
        files = Files(self, [run(1), run(2),
                             run(3, status="candidate",
                                 checkpointRatio={"value": None, "reason": "not selected (--only traversal)"}),
                             ])
        code, out = files.gate()
        self.assertEqual(code, 1, out)
        line = next(l for l in out.splitlines() if "checkpointRatio" in l)
        self.assertIn("MISSING", line)
        self.assertIn("not measured (not selected (--only traversal))", line)
        self.assertNotIn("= 0", line)
        files = Files(self, [run(1), run(2), run(3, status="candidate", checkpointRatio=None)])
        code, out = files.gate()
        self.assertEqual(code, 1, out)
        self.assertIn("MISSING    checkpointRatio = absent", out)

    def test_other_machine_is_not_compared(self):
        files = Files(self, [run(1), run(2), run(3, status="candidate", digest="ffffffffffff", traversalRatio=0.01)])
        code, out = files.gate("--publish")
        self.assertEqual(code, 0, out)
        self.assertIn("no baseline for this machine and profile", out)
        self.assertNotIn("REGRESSED", out)
        self.assertIn("NEW        traversalRatio = 0.01 (no baseline yet; not compared)", out)
        entries = files.baseline()["entries"]
        self.assertEqual(sorted(e["environmentDigest"] for e in entries), ["1793dcedab31", "ffffffffffff"])
        other = next(e for e in entries if e["environmentDigest"] == "ffffffffffff")
        self.assertEqual(other["runIds"], ["run-3"])
        mine = next(e for e in entries if e["environmentDigest"] == MACHINE)
        self.assertEqual(mine["runIds"], ["run-1", "run-2"])  # untouched by the other machine's run

    def test_other_profile_is_not_compared(self):
        files = Files(self, [run(1), run(2), run(3, status="candidate", profile="quick", traversalRatio=0.01)])
        code, out = files.gate()
        self.assertEqual(code, 0, out)
        self.assertIn("no baseline for this machine and profile", out)

    def test_dirty_and_partial_runs_are_never_published(self):
        for kwargs, reason in (({"dirty": True}, "uncommitted changes"), ({"partial": True}, "partial")):
            files = Files(self, [run(1), run(2, status="candidate", **kwargs)])
            code, out = files.gate("--publish")
            self.assertEqual(code, 1, out)
            self.assertIn(reason, out)
            self.assertEqual(files.runs()[-1]["status"], "candidate")

    def test_report_only_prints_but_does_not_enforce(self):
        files = Files(self, [run(1), run(2, status="candidate", traversalRatio=0.01)])
        code, out = files.gate("--report-only")
        self.assertEqual(code, 0, out)
        self.assertIn("REGRESSED", out)
        self.assertIn("verdict FAIL", out)
        self.assertIn("not enforced", out)
        self.assertEqual(files.runs()[-1]["status"], "candidate")

    def test_new_figure_is_listed_not_compared(self):
        files = Files(self, [run(1), run(2, status="candidate", loadRatio=0.003)])
        code, out = files.gate()
        self.assertEqual(code, 0, out)
        self.assertIn("NEW        loadRatio", out)

    def test_tampered_baseline_is_refused(self):
        files = Files(self, [run(1), run(2), run(3, status="candidate")])
        baseline = files.baseline()
        baseline["entries"][0]["figures"]["traversalRatio"]["median"] = 0.2
        gate.write_baseline(files.baseline_path, baseline)
        code, out = files.gate()
        self.assertEqual(code, 2, out)
        self.assertIn("traversalRatio median is 0.2, but the named runs give 0.128", out)
        baseline["entries"][0]["runIds"].append("run-3")  # a candidate
        baseline["entries"][0]["figures"]["traversalRatio"]["median"] = 0.128
        gate.write_baseline(files.baseline_path, baseline)
        code, out = files.gate("--check-baseline")
        self.assertEqual(code, 2, out)
        self.assertIn("names run run-3, which is not published", out)

    def test_impossible_ratio_not_publishable(self):
        # One producer of single elements cannot pass its fdatasync ceiling: 5.0 means the ceiling
        # itself was measured while the disk was disturbed.
        files = Files(self, [run(1, status="candidate", durableWrites1ProducerRatio=5.0)])
        code, out = files.gate("--publish")
        self.assertEqual(code, 1, out)
        self.assertIn("durableWrites1ProducerRatio", out)
        self.assertIn("physical bound", out)
        self.assertEqual(files.runs()[-1]["status"], "candidate")

    def test_baseline_of_fewer_than_min_runs_does_not_refuse(self):
        # The committed case: one contended run is the whole baseline. Until the entry holds
        # minRuns published runs a drop is reported, not enforced.
        files = Files(self, [run(1, durableWrites1ProducerRatio=1.2), run(2, status="candidate",
                                                                         durableWrites1ProducerRatio=0.95)],
                      min_runs=3)
        code, out = files.gate("--publish")
        self.assertEqual(code, 0, out)
        self.assertIn("PROVISIONAL", out)
        self.assertEqual(files.runs()[-1]["status"], "published")

    def test_baseline_of_min_runs_refuses(self):
        files = Files(self, [run(1), run(2), run(3), run(4, status="candidate", traversalRatio=0.05)], min_runs=3)
        code, out = files.gate("--publish")
        self.assertEqual(code, 1, out)
        self.assertIn("REGRESSED  traversalRatio", out)

    def test_cross_check_requires_last_n_published(self):
        runs = [run(1, traversalRatio=0.05), run(2, traversalRatio=0.13), run(3, traversalRatio=0.13),
                run(4, traversalRatio=0.13), run(5, status="candidate", traversalRatio=0.05)]
        files = Files(self, runs)
        honest = files.baseline()
        self.assertEqual(honest["entries"][0]["runIds"], ["run-2", "run-3", "run-4"])

        def check(baseline, expected):
            self.assertTrue(any(expected in p for p in gate.cross_check(baseline, runs)),
                            (expected, gate.cross_check(baseline, runs)))
            gate.write_baseline(files.baseline_path, baseline)
            code, out = files.gate("--check-baseline")
            self.assertEqual(code, 2, out)

        duplicated = json.loads(json.dumps(honest))
        duplicated["entries"][0] = gate.build_entry(runs[:1], honest, "full", MACHINE)
        duplicated["entries"][0]["runIds"] = ["run-1", "run-1", "run-1"]
        duplicated["entries"][0]["figures"] = gate.summarise([runs[0]] * 3, honest)
        check(duplicated, "names run run-1 twice")
        cherry = json.loads(json.dumps(honest))
        cherry["entries"][0] = gate.build_entry(runs[:1], honest, "full", MACHINE)
        check(cherry, "does not name the last 3 published runs: expected run-2, run-3, run-4")
        shadow = json.loads(json.dumps(honest))
        shadow["entries"].insert(0, cherry["entries"][0])
        check(shadow, f"two entries for full/{MACHINE}")
        orphan = json.loads(json.dumps(honest))
        orphan["entries"].append({"profile": "quick", "environmentDigest": MACHINE, "runIds": [], "figures": {}})
        check(orphan, "no published run")

    def test_gradual_regression_is_caught(self):
        # Each release 10 % below the last: the band of the last N runs widens with every accepted
        # step, so only a fixed anchor (the entry's first minRuns published runs) can stop it.
        files = Files(self, [run(1, status="candidate", traversalRatio=1.0)], n=5, floor=0.2, min_runs=3)
        self.assertEqual(files.gate("--publish")[0], 0)
        value, published = 1.0, [1.0]
        for n in range(2, 40):
            value *= 0.9
            with open(files.history, "a", encoding="utf-8") as f:
                f.write(json.dumps(run(n, status="candidate", traversalRatio=value)) + "\n")
            code, out = files.gate("--publish")
            if code != 0:
                self.assertEqual(code, 1, out)
                self.assertIn("REGRESSED  traversalRatio", out)
                break
            published.append(value)
        else:
            self.fail(f"a 10 % drop per release was published 38 times, down to {value:.3g}")
        self.assertGreaterEqual(min(published), 0.7, published)

    def test_band_capped(self):
        files = Files(self, [run(1, traversalRatio=1.0), run(2, traversalRatio=0.01),
                             run(3, status="candidate", traversalRatio=0.0)])
        code, out = files.gate()
        self.assertEqual(code, 1, out)
        self.assertIn("REGRESSED  traversalRatio", out)
        self.assertLessEqual(gate.band_of([1.0, 0.01], 0.2), gate.BAND_CAP)
        self.assertLess(gate.BAND_CAP, 1)

    def test_rebuild_baseline_matches_the_gate(self):
        files = Files(self, [run(1), run(2), run(3, status="candidate")])
        stale = files.baseline()
        del stale["entries"][0]["anchor"]
        gate.write_baseline(files.baseline_path, stale)
        self.assertEqual(files.gate("--check-baseline")[0], 2)
        code, out = files.gate("--rebuild-baseline")
        self.assertEqual(code, 0, out)
        self.assertEqual(files.gate("--check-baseline")[0], 0)
        self.assertEqual(files.baseline()["entries"][0]["anchor"]["runIds"], ["run-1"])

    def test_no_baseline_is_not_silent_pass(self):
        # A first run of a machine starts its baseline only if it is complete.
        files = Files(self, [run(1), run(2, status="candidate", digest="bbbbbbbbbbbb")])
        code, out = files.gate("--publish")
        self.assertEqual(code, 0, out)
        self.assertIn("no baseline for this machine and profile", out)
        self.assertEqual(files.baseline()["entries"][1]["environmentDigest"], "bbbbbbbbbbbb")

    def test_null_digest_refused(self):
        files = Files(self, [run(1), run(2, status="candidate", digest=None)])
        code, out = files.gate("--publish")
        self.assertEqual(code, 2, out)
        self.assertIn("environmentDigest", out)
        self.assertEqual(files.runs()[-1]["status"], "candidate")

    def test_missing_profile_refused(self):
        candidate = run(2, status="candidate")
        del candidate["profile"]
        files = Files(self, [run(1), candidate])
        code, out = files.gate("--publish")
        self.assertEqual(code, 2, out)
        self.assertIn("profile", out)
        self.assertNotIn("Traceback", out)

    def test_all_ratios_missing_not_publishable(self):
        nulls = {k: {"value": None, "reason": "not measured"} for k in RATIOS}
        files = Files(self, [run(1, status="candidate", **nulls)])
        code, out = files.gate("--publish")
        self.assertEqual(code, 1, out)
        self.assertIn("not publishable", out.lower())
        self.assertEqual(files.runs()[-1]["status"], "candidate")
        partly = dict(nulls)
        del partly["traversalRatio"]
        files = Files(self, [run(1, status="candidate", **partly)])
        code, out = files.gate("--publish")
        self.assertEqual(code, 1, out)
        self.assertIn("checkpointRatio", out)
        empty = run(1, status="candidate")
        empty["headline"] = {}
        files = Files(self, [empty])
        self.assertEqual(files.gate("--publish")[0], 1)

    def test_baseline_defaults_beside_history(self):
        # quiver-bench --record --history PATH passes no --baseline: the gate must not move the
        # source tree's baseline for a history kept elsewhere.
        files = Files(self, [run(1), run(2), run(3, status="candidate")])
        sentinel = os.path.join(files.dir, "sentinel-baseline.json")
        with open(sentinel, "w", encoding="utf-8") as f:
            f.write("sentinel\n")
        before = files.baseline()
        saved = gate.DEFAULT_BASELINE
        gate.DEFAULT_BASELINE = sentinel
        self.addCleanup(setattr, gate, "DEFAULT_BASELINE", saved)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = gate.main(["--history", files.history, "--publish"])
        self.assertEqual(code, 0)
        with open(sentinel, encoding="utf-8") as f:
            self.assertEqual(f.read(), "sentinel\n")
        self.assertNotEqual(files.baseline(), before)
        self.assertEqual(files.baseline()["entries"][0]["runIds"], ["run-1", "run-2", "run-3"])

    def test_torn_last_line_reported_and_recoverable(self):
        files = Files(self, [run(1), run(2), run(3, status="candidate")])
        with open(files.history, "a", encoding="utf-8") as f:
            f.write('{"runId": "x", "status": "cand')  # an append interrupted by a crash
        code, out = files.gate("--report-only", "--run", "run-3")
        self.assertEqual(code, 0, out)
        self.assertIn("line 4 is torn", out)
        self.assertIn("verdict PASS", out)
        code, out = files.gate("--publish", "--run", "run-3")
        self.assertEqual(code, 0, out)
        with open(files.history, encoding="utf-8") as f:
            text = f.read()
        self.assertNotIn('"cand\n', text.replace('"candidate"', ""))
        self.assertTrue(text.endswith("\n"))
        self.assertEqual([r["runId"] for r in files.runs()], ["run-1", "run-2", "run-3"])
        torn_inside = Files(self, [run(1), run(2, status="candidate")])
        with open(torn_inside.history, "a", encoding="utf-8") as f:
            f.write('{"runId": "x"\n' + json.dumps(run(3, status="candidate")) + "\n")
        code, out = torn_inside.gate()
        self.assertEqual(code, 2, out)  # not the last line: damage, not an interrupted append
        self.assertIn("history.jsonl:3: not valid JSON", out)

    def test_publish_keeps_concurrent_append(self):
        files = Files(self, [run(1), run(2), run(3, status="candidate")])
        original = gate.write_history

        def racing_write(path, runs):
            with open(path, "a", encoding="utf-8") as f:  # another --record, after the gate read
                f.write(json.dumps(run(4, status="candidate")) + "\n")
            return original(path, runs)

        gate.write_history = racing_write
        self.addCleanup(setattr, gate, "write_history", original)
        code, out = files.gate("--publish", "--run", "run-3")
        self.assertEqual(code, 0, out)
        runs = files.runs()
        self.assertEqual([r["runId"] for r in runs], ["run-1", "run-2", "run-3", "run-4"])
        self.assertEqual([r["status"] for r in runs][2:], ["published", "candidate"])
        self.assertEqual(gate.cross_check(files.baseline(), runs), [])

    def test_report_only_on_broken_files(self):
        # CI's report-only gate prints what is wrong with the record files but never fails.
        files = Files(self, [run(1), run(2), run(3, status="candidate")])
        with open(files.history, "a", encoding="utf-8") as f:
            f.write("{broken\n" + json.dumps(run(4, status="candidate")) + "\n")
        code, out = files.gate("--report-only")
        self.assertEqual(code, 0, out)
        self.assertIn("not valid JSON", out)
        self.assertIn("not enforced", out)
        self.assertEqual(files.gate()[0], 2)  # enforced, the same files are an error

    def test_floor_out_of_range_refused(self):
        files = Files(self, [run(1), run(2), run(3, status="candidate")])
        for bad in (1.5, 1, -0.1, "0.2"):
            baseline = files.baseline()
            baseline["noiseFloor"]["traversalRatio"] = bad
            gate.write_baseline(files.baseline_path, baseline)
            code, out = files.gate()
            self.assertEqual(code, 2, (bad, out))
            self.assertIn("noiseFloor", out)

    def test_unknown_floor_key_refused(self):
        files = Files(self, [run(1), run(2), run(3, status="candidate")])
        baseline = files.baseline()
        baseline["noiseFloor"]["durableWrite1ProducerRatio"] = 0.3  # misspelt
        gate.write_baseline(files.baseline_path, baseline)
        code, out = files.gate()
        self.assertEqual(code, 2, out)
        self.assertIn("durableWrite1ProducerRatio", out)

    def test_non_object_figure_is_usage_error(self):
        files = Files(self, [run(1), run(2), run(3, status="candidate")])
        baseline = files.baseline()
        baseline["entries"][0]["figures"]["traversalRatio"] = 0.128
        gate.write_baseline(files.baseline_path, baseline)
        code, out = files.gate()
        self.assertEqual(code, 2, out)
        self.assertIn("entry 0", out)
        self.assertNotIn("Traceback", out)

    def test_only_newest_candidate_publishable(self):
        # run-1 was recorded before runs 2 and 3 were published: publishing it now would mark it
        # published without its ever entering the baseline ("last N" is file order).
        files = Files(self, [run(1, status="candidate"), run(2), run(3), run(4, status="candidate")])
        code, out = files.gate("--run", "run-1", "--publish")
        self.assertEqual(code, 2, out)
        self.assertIn("older than run-3", out)
        self.assertEqual(files.runs()[0]["status"], "candidate")
        self.assertEqual(files.gate("--run", "run-4", "--publish")[0], 0)

    def test_cross_check_refuses_unpublishable_published_run(self):
        for kwargs in ({"dirty": True}, {"partial": True}, {"dirty": None}):
            runs = [run(1), run(2, **kwargs), run(3, status="candidate")]
            files = Files(self, runs)
            problems = gate.cross_check(files.baseline(), runs)
            self.assertTrue(any("run-2 is published but" in p for p in problems), (kwargs, problems))
            self.assertEqual(files.gate("--check-baseline")[0], 2)

    # The ceiling-rose rule: a rate ratio whose ceiling rose while the figure itself held.

    def checkpoint_row(self, files, run_id=None):
        runs = files.runs()
        candidate = runs[-1] if run_id is None else next(r for r in runs if r["runId"] == run_id)
        result = gate.evaluate(candidate, gate.read_baseline(files.baseline_path), runs)
        return next(r for r in result["rows"] if r["figure"] == "checkpointRatio"), result

    def after_three_at_720(self, absolute, ceiling):
        """Three published runs writing 720 MB/s against a 710 MB/s ceiling, then a candidate
        writing `absolute` against `ceiling`: the files and the candidate's checkpointRatio row."""
        published = [run(n, rates={"checkpointRatio": (720, 710)}) for n in (1, 2, 3)]
        files = Files(self, published + [run(4, status="candidate", rates={"checkpointRatio": (absolute, ceiling)})],
                      floor=0.2, min_runs=3)
        return files, self.checkpoint_row(files)[0]

    def test_rate_table_is_the_documented_one(self):
        self.assertEqual(gate.ABSOLUTE_FIGURES, ABSOLUTES)

    def test_ceiling_rose_absolute_held_passes(self):
        # The development machine's disk: the write ceiling went from ~710 to ~2,414 MB/s (3.4×);
        # the CPU-bound checkpoint still wrote ~730 MB/s, so its ratio fell 3× without a regression.
        published = [run(1, rates={"checkpointRatio": (790, 694)}), run(2, rates={"checkpointRatio": (724, 710)}),
                     run(3, rates={"checkpointRatio": (778, 925)})]
        files = Files(self, published + [run(4, status="candidate", rates={"checkpointRatio": (730, 2414)})],
                      floor=0.2, min_runs=3)
        row, result = self.checkpoint_row(files)
        self.assertEqual(row["result"], "ceiling-rose")
        self.assertEqual(result["verdict"], "pass")
        code, out = files.gate("--publish")
        self.assertEqual(code, 0, out)
        self.assertIn("verdict PASS", out)
        line = next(l for l in out.splitlines() if "checkpointRatio" in l)
        self.assertIn("CEILING-ROSE", line)
        self.assertIn("ceiling rose", line)
        self.assertIn("2414", line)       # the candidate's ceiling
        self.assertIn("710", line)        # the baseline runs' median ceiling
        self.assertIn("3.4×", line)       # the factor
        self.assertIn("checkpointMegabytesPerSecond = 730", line)
        self.assertIn("median 778", line)  # the absolute median of the named runs
        self.assertEqual(files.runs()[-1]["status"], "published")
        self.assertEqual(gate.cross_check(files.baseline(), files.runs()), [])

    def test_ceiling_rose_but_absolute_fell_regressed(self):
        files, row = self.after_three_at_720(500, 2414)  # 500 < 720 × 0.8
        self.assertEqual(row["result"], "regressed")
        code, out = files.gate()
        self.assertEqual(code, 1, out)
        self.assertIn("REGRESSED  checkpointRatio", out)
        # The same against last runs faster than the anchor (500 MB/s): the last runs' bar decides.
        published = [run(n, rates={"checkpointRatio": (720, 710)}) for n in (1, 2, 3)]
        history = [run(n, rates={"checkpointRatio": (500, 500)}) for n in (1, 2, 3)] + published
        history = [dict(r, runId=f"run-{n}") for n, r in enumerate(history, 1)]
        files = Files(self, history + [run(7, status="candidate", rates={"checkpointRatio": (500, 2414)})],
                      floor=0.2, min_runs=3)
        row, _ = self.checkpoint_row(files)
        self.assertEqual(row["result"], "regressed")

    def test_ceiling_within_band_regressed(self):
        # 850 < 710 × 1.2: not a ceiling that rose, so the ratio rule stands, although the absolute
        # 612 is inside its band (>= 720 × 0.8).
        files, row = self.after_three_at_720(612, 850)
        self.assertEqual(row["result"], "regressed")
        self.assertEqual(files.gate()[0], 1)

    def test_ceiling_rose_named_run_without_absolute_regressed(self):
        for gap in ({"checkpointMegabytesPerSecond": None},                                  # no absolute
                    {"checkpointRatio": {"value": None, "reason": "not measured"}},           # null ratio
                    {"checkpointRatio": 0.0, "checkpointMegabytesPerSecond": 720}):            # zero ratio
            published = [run(1, rates={"checkpointRatio": (720, 710)}),
                         run(2, rates={"checkpointRatio": (720, 710)}, **gap),
                         run(3, rates={"checkpointRatio": (720, 710)})]
            files = Files(self, published + [run(4, status="candidate", rates={"checkpointRatio": (730, 2414)})],
                          floor=0.2, min_runs=2)
            row, _ = self.checkpoint_row(files)
            self.assertEqual(row["result"], "regressed", gap)
            code, out = files.gate()
            self.assertEqual(code, 1, (gap, out))

    def test_ceiling_rose_absolute_below_anchor_regressed(self):
        # The anchor (runs 1-3) wrote 1,000 MB/s, the last three 800 at an equal ratio. 780 holds
        # against the last three (>= 640) but not against the anchor (< 800): a slow drift of the
        # absolute figure is still caught. 820 holds against both.
        history = [run(n, rates={"checkpointRatio": (1000, 1000)}) for n in (1, 2, 3)]
        history += [run(n, rates={"checkpointRatio": (800, 800)}) for n in (4, 5, 6)]
        files = Files(self, history + [run(7, status="candidate", rates={"checkpointRatio": (780, 2600)})],
                      floor=0.2, min_runs=3)
        self.assertEqual(files.baseline()["entries"][0]["anchor"]["runIds"], ["run-1", "run-2", "run-3"])
        row, _ = self.checkpoint_row(files)
        self.assertEqual(row["result"], "regressed")
        self.assertEqual(files.gate()[0], 1)
        files = Files(self, history + [run(7, status="candidate", rates={"checkpointRatio": (820, 2600)})],
                      floor=0.2, min_runs=3)
        row, _ = self.checkpoint_row(files)
        self.assertEqual(row["result"], "ceiling-rose")
        self.assertEqual(files.gate()[0], 0)

    def test_ratio_outside_the_table_never_ceiling_rose(self):
        self.assertNotIn("bytesPerEdgeDegree10Ratio", gate.ABSOLUTE_FIGURES)
        history = [run(n, bytesPerEdgeDegree10Ratio=0.65, bytesPerEdgeDegree10=48.97) for n in (1, 2, 3)]
        files = Files(self, history + [run(4, status="candidate", bytesPerEdgeDegree10Ratio=0.2,
                                           bytesPerEdgeDegree10=48.97)], floor=0.2, min_runs=3)
        code, out = files.gate()
        self.assertEqual(code, 1, out)
        self.assertIn("REGRESSED  bytesPerEdgeDegree10Ratio", out)
        self.assertNotIn("CEILING-ROSE", out)

    def test_provisional_ceiling_rose_is_ceiling_rose(self):
        # Fewer than minRuns runs: a drop is not enforced either way; the line says why it fell.
        files = Files(self, [run(1, rates={"checkpointRatio": (720, 710)}),
                             run(2, status="candidate", rates={"checkpointRatio": (730, 2414)})], min_runs=3)
        row, _ = self.checkpoint_row(files)
        self.assertEqual(row["result"], "ceiling-rose")
        code, out = files.gate()
        self.assertEqual(code, 0, out)
        self.assertIn("CEILING-ROSE checkpointRatio", out)
        # The figure fell too: provisional as before, not ceiling-rose.
        files = Files(self, [run(1, rates={"checkpointRatio": (720, 710)}),
                             run(2, status="candidate", rates={"checkpointRatio": (300, 2414)})], min_runs=3)
        row, _ = self.checkpoint_row(files)
        self.assertEqual(row["result"], "provisional")
        self.assertEqual(files.gate()[0], 0)

    def test_ceiling_fell_relaxes_nothing(self):
        # A slower ceiling raises the ratio: a figure that fell less than its ceiling passes the
        # ratio rule, one that fell more fails it; the ceiling-rose rule never enters.
        _, row = self.after_three_at_720(200, 355)
        self.assertEqual(row["result"], "regressed")

    def test_band_is_the_spread_with_a_floor(self):
        self.assertEqual(gate.band_of([1.0, 1.0, 1.0], 0.2), 0.2)
        self.assertAlmostEqual(gate.band_of([0.8, 1.0, 1.2], 0.2), 0.4)
        self.assertEqual(gate.median([3, 1, 2]), 2)
        self.assertEqual(gate.median([4, 1, 2, 3]), 2.5)


if __name__ == "__main__":
    unittest.main()

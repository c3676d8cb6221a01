#!/usr/bin/python3
"""Tests of scripts/render-capacity-doc (ctest: capacity.render_unittest, label bench).

Run: /usr/bin/python3 scripts/test_render_capacity_doc.py [-v]

Every test works on copies in a temporary directory: the committed page, the
sample report bench/results/sample-quick-report.json, and reports and
history files derived from it. Nothing in the source tree is written.
"""
import contextlib
import copy
import itertools
import importlib.machinery
import importlib.util
import io
import json
import math
import os
import shutil
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, ".."))
SAMPLE = os.path.join(REPO, "bench", "results", "sample-quick-report.json")
PAGE = os.path.join(REPO, "docs", "capacity-and-performance.md")


def load_renderer():
    loader = importlib.machinery.SourceFileLoader("render_capacity_doc",
                                                  os.path.join(HERE, "render-capacity-doc"))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


rcd = load_renderer()


def sample():
    with open(SAMPLE, encoding="utf-8") as f:
        return json.load(f)


def shape(vertices, degree, targets="uniform"):
    label = f"{vertices}x{degree}" + ("-power-law" if targets == "power-law" else "")
    return {"label": label, "vertices": vertices, "outDegree": degree, "edges": vertices * degree,
            "targets": targets}


def full_profile_report():
    """The sample with the full profile's shapes (bench/capacity/profile.cc FullProfile)."""
    r = sample()
    r["profile"] = "full"
    mem_row = {(m["shape"]["outDegree"], m["shape"]["targets"]): m for m in r["memory"]}
    r["memory"] = []
    for v, d, t in ((2_000_000, 2, "uniform"), (1_000_000, 20, "uniform"),
                    (2_000_000, 10, "power-law"), (10_000_000, 10, "uniform")):
        row = copy.deepcopy(mem_row[(d, t)])
        row["shape"] = shape(v, d, t)
        r["memory"].append(row)
    cp, ld = r["checkpoint"][-1], r["load"][-1]
    r["checkpoint"], r["load"] = [], []
    for v in (334_000, 1_334_000, 6_667_000):
        c, l = copy.deepcopy(cp), copy.deepcopy(ld)
        c["shape"] = l["shape"] = shape(v, 2)
        c["elements"] = 3 * v
        l["elements"] = 3 * v + 311
        r["checkpoint"].append(c)
        r["load"].append(l)
    tr = {(t["threads"], t["shape"]["targets"]): t for t in r["traversal"]}
    sw = {(s["threads"], s["shape"]["targets"]): s for s in r["ceilings"]["csrSweep"]}
    r["traversal"], r["ceilings"]["csrSweep"] = [], []
    for v, t in ((500_000, "uniform"), (2_000_000, "uniform"), (2_000_000, "power-law"),
                 (10_000_000, "uniform")):
        for threads in (1, 2):
            row, ceiling = copy.deepcopy(tr[(threads, t)]), copy.deepcopy(sw[(threads, t)])
            row["shape"] = ceiling["shape"] = shape(v, 10, t)
            row["passes"] = ceiling["passes"] = 5
            row["efficiency"]["ceiling"] = f"/ceilings/csrSweep/{len(r['ceilings']['csrSweep'])}/bestEdgesPerSecond"
            r["traversal"].append(row)
            r["ceilings"]["csrSweep"].append(ceiling)
    return r


_run_numbers = itertools.count(1)


def history_line(report, status="published", **headline_overrides):
    headline = rcd.headline_of(report)
    headline.update(headline_overrides)
    for key in [k for k, v in headline.items() if v is None]:
        del headline[key]
    return {"runId": f"run-{next(_run_numbers)}", "status": status,
            # The gate publishes clean runs only (the sample report's tree was dirty).
            "commit": report["source"]["commit"], "dirty": report["source"]["dirty"] and status != "published",
            "dateUtc": report["generatedAtUtc"], "profile": report["profile"],
            "partial": report["partial"], "schemaVersion": report["schemaVersion"],
            "environmentDigest": "0123456789ab", "headline": headline}


class Workspace:
    """A temporary directory with a copy of the page, and helpers to run the renderer in it."""

    def __init__(self, test):
        self.dir = tempfile.mkdtemp(prefix="render-capacity-doc-test-")
        test.addCleanup(shutil.rmtree, self.dir)
        self.page = os.path.join(self.dir, "capacity-and-performance.md")
        # The committed page with every section emptied: a render always changes it, whatever
        # report the committed page was last rendered from.
        with open(PAGE, encoding="utf-8") as f:
            pieces = rcd.split_page(f.read(), PAGE)
        with open(self.page, "w", encoding="utf-8") as f:
            f.write("".join(piece if name is None else "\n\nstale\n\n" for piece, name in pieces))
        self.svg_dir = os.path.join(self.dir, "capacity")
        self.history = os.path.join(self.dir, "history.jsonl")
        self.report = os.path.join(self.dir, "report.json")
        self.baseline = os.path.join(self.dir, "baseline.json")
        self.write_baseline()
        self.write_report(sample())

    def write_baseline(self, baseline=None, runs=()):
        """The given baseline, or the gate's own for the published runs among `runs`."""
        self.custom_baseline = baseline is not None
        if baseline is None:
            baseline = {"runs": 3, "minRuns": 1, "noiseFloor": {"default": 0.2}, "entries": []}
            pairs = sorted({(r.get("profile"), r.get("environmentDigest")) for r in runs
                            if r.get("status") == "published"}, key=str)
            baseline["entries"] = [rcd.gate.build_entry(list(runs), baseline, p, d) for p, d in pairs]
        with open(self.baseline, "w", encoding="utf-8") as f:
            json.dump(baseline, f)

    def write_report(self, report=None, text=None):
        with open(self.report, "w", encoding="utf-8") as f:
            f.write(text if text is not None else json.dumps(report, indent=1))

    def write_history(self, lines):
        with open(self.history, "w", encoding="utf-8") as f:
            for line in lines:
                f.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
        if not self.custom_baseline and all(isinstance(line, dict) for line in lines):
            self.write_baseline(runs=lines)

    def read_page(self):
        with open(self.page, encoding="utf-8") as f:
            return f.read()

    def run(self, *extra):
        """(exit code, stderr) of the renderer on this workspace."""
        argv = ["--report", self.report, "--page", self.page, "--history", self.history,
                "--baseline", self.baseline, "--svg-dir", self.svg_dir, *extra]
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = rcd.main(argv)
        return code, err.getvalue()


class RefusalTest(unittest.TestCase):

    def test_unknown_major_refused(self):
        ws = Workspace(self)
        before = ws.read_page()
        report = sample()
        report["schemaVersion"] = 2
        ws.write_report(report)
        code, err = ws.run()
        self.assertEqual(code, 1)
        self.assertIn("unknown schemaVersion major 2", err)
        self.assertEqual(ws.read_page(), before)

    def test_unknown_major_in_history_refused(self):
        ws = Workspace(self)
        line = history_line(sample())
        line["schemaVersion"] = 7
        ws.write_history([line])
        code, err = ws.run()
        self.assertEqual(code, 1)
        self.assertIn("unknown schemaVersion major 7", err)

    def test_schema_violation_refused(self):
        ws = Workspace(self)
        report = sample()
        report["memory"][0]["bytesPerEdge"] = 0  # zero is never "unknown"
        ws.write_report(report)
        code, err = ws.run()
        self.assertEqual(code, 1)
        self.assertIn("does not validate", err)
        self.assertIn("/memory/0/bytesPerEdge", err)

    def test_dangling_ceiling_pointer_refused(self):
        ws = Workspace(self)
        report = sample()
        report["traversal"][0]["efficiency"]["ceiling"] = "/ceilings/csrSweep/99/bestEdgesPerSecond"
        ws.write_report(report)
        code, err = ws.run()
        self.assertEqual(code, 1)
        self.assertIn("does not resolve", err)

    def test_missing_closing_marker_refused(self):
        ws = Workspace(self)
        with open(ws.page, "w", encoding="utf-8") as f:
            f.write(ws.read_page().replace("<!-- /capacity:latency -->", ""))
        before = ws.read_page()
        code, err = ws.run()
        self.assertEqual(code, 1)
        self.assertIn("missing closing marker <!-- /capacity:latency -->", err)
        self.assertEqual(ws.read_page(), before)

    def test_missing_section_refused(self):
        ws = Workspace(self)
        page = ws.read_page().replace("<!-- capacity:history -->\n", "").replace("<!-- /capacity:history -->", "")
        with open(ws.page, "w", encoding="utf-8") as f:
            f.write(page)
        code, err = ws.run()
        self.assertEqual(code, 1)
        self.assertIn("missing opening marker <!-- capacity:history -->", err)
        self.assertIn("missing closing marker <!-- /capacity:history -->", err)

    def test_misordered_and_unknown_markers_refused(self):
        with self.assertRaisesRegex(rcd.RenderError, "closes before it opens"):
            rcd.split_page("".join(f"<!-- /capacity:{n} --><!-- capacity:{n} -->" for n in rcd.SECTIONS))
        page = "".join(f"<!-- capacity:{n} --><!-- /capacity:{n} -->" for n in rcd.SECTIONS)
        with self.assertRaisesRegex(rcd.RenderError, "unknown section 'bogus'"):
            rcd.split_page(page + "<!-- capacity:bogus --><!-- /capacity:bogus -->")
        with self.assertRaisesRegex(rcd.RenderError, "appears 2 times"):
            rcd.split_page(page + "<!-- capacity:memory --><!-- /capacity:memory -->")

    def test_nan_refused(self):
        ws = Workspace(self)
        text = json.dumps(sample(), indent=1).replace('"bytesPerEdge": 46.82556', '"bytesPerEdge": NaN', 1)
        self.assertIn("NaN", text)
        ws.write_report(text=text)
        code, err = ws.run()
        self.assertEqual(code, 1)
        self.assertIn("non-finite number at /memory/1/bytesPerEdge (NaN)", err)

    def test_infinity_and_overflow_refused(self):
        ws = Workspace(self)
        text = json.dumps(sample(), indent=1)
        text = text.replace('"latencyNs": 399.4115245', '"latencyNs": 1e999', 1)
        text = text.replace('"seconds": 0.23159089', '"seconds": -Infinity', 1)
        ws.write_report(text=text)
        code, err = ws.run()
        self.assertEqual(code, 1)
        self.assertIn("/ceilings/dependentLoad/latencyNs (inf)", err)
        self.assertIn("/ceilings/sequentialWrite/seconds (-Infinity)", err)

    def test_nan_in_history_refused(self):
        ws = Workspace(self)
        ws.write_history([json.dumps(history_line(sample())).replace('"bytesPerVertex": 48.16',
                                                                      '"bytesPerVertex": NaN')])
        code, err = ws.run()
        self.assertEqual(code, 1)
        self.assertIn("history.jsonl:1: non-finite number at /headline/bytesPerVertex", err)


class RenderTest(unittest.TestCase):

    def test_null_rendered_as_not_measured_with_reason(self):
        ws = Workspace(self)
        report = sample()
        report["memory"][1]["bytesPerEdge"] = {"value": None, "reason": "the allocator | was busy"}
        report["memory"][1]["efficiency"]["ratio"] = {"value": None, "reason": "the figure was not measured"}
        ws.write_report(report)
        self.assertEqual(ws.run()[0], 0)
        page = ws.read_page()
        self.assertIn("not measured (the allocator \\| was busy)", page)
        self.assertIn("not measured (the figure was not measured)", page)

    def test_partial_report_families_not_measured(self):
        ws = Workspace(self)
        report = sample()
        report["partial"] = True
        report["selectedFamilies"] = ["ceilings", "writes"]
        for family in ("memory", "checkpoint", "load", "traversal", "latency"):
            report[family] = {"value": None, "reason": "not selected (--only writes)"}
        ws.write_report(report)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        page = ws.read_page()
        self.assertIn("*Not measured (not selected (--only writes)).*", page)
        self.assertIn("**This report is partial**", page)
        self.assertFalse(os.path.exists(os.path.join(ws.svg_dir, "traversal.svg")))
        self.assertTrue(os.path.exists(os.path.join(ws.svg_dir, "writes.svg")))

    def test_prose_preserved_byte_for_byte(self):
        ws = Workspace(self)
        original = ws.read_page()
        self.assertEqual(ws.run()[0], 0)
        rendered = ws.read_page()
        self.assertNotEqual(rendered, original)
        self.assertNotIn("stale", rendered)
        self.assertEqual(rcd.prose_of(rendered), rcd.prose_of(original))
        with open(PAGE, encoding="utf-8") as f:
            self.assertEqual(rcd.prose_of(rendered), rcd.prose_of(f.read()))
        # Prose with CRLF line ends, trailing blanks, non-ASCII and marker-like text stays exact.
        odd = "".join(f"Prose \u00b5 \u2014 {n}  \r\n<!-- capacity:{n} -->old\r\nbody<!-- /capacity:{n} -->\r\n"
                      f"<!-- capacity {n} -->\t\r\n" for n in rcd.SECTIONS) + "tail without newline"
        with open(ws.page, "wb") as f:
            f.write(odd.encode("utf-8"))
        self.assertEqual(ws.run()[0], 0)
        with open(ws.page, "rb") as f:
            after = f.read().decode("utf-8")
        self.assertEqual(rcd.prose_of(after), rcd.prose_of(odd))
        self.assertTrue(after.endswith("tail without newline"))
        self.assertNotIn("old\r\nbody", after)

    def test_check_detects_change_and_is_idempotent(self):
        ws = Workspace(self)
        self.assertEqual(ws.run("--check")[0], 1)  # the sections are stale
        self.assertEqual(ws.run()[0], 0)
        rendered = ws.read_page()
        self.assertEqual(ws.run("--check"), (0, ""))
        self.assertEqual(ws.run()[0], 0)
        self.assertEqual(ws.read_page(), rendered)
        with open(ws.page, "w", encoding="utf-8") as f:
            f.write(rendered.replace("| durable | 1 | 1 |", "| durable | 1 | 2 |", 1))
        code, err = ws.run("--check")
        self.assertEqual(code, 1)
        self.assertIn("would change", err)
        with open(ws.page, "w", encoding="utf-8") as f:
            f.write(rendered)
        report = sample()
        report["writes"][0]["writesPerSecond"] = 999.0
        ws.write_report(report)
        code, err = ws.run("--check")
        self.assertEqual(code, 1)
        self.assertIn("the page cites the report report.json as", err)
        self.assertEqual(ws.read_page(), rendered)  # --check writes nothing
        os.remove(os.path.join(ws.svg_dir, "writes.svg"))
        ws.write_report(sample())
        code, err = ws.run("--check")
        self.assertEqual(code, 1)
        self.assertIn("writes.svg would change", err)

    def test_svgs_are_deterministic(self):
        ws1, ws2 = Workspace(self), Workspace(self)
        lines = [history_line(sample()), history_line(full_profile_report())]
        for ws in (ws1, ws2):
            ws.write_history(lines)
            self.assertEqual(ws.run()[0], 0)
        names = sorted(os.listdir(ws1.svg_dir))
        self.assertEqual(names, ["history.svg", "traversal.svg", "writes.svg"])
        for name in names:
            with open(os.path.join(ws1.svg_dir, name), "rb") as a, open(os.path.join(ws2.svg_dir, name), "rb") as b:
                data = a.read()
                self.assertEqual(data, b.read(), name)
            self.assertNotIn(b"<dc:date>", data)
        self.assertIn("](capacity/traversal.svg)", ws1.read_page())

    def test_full_profile_report_renders(self):
        ws = Workspace(self)
        ws.write_report(full_profile_report())
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        page = ws.read_page()
        section = page[page.index("<!-- capacity:comparison -->"):page.index("<!-- /capacity:comparison -->")]
        self.assertNotIn("not measured", section)  # every Fallen-8 shape has its row in the full profile
        self.assertIn("| 10,000,000 × 10 |", page)
        self.assertIn("20,001,000 elements", section)

    def test_number_formatting(self):
        self.assertEqual(rcd.rate(15789.689), "15,790")
        self.assertEqual(rcd.rate(245025192.26), "245 M")
        self.assertEqual(rcd.rate(3001704968.4), "3.00 G")
        self.assertEqual(rcd.ns(30.04), "30.0 ns")
        self.assertEqual(rcd.ns(7741.48), "7.74 µs")
        self.assertEqual(rcd.ns(1046.3e6), "1.05 s")
        self.assertEqual(rcd.ratio(0.0005997), "0.000600")
        self.assertEqual(rcd.ratio(7784.1), "7,784")
        self.assertEqual(rcd.binary_size(134217728), "128 MiB")


class HistoryTest(unittest.TestCase):

    def test_history_gap_is_a_gap_never_a_zero(self):
        ws = Workspace(self)
        quick = sample()
        lines = [
            history_line(quick),
            history_line(quick, traversalBestEdgesPerSecond={"value": None, "reason": "not selected (--only writes)"},
                         traversalRatio={"value": None, "reason": "the figure was not measured"}),
            history_line(quick, traversalBestEdgesPerSecond=None),  # an older line without the field
            history_line(quick),
        ]
        lines[1]["partial"] = True
        lines[1]["status"] = "candidate"  # a partial run is never published, but is listed
        ws.write_history(lines)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        runs = rcd.load_history(ws.history)
        xs, ys = rcd.history_series(runs, "traversalBestEdgesPerSecond", "quick", "0123456789ab")
        self.assertEqual(xs, [1, 3, 4])
        self.assertTrue(math.isnan(ys[1]))
        self.assertEqual(ys[0], quick["traversal"][3]["bestEdgesPerSecond"])
        self.assertNotIn(0, ys)
        page = ws.read_page()
        history = page[page.index("<!-- capacity:history -->"):page.index("<!-- /capacity:history -->")]
        rows = [line for line in history.splitlines() if line.startswith("| ") and line[2].isdigit()]
        self.assertEqual(len(rows), 4)
        self.assertIn("not measured (not selected (--only writes))", rows[1])
        self.assertIn("quick (partial)", rows[1])
        self.assertIn("| not recorded |", rows[2])
        self.assertIn("177 M (0.0573) at 5,000,000 edges", rows[0])
        self.assertIn("](capacity/history.svg)", history)

    def test_profiles_are_separate_series(self):
        runs = [history_line(sample()), history_line(full_profile_report()), history_line(sample())]
        self.assertEqual(rcd.history_series(runs, "bytesPerVertex", "quick", "0123456789ab")[0], [1, 3])
        self.assertEqual(rcd.history_series(runs, "bytesPerVertex", "full", "0123456789ab")[0], [2])

    def test_trend_series_split_by_machine(self):
        # Two published full runs of different machines: a machine change is not a trend, so
        # they are two series, never one connected line.
        a, b = history_line(full_profile_report()), history_line(full_profile_report())
        b["environmentDigest"] = "bbbbbbbbbbbb"
        b["headline"]["traversalBestEdgesPerSecond"] = 6.27e7
        runs = [a, b]
        self.assertEqual(rcd.history_groups(runs), [("full", "0123456789ab"), ("full", "bbbbbbbbbbbb")])
        self.assertEqual(rcd.history_series(runs, "traversalBestEdgesPerSecond", "full", "0123456789ab")[0], [1])
        xs, ys = rcd.history_series(runs, "traversalBestEdgesPerSecond", "full", "bbbbbbbbbbbb")
        self.assertEqual((xs, ys), ([2], [6.27e7]))

    def test_no_history_file(self):
        ws = Workspace(self)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        self.assertIn("No run recorded yet", ws.read_page())
        self.assertFalse(os.path.exists(os.path.join(ws.svg_dir, "history.svg")))


def utilisation_sample():
    """The sample with the utilisation objects of schema minor 1, hardware counters refused as a
    VM without a PMU refuses them."""
    r = sample()
    r["schemaMinor"] = 1
    refused = {"value": None, "reason": "perf_event_open failed: ENOENT (No such file or directory): the "
               "kernel exposes no hardware PMU for this event (typical of a VM without a virtual PMU)"}
    counters = {k: refused for k in ("cycles", "instructions", "l1dLoads", "l1dLoadMisses", "lastLevelLoads",
                                     "lastLevelLoadMisses", "dtlbLoadMisses", "instructionsPerCycle")}
    counters["servedFrom"] = {"l1": refused, "l2OrL3": refused, "dram": refused}
    counters["perfEventParanoid"] = "2"
    counters["method"] = "perf_event_open"
    for row in r["traversal"]:
        n = row["threads"]
        row["utilisation"] = {
            "cpu": {"windowSeconds": 0.5, "threads": [{"name": f"sweep {t}", "busyShare": 0.97} for t in range(n)],
                    "threadsAtLeast95PercentBusy": n, "processBusyCores": 0.98 * n, "method": "thread clocks"},
            "memoryBandwidth": {"necessaryBytes": 8 * (row["shape"]["edges"] + row["shape"]["vertices"] + 1),
                                "definition": "CSR bytes / best pass", "megabytesPerSecond": 9400.0,
                                "efficiency": {"ceiling": f"/ceilings/memoryBandwidth/{n - 1}/readMegabytesPerSecond",
                                               "definition": "used / read bandwidth", "ratio": 0.33}},
            "hardwareCounters": copy.deepcopy(counters)}
    for row in r["checkpoint"]:
        row["utilisation"] = {
            "cpu": {"windowSeconds": 0.1, "threads": [{"name": "quiver-bench", "busyShare": 0.99},
                                                      {"name": "committer", "busyShare": 0.4}],
                    "threadsAtLeast95PercentBusy": 1, "processBusyCores": 1.4, "method": "schedstat"},
            "hardwareCounters": copy.deepcopy(counters),
            "diskWrite": {"bytesWritten": 25_000_000, "seconds": 0.1, "megabytesPerSecond": 250.0,
                          "efficiency": {"ceiling": "/ceilings/sequentialWrite/megabytesPerSecond",
                                         "definition": "used / sequential write", "ratio": 0.5},
                          "method": "/proc/self/io"}}
    return r


def layout_sample():
    """The sample with schema minor 3's traversalLayout rows: its 1M-edge traversal rows, once per
    layout, each pointing at the same CSR ceiling."""
    r = sample()
    r["schemaMinor"] = 3
    r["traversalLayout"] = []
    for layout, ratio in (("randomInserts", 0.125), ("checkpointLoad", 0.375)):
        for t in r["traversal"]:
            if t["shape"]["edges"] != 1_000_000:
                continue
            row = copy.deepcopy(t)
            row["layout"] = layout
            row["efficiency"]["ratio"] = ratio
            r["traversalLayout"].append(row)
    return r


class TraversalLayoutTest(unittest.TestCase):

    def test_layout_rows_validate_and_render(self):
        ws = Workspace(self)
        ws.write_report(layout_sample())
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        page = ws.read_page()
        self.assertIn("Sweep right after load vs after random inserts", page)
        self.assertIn("| after random inserts |", page)
        self.assertIn("| right after load (Close + Open) |", page)
        self.assertIn("| 0.375", page)

    def test_compacted_rows_render_with_the_compaction_time(self):
        r = layout_sample()
        r["schemaMinor"] = 12
        for t in [x for x in r["traversalLayout"] if x["layout"] == "randomInserts"]:
            row = copy.deepcopy(t)
            row["layout"] = "compacted"
            row["efficiency"]["ratio"] = 0.3125
            row["compactSeconds"] = 0.25
            row["compactEntriesPerSecond"] = 8_000_000.0
            r["traversalLayout"].append(row)
        ws = Workspace(self)
        ws.write_report(r)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        page = ws.read_page()
        self.assertIn("| after random inserts + Compact() |", page)
        self.assertIn("| 0.312", page)
        self.assertIn("`Graph::Compact()` on the random-insert graph took", page)

    def test_layout_row_without_layout_refused(self):
        r = layout_sample()
        del r["traversalLayout"][0]["layout"]
        with self.assertRaisesRegex(rcd.RenderError, "/traversalLayout/0"):
            rcd.validate(r, os.path.join(REPO, "schemas", "capacity-report.schema.json"), "report")

    def test_unknown_layout_refused(self):
        r = layout_sample()
        r["traversalLayout"][1]["layout"] = "packed"
        with self.assertRaisesRegex(rcd.RenderError, "/traversalLayout/1"):
            rcd.validate(r, os.path.join(REPO, "schemas", "capacity-report.schema.json"), "report")

    def test_not_measured_layout_says_why(self):
        ws = Workspace(self)
        r = sample()
        r["traversalLayout"] = {"value": None, "reason": "not selected (--only writes)"}
        ws.write_report(r)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        self.assertIn("Sweep right after load vs after random inserts: not measured (not selected (--only writes))",
                      ws.read_page())

    def test_report_without_layout_rows_renders_none(self):
        ws = Workspace(self)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        self.assertNotIn("Sweep right after load", ws.read_page())


class UtilisationTest(unittest.TestCase):

    def validate(self, report):
        rcd.validate(report, os.path.join(REPO, "schemas", "capacity-report.schema.json"), "report")

    def test_new_fields_validate_with_null_and_reason(self):
        self.validate(utilisation_sample())

    def test_new_fields_reject_zero_and_reasonless_null(self):
        cases = []
        r = utilisation_sample()
        r["traversal"][0]["utilisation"]["cpu"]["threads"][0]["busyShare"] = 0
        cases.append((r, "/traversal/0/utilisation/cpu/threads/0/busyShare"))
        r = utilisation_sample()
        r["checkpoint"][0]["utilisation"]["hardwareCounters"]["cycles"] = {"value": None}
        cases.append((r, "/checkpoint/0/utilisation/hardwareCounters/cycles"))
        r = utilisation_sample()
        r["checkpoint"][0]["utilisation"]["diskWrite"]["megabytesPerSecond"] = 0
        cases.append((r, "/checkpoint/0/utilisation/diskWrite/megabytesPerSecond"))
        r = utilisation_sample()
        del r["traversal"][0]["utilisation"]["memoryBandwidth"]
        cases.append((r, "/traversal/0/utilisation"))
        for report, where in cases:
            with self.assertRaisesRegex(rcd.RenderError, where):
                self.validate(report)

    def test_busy_share_over_one_refused(self):
        # A thread cannot be busy for longer than the window: a share above 1 is a sampling
        # error (the thread's interval overran the window), never "130 %".
        r = utilisation_sample()
        r["checkpoint"][0]["utilisation"]["cpu"]["threads"][0]["busyShare"] = 1.3
        with self.assertRaisesRegex(rcd.RenderError, "/checkpoint/0/utilisation/cpu/threads/0/busyShare"):
            self.validate(r)
        r["checkpoint"][0]["utilisation"]["cpu"]["threads"][0]["busyShare"] = 1.0
        self.validate(r)

    def test_served_from_share_above_one_refused(self):
        r = utilisation_sample()
        r["traversal"][0]["utilisation"]["hardwareCounters"]["servedFrom"]["dram"] = 1.4
        with self.assertRaisesRegex(rcd.RenderError, "/traversal/0/utilisation/hardwareCounters/servedFrom/dram"):
            self.validate(r)

    def test_utilisation_beside_sweep_and_checkpoint(self):
        ws = Workspace(self)
        ws.write_report(utilisation_sample())
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        page = ws.read_page()
        traversal = page[page.index("<!-- capacity:traversal -->"):page.index("<!-- /capacity:traversal -->")]
        self.assertIn("sweep 0 97 %, sweep 1 97 %; 2 of 2 at ≥ 95 %", traversal)
        self.assertIn("9.4 of ", traversal)
        self.assertIn("not measured (perf_event_open failed: ENOENT", traversal)
        checkpoint = page[page.index("<!-- capacity:checkpoint -->"):page.index("<!-- /capacity:checkpoint -->")]
        self.assertIn("quiver-bench 99 %, committer 40 %; 1 of 2 at ≥ 95 %", checkpoint)
        self.assertIn("250 of ", checkpoint)

    def test_older_report_still_renders(self):
        ws = Workspace(self)  # the sample predates nothing it needs; strip what minor 1 added
        report = utilisation_sample()
        del report["schemaMinor"]
        for family in ("traversal", "checkpoint"):
            for row in report[family]:
                del row["utilisation"]
        for row in report["writes"]:
            row.pop("diskWrite", None)
        ws.write_report(report)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        self.assertIn("predates utilisation", ws.read_page())

    def test_small_share_is_never_zero(self):
        self.assertEqual(rcd.share(0.003), "< 1 %")
        self.assertEqual(rcd.share(0.97), "97 %")
        self.assertEqual(rcd.share({"value": None, "reason": "no CPU time"}), "not measured (no CPU time)")

    def test_counters_served_from_when_measured(self):
        hw = utilisation_sample()["traversal"][0]["utilisation"]["hardwareCounters"]
        hw.update(instructionsPerCycle=1.5, dtlbLoadMisses=1234)
        hw["servedFrom"] = {"l1": 0.95, "l2OrL3": 0.04, "dram": 0.01}
        self.assertEqual(rcd.counters_text(hw), "IPC 1.50; L1: 95 % of loads, L2/L3: 4 %, DRAM: 1 %; dTLB misses 1,234")


class ProvenanceAndSummaryTest(unittest.TestCase):

    def test_page_cites_digests_and_check_refuses_a_mismatch(self):
        ws = Workspace(self)
        ws.write_history([history_line(sample())])
        self.assertEqual(ws.run()[0], 0)
        page = ws.read_page()
        import hashlib
        for path in (ws.report, ws.baseline, ws.history):
            with open(path, "rb") as f:
                self.assertIn(f"`{hashlib.sha256(f.read()).hexdigest()[:12]}`", page)
        self.assertEqual(ws.run("--check")[0], 0)
        ws.write_history([history_line(sample()), history_line(sample(), status="candidate")])
        code, err = ws.run("--check")
        self.assertEqual(code, 1)
        self.assertIn("the page cites the history history.jsonl as", err)
        self.assertEqual(ws.run()[0], 0)
        self.assertEqual(ws.run("--check")[0], 0)
        # A page whose cited digest was edited is refused too.
        page = ws.read_page()
        cited = rcd.cited_digests(page)["baseline"]
        with open(ws.page, "w", encoding="utf-8") as f:
            f.write(page.replace(cited, "000000000000"))
        code, err = ws.run("--check")
        self.assertEqual(code, 1)
        self.assertIn("cites the baseline baseline.json as 000000000000", err)

    def test_four_line_summary(self):
        ws = Workspace(self)
        self.assertEqual(ws.run()[0], 0)
        page = ws.read_page()
        summary = page[page.index("<!-- capacity:summary -->"):page.index("<!-- /capacity:summary -->")]
        lines = [line for line in summary.splitlines() if line.startswith("- **")]
        self.assertEqual([line.split("**")[1] for line in lines], ["Write", "Read", "Traverse", "Scan"])
        self.assertIn("durable commits/s", lines[0])
        self.assertIn("point lookups/s", lines[1])
        self.assertIn("edge hops/s", lines[2])
        self.assertIn("sweep edges/s", lines[3])
        for line in lines:
            self.assertIn("ratio to its ceiling", line)
        self.assertIn("AMD EPYC", summary)

    def test_traversal_axis_labels_every_decade_and_steps(self):
        ws = Workspace(self)
        self.assertEqual(ws.run()[0], 0)
        with open(os.path.join(ws.svg_dir, "traversal.svg"), encoding="utf-8") as f:
            svg = f.read()
        labels = [label for label in ("50 M", "100 M", "200 M", "500 M", "1 G", "2 G", "5 G") if f">{label}<" in svg]
        self.assertGreaterEqual(len(labels), 3, labels)


class BaselineCrossCheckTest(unittest.TestCase):

    def published_workspace(self):
        ws = Workspace(self)
        lines = [history_line(sample()), history_line(sample(), traversalRatio=0.06)]
        ws.write_history(lines)
        baseline = {"runs": 3, "minRuns": 1, "noiseFloor": {"default": 0.2}, "entries": []}
        baseline["entries"].append(rcd.gate.build_entry(lines, baseline, "quick", "0123456789ab"))
        ws.write_baseline(baseline)
        return ws, baseline

    def test_matching_baseline_renders_its_gate(self):
        ws, _ = self.published_workspace()
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        self.assertIn("| `quick` | `0123456789ab` | `traversalRatio` |", ws.read_page())

    def test_tampered_baseline_refused(self):
        ws, baseline = self.published_workspace()
        baseline["entries"][0]["figures"]["traversalRatio"]["median"] *= 1.01
        ws.write_baseline(baseline)
        before = ws.read_page()
        code, err = ws.run()
        self.assertEqual(code, 1)
        self.assertIn("does not match the history", err)
        self.assertIn("traversalRatio median", err)
        self.assertEqual(ws.read_page(), before)

    def test_baseline_naming_a_candidate_refused(self):
        ws, baseline = self.published_workspace()
        lines = rcd.load_history(ws.history)
        lines[0]["status"] = "candidate"
        ws.write_history(lines)
        code, err = ws.run()
        self.assertEqual(code, 1)
        self.assertIn("which is not published", err)

    def test_trends_plot_published_runs_only(self):
        ws = Workspace(self)
        lines = [history_line(sample()), history_line(sample(), status="candidate"),
                 history_line(sample(), status="candidate"), history_line(sample())]
        ws.write_history(lines)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        self.assertEqual(rcd.history_series(lines, "traversalRatio", "quick", "0123456789ab")[0], [1, 4])
        self.assertIn("2 other measured runs are not plotted", ws.read_page())
        with open(os.path.join(ws.svg_dir, "history.svg"), encoding="utf-8") as f:
            self.assertIn("2 other measured runs not plotted", f.read())


def online_rows():
    """Rows of the online family as bench/capacity/online_family.cc writes them."""
    row = {"query": "expand2Hop", "shape": shape(200_000, 10), "samples": 500, "latencyP50Ns": 21000.0,
           "latencyP95Ns": 30000.0, "csrLatencyP50Ns": 10000.0, "csrLatencyP95Ns": 14000.0, "ratioP50": 2.1,
           "ratioP95": 2.142857, "target": "p50 and p95 <= 1.3 x the CSR's"}
    path = dict(row, query="shortestPath", latencyP50Ns=190000.0, latencyP95Ns=450000.0,
                csrLatencyP50Ns={"value": None, "reason": "no CSR ceiling"},
                csrLatencyP95Ns={"value": None, "reason": "no CSR ceiling"},
                ratioP50={"value": None, "reason": "no CSR ceiling"},
                ratioP95={"value": None, "reason": "no CSR ceiling"}, target="p50 <= 50000 ns")
    return [row, path]


def analytics_rows():
    """Rows of the analytics family as bench/capacity/analytics_family.cc writes them."""
    build = {"kernel": "projectionBuild", "shape": shape(200_000, 10), "threads": 2, "iterations": None,
             "repeats": 3, "quiverSeconds": 0.25, "csrSeconds": 0.015, "quiverOverCsr": 16.6667,
             "target": "entries/s >= 0.5 x the raw CSR sweep of the same entries; memory <= 1.1 x the floor",
             "peers": [], "entries": 4_000_000, "edgesPerSecond": 16_000_000.0,
             "csrSweepEdgesPerSecond": 266_666_666.0, "rateOverCsrSweep": 0.06, "memoryBytes": 19_200_016,
             "floorBytes": 19_200_016, "floorOverMemory": 1.0}
    bfs = {"kernel": "bfs", "shape": shape(200_000, 10), "threads": 2, "iterations": None, "repeats": 3,
           "quiverSeconds": 0.02, "csrSeconds": 0.019, "quiverOverCsr": 1.0526,
           "target": "<= 1.3 x the raw CSR; >= 3 x faster than each peer",
           "peers": [{"library": "boostGraph", "function": "boost::breadth_first_search (record_distances)",
                      "seconds": 0.08, "quiverSpeedup": 4.0, "note": None},
                     {"library": "igraph", "function": "igraph_bfs_simple (IGRAPH_OUT)",
                      "seconds": {"value": None, "reason": "not measured (igraph was not found)"},
                      "quiverSpeedup": {"value": None, "reason": "not measured (igraph was not found)"},
                      "note": None}]}
    pr = dict(bfs, kernel="pageRank", iterations=10,
              peers=[{"library": "boostGraph", "function": "boost::graph::page_rank (n_iterations)",
                      "seconds": 0.3, "quiverSpeedup": 6.0, "note": "spreads no sink mass"}])
    return [build, bfs, pr]


class FamilyTablesTest(unittest.TestCase):

    def section(self, page, name):
        return page[page.index(f"<!-- capacity:{name} -->"):page.index(f"<!-- /capacity:{name} -->")]

    def test_online_and_analytics_tables(self):
        ws = Workspace(self)
        report = sample()
        report["schemaMinor"] = 2
        report["selectedFamilies"] = report["selectedFamilies"] + ["analytics"]
        report["online"] = online_rows()
        report["analytics"] = analytics_rows()
        ws.write_report(report)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        page = ws.read_page()
        online = self.section(page, "online")
        self.assertIn("| 2-hop expansion | 200,000 × 10 | 500 | 21.0 µs | 30.0 µs | 10.0 µs / 14.0 µs | 2.10 / 2.14 |",
                      online)
        self.assertIn("not measured (no CSR ceiling)", online)
        analytics = self.section(page, "analytics")
        self.assertIn("| 200,000 × 10 | projection, out + in | 2 | 4,000,000 | 250 ms | 16.0 M | 267 M | 0.0600 |"
                      " 19.2 MB | 19.2 MB | 1.00 |", analytics)
        self.assertIn("| 200,000 × 10 | BFS | 2 | 20.0 ms | 19.0 ms | 1.05 | 80.0 ms (4.00 ×) |"
                      " not measured (igraph was not found) |", analytics)
        self.assertIn("PageRank (10 it.)", analytics)
        self.assertIn("¹ Boost.Graph `boost::graph::page_rank (n_iterations)` spreads no sink mass.", analytics)

    def test_report_without_the_families_says_so(self):
        ws = Workspace(self)
        report = sample()
        report.pop("online", None)
        report.pop("analytics", None)
        ws.write_report(report)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        page = ws.read_page()
        self.assertIn("it predates the `online` family", self.section(page, "online"))
        self.assertIn("it predates the `analytics` family", self.section(page, "analytics"))

    def test_partial_report_family_not_measured(self):
        ws = Workspace(self)
        report = sample()
        report["analytics"] = {"value": None, "reason": "not selected (--only online)"}
        ws.write_report(report)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        self.assertIn("*Not measured (not selected (--only online)).*", self.section(ws.read_page(), "analytics"))

    def test_schema_rejects_a_zero_and_a_projection_row_without_memory(self):
        report = sample()
        report["schemaMinor"] = 2
        report["analytics"] = analytics_rows()
        rows = copy.deepcopy(report["analytics"])
        rows[1]["quiverSeconds"] = 0
        bad = dict(report, analytics=rows)
        with self.assertRaises(rcd.RenderError):
            rcd.validate(bad, os.path.join(REPO, "schemas", "capacity-report.schema.json"), "report")
        rows = copy.deepcopy(report["analytics"])
        del rows[0]["floorBytes"]
        with self.assertRaises(rcd.RenderError):
            rcd.validate(dict(report, analytics=rows), os.path.join(REPO, "schemas", "capacity-report.schema.json"),
                         "report")
        rcd.validate(report, os.path.join(REPO, "schemas", "capacity-report.schema.json"), "report")


def indexes_rows():
    """Rows of the indexes family as bench/capacity/indexes_family.cc writes them (chosen figures)."""
    missing = {"value": None, "reason": "not measured: this revision of the indexes family runs volatile graphs only"}
    lookup = {"figure": "pointLookupUnique", "variant": "p50", "elements": 10_000_000, "threads": 1,
              "samples": 200_000, "value": 1400.0, "unit": "ns", "ceiling": 750.0,
              "ceilingDefinition": "absl::flat_hash_map<int64, uint64>::find of the same keys",
              "ratio": 1.8667, "ratioDefinition": "figure / ceiling", "target": "<= 2 x the hash map",
              "targetMet": True}
    memory = {"figure": "memoryPerEntry", "variant": "ordered", "elements": 10_000_000, "threads": 1, "samples": 1,
              "value": 14.3, "unit": "bytesPerEntry", "ceiling": 16.0,
              "ceilingDefinition": "computed, not measured: an 8-byte key and an 8-byte id per entry",
              "ratio": 1.1189, "ratioDefinition": "floor / figure", "target": "<= 20 B per entry",
              "targetMet": True, "detail": {"createIndexSeconds": 1.25}}
    stall = {"figure": "onlineBuildCommitStall", "variant": "single-vertex commits", "elements": 10_000_000,
             "threads": 2, "samples": 5_000, "value": 9_000_000, "unit": "ns", "ceiling": 3_000_000,
             "ceilingDefinition": "the longest of the same writer's commits before and after the build",
             "ratio": 3.0, "ratioDefinition": "longest commit during the build / longest outside it",
             "target": "ratio <= 2", "targetMet": False,
             "detail": {"p99CommitDuringNs": 240_000, "commitsDuringBuild": 1_600}}
    batches = {"figure": "volatileBatchesWithIndexes", "variant": "1,000 vertices per batch", "elements": 1_000_000,
               "threads": 1, "samples": 3, "value": 1_500_000.0, "unit": "verticesPerSecond", "ceiling": 2_500_000.0,
               "ceilingDefinition": "the same batches into a graph without indexes", "ratio": 0.6,
               "ratioDefinition": "with / without", "target": "ratio >= 0.5", "targetMet": True}
    durable = {"figure": "durableCommitsWithUniqueIndex", "variant": "single-element commits", "elements": missing,
               "threads": 1, "samples": missing, "value": missing, "unit": "commitsPerSecond", "ceiling": missing,
               "ceilingDefinition": None, "ratio": missing, "ratioDefinition": "with / without",
               "target": "ratio >= 0.9", "targetMet": {"value": None, "reason": "the figure was not measured"}}
    return [lookup, memory, stall, batches, durable]


class IndexesTableTest(unittest.TestCase):

    def section(self, page, name):
        return page[page.index(f"<!-- capacity:{name} -->"):page.index(f"<!-- /capacity:{name} -->")]

    def report(self):
        report = sample()
        report["schemaMinor"] = 6
        report["selectedFamilies"] = report["selectedFamilies"] + ["indexes"]
        report["indexes"] = indexes_rows()
        return report

    def test_indexes_table(self):
        ws = Workspace(self)
        ws.write_report(self.report())
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        md = self.section(ws.read_page(), "indexes")
        self.assertIn("| unique-index point lookup | p50 | 10,000,000 | 1 | 1.40 µs | 750 ns (1) | 1.87 |"
                      " figure / ceiling | <= 2 x the hash map | yes |", md)
        self.assertIn("| memory per index entry | ordered | 10,000,000 | 1 | 14.3 B | 16.0 B (2) | 1.12 |", md)
        self.assertIn("| 9.00 ms | 3.00 ms (3) | 3.00 | longest commit during the build / longest outside it |"
                      " ratio <= 2 | **no** |", md)
        self.assertIn("| 1.50 M/s | 2.50 M/s (4) | 0.600 | with / without | ratio >= 0.5 | yes |", md)
        # A row that was not measured says why, in every figure, and is neither met nor failed.
        self.assertIn("| durable commits, 1 unique index ÷ none | single-element commits | not measured (not measured:"
                      " this revision of the indexes family runs volatile graphs only) | 1 |", md)
        self.assertIn("| not measured (the figure was not measured) |", md)
        self.assertIn("Ceilings: (1) absl::flat_hash_map<int64, uint64>::find of the same keys; (2) computed,", md)
        self.assertIn("- longest commit during the online build (single-vertex commits): p99CommitDuringNs 240 µs,"
                      " commitsDuringBuild 1,600.", md)
        self.assertIn("- memory per index entry (ordered): createIndexSeconds 1.25 s.", md)
        self.assertNotIn("(5)", md)  # a row without a ceiling adds no note

    def test_report_without_the_family_says_so(self):
        ws = Workspace(self)
        report = sample()
        report.pop("indexes", None)
        ws.write_report(report)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        self.assertIn("it predates the `indexes` family", self.section(ws.read_page(), "indexes"))

    def test_partial_report_family_not_measured(self):
        ws = Workspace(self)
        report = sample()
        report["indexes"] = {"value": None, "reason": "not selected (--only online)"}
        ws.write_report(report)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        self.assertIn("*Not measured (not selected (--only online)).*", self.section(ws.read_page(), "indexes"))

    def test_schema_refuses_a_zero_a_missing_verdict_and_an_unknown_figure(self):
        schema = os.path.join(REPO, "schemas", "capacity-report.schema.json")
        report = self.report()
        rcd.validate(report, schema, "report")
        for broken in ({"value": 0}, {"ceiling": 0}, {"figure": "somethingElse"}, {"unit": "furlongs"},
                       {"detail": {"buildSeconds": 0}}, {"elements": 0}, {"extra": 1}):
            rows = copy.deepcopy(report["indexes"])
            rows[0].update(broken)
            with self.assertRaises(rcd.RenderError, msg=str(broken)):
                rcd.validate(dict(report, indexes=rows), schema, "report")
        rows = copy.deepcopy(report["indexes"])
        del rows[0]["targetMet"]
        with self.assertRaises(rcd.RenderError):
            rcd.validate(dict(report, indexes=rows), schema, "report")
        rows = copy.deepcopy(report["indexes"])
        rows[0]["targetMet"] = {"value": None}
        with self.assertRaises(rcd.RenderError):
            rcd.validate(dict(report, indexes=rows), schema, "report")


def import_rows():
    """Rows of the import family as bench/capacity/import_family.cc writes them (chosen figures)."""
    jsonl = {"value": None, "reason": "JSON Lines import is not implemented"}
    parse = "read(2) of the same .e file in 1 MiB chunks and std::from_chars of each line's two integers"
    new_graph = {"figure": "evlpImportNewGraph", "variant": "10000000 x 10; ImportNewGraph + Open + Close",
                 "elements": 100_000_000, "threads": 2, "samples": 1, "value": 12_500_000.0,
                 "unit": "edgesPerSecond", "ceiling": 62_000_000.0, "ceilingDefinition": parse, "ratio": 0.2016,
                 "ratioDefinition": "figure / ceiling", "target": ">= 10M edges/s, end to end", "targetMet": True,
                 "detail": {"importSeconds": 6.5, "openSeconds": 1.5, "closeSeconds": 0.0002,
                            "importEdgesPerSecond": 15_384_615.0, "inputBytes": 1_500_000_000,
                            "inputMegabytesPerSecond": 230.8}}
    read = {"figure": "evlpSequentialRead", "variant": "read(2), page cache warm", "elements": 1_500_000_000,
            "threads": 1, "samples": 3, "value": 9_500.0, "unit": "megabytesPerSecond",
            "ceiling": {"value": None, "reason": "none: the row is itself a bound"}, "ceilingDefinition": None,
            "ratio": 0.0243, "ratioDefinition": "the import's input MB/s / this read rate",
            "target": "none: the input rate the import rows read beside",
            "targetMet": {"value": None, "reason": "no target: a bound for the import rows"}}
    batches = {"figure": "evlpImportBatches", "variant": "1000000 x 10; Import", "elements": 10_000_000,
               "threads": 2, "samples": 1, "value": 640_000.0, "unit": "edgesPerSecond", "ceiling": 61_000_000.0,
               "ceilingDefinition": parse, "ratio": 0.0105, "ratioDefinition": "figure / ceiling",
               "target": "none: the batch path", "targetMet": {"value": None, "reason": "no target: a comparison row"},
               "detail": {"batches": 51}}
    export = {"figure": "exportCsv", "variant": "10000000 x 10", "elements": 100_000_000, "threads": 1, "samples": 1,
              "value": 6_100_000.0, "unit": "edgesPerSecond", "ceiling": 41_000_000.0,
              "ceilingDefinition": "write(2) of as many bytes, 1 MiB chunks, then one fdatasync, as edges/s",
              "ratio": 0.1488, "ratioDefinition": "figure / ceiling, both in edges/s", "target": ">= 10M edges/s",
              "targetMet": False, "detail": {"writtenBytes": 1_515_532_700, "writeMegabytesPerSecond": 620.0}}
    peak = {"figure": "evlpImportPeakResident", "variant": "10000000 x 10; ImportNewGraph + Open",
            "elements": 100_000_000, "threads": 2, "samples": 1_500, "value": 7_200_000_000.0, "unit": "bytes",
            "ceiling": 5_600_000_000, "ceilingDefinition": "the opened graph's allocated bytes", "ratio": 1.2857,
            "ratioDefinition": "peak resident set (sampled every 5 ms) minus before / allocated bytes",
            "target": "ratio <= 1.3", "targetMet": True}
    missing = {"figure": "jsonlImport", "variant": "JSON Lines into a new graph", "elements": jsonl, "threads": 1,
               "samples": jsonl, "value": jsonl, "unit": "rowsPerSecond", "ceiling": jsonl, "ceilingDefinition": None,
               "ratio": jsonl, "ratioDefinition": "figure / ceiling", "target": "none while the format is not implemented",
               "targetMet": jsonl}
    csv_read = {"figure": "csvSequentialRead",
                "variant": "read(2) of vertices.csv and edges.csv in 1 MiB chunks, page cache warm",
                "elements": 380_000_000, "threads": 1, "samples": 3, "value": 8_800.0,
                "unit": "megabytesPerSecond",
                "ceiling": {"value": None, "reason": "none: the row is itself a bound, for csvImportNewGraph's input rate"},
                "ceilingDefinition": None, "ratio": 0.0139,
                "ratioDefinition": "csvImportNewGraph's input MB/s during ImportNewGraph / this read rate",
                "target": "none: the input rate the import rows read beside",
                "targetMet": {"value": None, "reason": "no target: a bound for the import rows"}}
    return [new_graph, read, batches, export, peak, missing, csv_read]


class ImportTableTest(unittest.TestCase):

    def section(self, page, name):
        return page[page.index(f"<!-- capacity:{name} -->"):page.index(f"<!-- /capacity:{name} -->")]

    def report(self):
        report = sample()
        report["schemaMinor"] = 9
        report["selectedFamilies"] = report["selectedFamilies"] + ["import"]
        report["import"] = import_rows()
        return report

    def test_import_table(self):
        ws = Workspace(self)
        ws.write_report(self.report())
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        md = self.section(ws.read_page(), "import")
        self.assertIn("| EVLP into a new graph, end to end | 10000000 x 10; ImportNewGraph + Open + Close | 100,000,000 |"
                      " 2 | 12.5 M/s | 62.0 M/s (1) | 0.202 | figure / ceiling | >= 10M edges/s, end to end | yes |", md)
        # A bound with no ceiling and no target: both say why, and the row is neither met nor failed.
        self.assertIn("| 1 | 9,500 MB/s | not measured (none: the row is itself a bound) | 0.0243 |", md)
        self.assertIn("| not measured (no target: a bound for the import rows) |", md)
        self.assertIn("| 640,000/s | 61.0 M/s (1) | 0.0105 |", md)  # the same ceiling definition, one note
        self.assertIn("| 6.10 M/s | 41.0 M/s (2) | 0.149 | figure / ceiling, both in edges/s | >= 10M edges/s | **no** |",
                      md)
        self.assertIn("| 7,200.0 MB | 5,600.0 MB (3) | 1.29 |", md)
        self.assertIn("| JSON Lines into a new graph | JSON Lines into a new graph | not measured (JSON Lines import is"
                      " not implemented) | 1 |", md)
        # Schema minor 9: the CSV files' own sequential read, beside the CSV import's input rate.
        self.assertIn("| sequential read of the CSV files | read(2) of vertices.csv and edges.csv in 1 MiB chunks,"
                      " page cache warm | 380,000,000 | 1 | 8,800 MB/s | not measured (none: the row is itself a"
                      " bound, for csvImportNewGraph's input rate) | 0.0139 | csvImportNewGraph's input MB/s during"
                      " ImportNewGraph / this read rate |", md)
        self.assertIn("Ceilings: (1) read(2) of the same .e file", md)
        self.assertNotIn("(4)", md)
        self.assertIn("- EVLP into a new graph, end to end (10000000 x 10; ImportNewGraph + Open + Close): importSeconds"
                      " 6.50 s, openSeconds 1.50 s, closeSeconds 200 µs, importEdgesPerSecond 15.4 M/s, inputBytes"
                      " 1,500.0 MB, inputMegabytesPerSecond 231 MB/s.", md)
        self.assertIn("- `Export` to CSV (10000000 x 10): writtenBytes 1,515.5 MB, writeMegabytesPerSecond 620 MB/s.", md)
        self.assertIn("batches 51.", md)

    def test_report_without_the_family_says_so(self):
        ws = Workspace(self)
        report = sample()
        report.pop("import", None)
        ws.write_report(report)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        self.assertIn("it predates the `import` family", self.section(ws.read_page(), "import"))

    def test_partial_report_family_not_measured(self):
        ws = Workspace(self)
        report = self.report()
        report["partial"] = True
        report["import"] = {"value": None, "reason": "not selected (--only indexes)"}
        ws.write_report(report)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        self.assertIn("*Not measured (not selected (--only indexes)).*", self.section(ws.read_page(), "import"))

    def test_schema_refuses_a_zero_an_unknown_figure_or_unit_and_a_missing_verdict(self):
        schema = os.path.join(REPO, "schemas", "capacity-report.schema.json")
        report = self.report()
        rcd.validate(report, schema, "report")
        rows = copy.deepcopy(report["import"])
        rows[-1]["figure"] = "jsonlSequentialRead"  # the other figure schema minor 9 adds
        rcd.validate(dict(report, **{"import": rows}), schema, "report")
        for broken in ({"value": 0}, {"ceiling": 0}, {"figure": "jsonlExport"}, {"figure": "csvSequentialWrite"},
                       {"unit": "ns"},
                       {"detail": {"importSeconds": 0}}, {"elements": 0}, {"threads": 0}, {"extra": 1}):
            rows = copy.deepcopy(report["import"])
            rows[0].update(broken)
            with self.assertRaises(rcd.RenderError, msg=str(broken)):
                rcd.validate(dict(report, **{"import": rows}), schema, "report")
        rows = copy.deepcopy(report["import"])
        del rows[0]["targetMet"]
        with self.assertRaises(rcd.RenderError):
            rcd.validate(dict(report, **{"import": rows}), schema, "report")
        rows = copy.deepcopy(report["import"])
        rows[1]["targetMet"] = {"value": None}
        with self.assertRaises(rcd.RenderError):
            rcd.validate(dict(report, **{"import": rows}), schema, "report")
        with self.assertRaises(rcd.RenderError):
            rcd.validate(dict(report, selectedFamilies=report["selectedFamilies"] + ["export"]), schema, "report")


def overwrite_sample():
    """The sample with schema minor 5's ceilings.overwriteFdatasync (chosen figures, not a run's), its
    durable writes rows' ratios pointing at it."""
    r = sample()
    r["schemaMinor"] = 5
    c = r["ceilings"]
    c["appendFdatasync"]["latencyMaxNs"] = 21_000_000.0
    overwrite = {"writeBytes": 4096, "zeroFilledBytes": 64 << 20, "seconds": 1.5, "fdatasyncs": 600,
                 "fdatasyncsPerSecond": 400.0, "latencyP50Ns": 2_500_000.0, "latencyP99Ns": 6_000_000.0,
                 "latencyMaxNs": 9_000_000.0}
    r["ceilings"] = {}
    for key, value in c.items():  # after appendFdatasync, as the bench writes it
        r["ceilings"][key] = value
        if key == "appendFdatasync":
            r["ceilings"]["overwriteFdatasync"] = overwrite
    for row in r["writes"]:
        if row["mode"] != "durable":
            continue
        for key, figure in (("efficiency", row["writesPerSecond"]),
                            ("syncEfficiency", row["fsyncs"] / row["seconds"])):
            row[key]["ceiling"] = "/ceilings/overwriteFdatasync/fdatasyncsPerSecond"
            row[key]["ratio"] = figure / overwrite["fdatasyncsPerSecond"]
    return r


class OverwriteCeilingTest(unittest.TestCase):

    def section(self, page, name):
        return page[page.index(f"<!-- capacity:{name} -->"):page.index(f"<!-- /capacity:{name} -->")]

    def render(self, report):
        ws = Workspace(self)
        ws.write_report(report)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        return ws.read_page()

    def test_renders_both_ceilings_and_names_the_commit_ceiling(self):
        page = self.render(overwrite_sample())
        ceilings = self.section(page, "ceilings")
        self.assertIn("| 100-byte append + `fdatasync` | 315/s | p50 3.97 ms, p99 8.91 ms, longest 21.0 ms,", ceilings)
        self.assertIn("| 4 KiB overwrite of zeros + `fdatasync` (durable commits' ceiling) | 400/s | "
                      "p50 2.50 ms, p99 6.00 ms, longest 9.00 ms, 600 in 1.50 s; 64 MiB file zero-filled and "
                      "synced first |", ceilings)
        writes = self.section(page, "writes")
        self.assertIn("Durable rows divide by the 4 KiB overwrite + `fdatasync` ceiling (400/s in this run)", writes)
        self.assertIn("append ceiling (315/s)", writes)
        serial = next(r for r in overwrite_sample()["writes"] if r["mode"] == "durable" and r["producers"] == 1
                      and r["batchElements"] == 1)
        self.assertIn(f"| {rcd.ratio_of(serial['efficiency'])} |", writes)
        self.assertIn("p99 6.00 ms, longest 9.00 ms", self.section(page, "checkpoint"))

    def test_shows_the_idle_and_spinning_passes_when_the_report_has_them(self):
        r = overwrite_sample()
        r["ceilings"]["overwriteFdatasync"].update(fdatasyncsPerSecondIdle=260.0, fdatasyncsPerSecondSpinning=400.0)
        self.assertIn("64 MiB file zero-filled and synced first; the faster of a pass with the process idle "
                      "(260/s) and one beside a spinning core (400/s) |", self.section(self.render(r), "ceilings"))

    def test_commit_ceiling_falls_back_to_the_append_ceiling(self):
        self.assertEqual(rcd.commit_ceiling(overwrite_sample())[0], "overwriteFdatasync")
        self.assertEqual(rcd.commit_ceiling(sample())[0], "appendFdatasync")

    def test_report_before_minor_5_renders_without_it(self):
        page = self.render(sample())
        self.assertNotIn("overwrite", self.section(page, "ceilings"))
        self.assertNotIn("Durable rows divide by", self.section(page, "writes"))
        self.assertNotIn("The device's own syncs", self.section(page, "checkpoint"))

    def test_schema_refuses_a_zero_a_missing_figure_and_an_unknown_field(self):
        cases = []
        r = overwrite_sample()
        r["ceilings"]["overwriteFdatasync"]["fdatasyncsPerSecond"] = 0
        cases.append((r, "/ceilings/overwriteFdatasync/fdatasyncsPerSecond"))
        r = overwrite_sample()
        del r["ceilings"]["overwriteFdatasync"]["latencyMaxNs"]
        cases.append((r, "/ceilings/overwriteFdatasync"))
        r = overwrite_sample()
        r["ceilings"]["overwriteFdatasync"]["appendBytes"] = 100
        cases.append((r, "/ceilings/overwriteFdatasync"))
        rcd.validate(overwrite_sample(), os.path.join(REPO, "schemas", "capacity-report.schema.json"), "report")
        for report, where in cases:
            with self.assertRaisesRegex(rcd.RenderError, where):
                rcd.validate(report, os.path.join(REPO, "schemas", "capacity-report.schema.json"), "report")


def device_beside_sample():
    """overwrite_sample at schema minor 6: each checkpoint row with the device's syncs beside a stream
    at its rate (chosen figures, not a run's); the second row's device figure not measured."""
    r = overwrite_sample()
    r["schemaMinor"] = 6
    for i, row in enumerate(r["checkpoint"]):
        s = row["writerStall"]
        if i == 1:
            s["deviceBesideWrites"] = {"value": None, "reason": "the engine reported no checkpoint bytes"}
            s["p99DuringOverDevice"] = {"value": None, "reason": "the engine reported no checkpoint bytes"}
            continue
        s["p99CommitLatencyDuringNs"] = 1_100_000.0
        s["deviceBesideWrites"] = {
            "writeBytes": 4096, "zeroFilledBytes": 64 << 20, "streamStepBytes": 512 << 10,
            "streamTargetMegabytesPerSecond": 250.0, "streamMegabytesPerSecond": 241.0, "seconds": 0.7,
            "fdatasyncs": 3000, "fdatasyncsPerSecond": 4285.0, "latencyP50Ns": 150_000.0,
            "latencyP99Ns": 1_000_000.0, "latencyMaxNs": 3_000_000.0}
        s["p99DuringOverDevice"] = 1.1
    return r


class DeviceBesideWritesTest(unittest.TestCase):

    def test_renders_the_device_beside_the_same_writes_and_the_ratio(self):
        ws = Workspace(self)
        ws.write_report(device_beside_sample())
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        page = ws.read_page()
        cp = page[page.index("<!-- capacity:checkpoint -->"):page.index("<!-- /capacity:checkpoint -->")]
        rows = device_beside_sample()["checkpoint"]
        self.assertIn(f"| {rcd.count(rows[0]['elements'])} | 241 MB/s of 250 MB/s | 150 µs / 1.00 ms | 3.00 ms | 1.10 |", cp)
        self.assertIn(f"| {rcd.count(rows[1]['elements'])} | not measured (the engine reported no checkpoint "
                      "bytes) |", cp)

    def test_a_report_before_minor_6_has_no_such_table(self):
        ws = Workspace(self)
        ws.write_report(overwrite_sample())
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        self.assertNotIn("beside the same disk load", ws.read_page())

    def test_schema_takes_the_object_or_the_null_pattern_and_refuses_unknown_fields(self):
        schema = os.path.join(REPO, "schemas", "capacity-report.schema.json")
        rcd.validate(device_beside_sample(), schema, "report")
        r = device_beside_sample()
        r["checkpoint"][0]["writerStall"]["deviceBesideWrites"]["extra"] = 1
        with self.assertRaisesRegex(rcd.RenderError, "/checkpoint/0/writerStall"):
            rcd.validate(r, schema, "report")
        r = device_beside_sample()
        r["checkpoint"][0]["writerStall"]["p99DuringOverDevice"] = 0
        with self.assertRaisesRegex(rcd.RenderError, "/checkpoint/0/writerStall"):
            rcd.validate(r, schema, "report")


    def test_schema_takes_the_object_the_bench_emits_when_the_device_file_fails(self):
        # Review: MeasureSyncedWrites (bench/capacity/ceilings.cc) returns early when the device
        # file cannot be opened or zero-filled (ENOSPC right after a large checkpoint, say). It used
        # to leave "seconds" and "fdatasyncs" unset, which the schema requires, and quiver-bench
        # validates every report before writing it, so the whole run was lost. SetNotMeasured now
        # sets both to 0: this is the object MeasureOverwriteBesideWrites emits for an unopenable
        # data directory.
        reason = {"value": None, "reason": "open failed: No such file or directory"}
        r = device_beside_sample()
        s = r["checkpoint"][0]["writerStall"]
        s["deviceBesideWrites"] = {
            "writeBytes": 4096, "zeroFilledBytes": 64 << 20, "streamStepBytes": 512 << 10,
            "streamTargetMegabytesPerSecond": 100.0, "seconds": 0.0, "fdatasyncs": 0,
            "fdatasyncsPerSecond": dict(reason),
            "latencyP50Ns": dict(reason), "latencyP99Ns": dict(reason), "latencyMaxNs": dict(reason)}
        s["p99DuringOverDevice"] = {"value": None,
                                    "reason": "the device figure beside the same writes is missing"}
        rcd.validate(r, os.path.join(REPO, "schemas", "capacity-report.schema.json"), "report")


class HugePagesTest(unittest.TestCase):
    """environment.allocator.hugePages (schemaMinor >= 8): shown in the machine table when present."""

    def render(self, report):
        ws = Workspace(self)
        ws.write_report(report)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        page = ws.read_page()
        return page[page.index("<!-- capacity:machine -->"):page.index("<!-- /capacity:machine -->")]

    def report(self, requested=True, mode="madvise"):
        r = sample()
        r["schemaMinor"] = 8
        r["environment"]["allocator"]["hugePages"] = {"requested": requested, "transparentHugePages": mode}
        return r

    def test_machine_table_names_the_setting(self):
        self.assertIn("; huge pages asked for (transparent huge pages: madvise) |", self.render(self.report()))
        unmeasured = self.report(False, {"value": None, "reason": "no such file"})
        self.assertIn("; huge pages not asked for (transparent huge pages: not measured (no such file)) |",
                      self.render(unmeasured))

    def test_older_report_says_nothing_of_it(self):
        self.assertNotIn("huge pages", self.render(sample()))

    def test_schema_refuses_a_missing_or_unknown_field(self):
        schema = os.path.join(REPO, "schemas", "capacity-report.schema.json")
        rcd.validate(self.report(), schema, "report")
        r = self.report()
        del r["environment"]["allocator"]["hugePages"]["transparentHugePages"]
        with self.assertRaisesRegex(rcd.RenderError, "/environment/allocator/hugePages"):
            rcd.validate(r, schema, "report")
        r = self.report()
        r["environment"]["allocator"]["hugePages"]["pageBytes"] = 2 << 20
        with self.assertRaisesRegex(rcd.RenderError, "/environment/allocator/hugePages"):
            rcd.validate(r, schema, "report")
        r = self.report()
        r["environment"]["allocator"]["hugePages"]["requested"] = "yes"
        with self.assertRaisesRegex(rcd.RenderError, "/environment/allocator/hugePages/requested"):
            rcd.validate(r, schema, "report")


def fresh_touch_sample():
    """The import sample at schema minor 10: ceilings.freshMemoryTouch and the EVLP row's first pass
    (chosen figures, not a run's)."""
    r = sample()
    r["schemaMinor"] = 10
    r["ceilings"]["freshMemoryTouch"] = {
        "bytes": 4 << 30, "touchStrideBytes": 4096, "hugePagesAdvised": True, "firstTouchSeconds": 10.5,
        "firstTouchGigabytesPerSecond": 0.41, "retouchSeconds": 0.21, "retouchGigabytesPerSecond": 20.5,
        "memsetGigabytesPerSecond": 12.0}
    r["selectedFamilies"] = r["selectedFamilies"] + ["import"]
    r["import"] = import_rows()
    row = r["import"][0]
    row["samples"] = 3
    row["detail"].update(firstPassEdgesPerSecond=5_900_000.0, firstPassImportSeconds=7.3, firstPassOpenSeconds=9.7,
                         firstPassCloseSeconds=0.0001, firstPassTouchedBytes=7_000_000_000,
                         firstTouchCeilingSeconds=17.07, retouchCeilingSeconds=0.341)
    return r


class FreshMemoryTouchTest(unittest.TestCase):
    """ceilings.freshMemoryTouch and evlpImportNewGraph's first pass (schemaMinor >= 10)."""

    def render(self, report, name):
        ws = Workspace(self)
        ws.write_report(report)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        page = ws.read_page()
        return page[page.index(f"<!-- capacity:{name} -->"):page.index(f"<!-- /capacity:{name} -->")]

    def test_ceiling_row_and_first_pass_paragraph(self):
        r = fresh_touch_sample()
        self.assertIn("| Fresh memory, first touch (1 byte per 4 KiB) | 0.410 GB/s | a new 4 GiB mapping, advised "
                      "`MADV_HUGEPAGE` as the engine's arrays, measured first; a second new mapping right after "
                      "(memory the machine backs now) 20.5 GB/s, written whole with `memset` 12.0 GB/s |",
                      self.render(r, "ceilings"))
        md = self.render(r, "import")
        self.assertIn("EVLP into a new graph is the median of 3 passes after a first one. The first pass ran at "
                      "5.90 M/s (`ImportNewGraph` 7.30 s, `Open` 9.70 s, `Close` 100 µs) and touched 7,000.0 MB of "
                      "memory it had never held (its peak resident set minus the set before); at the fresh-memory "
                      "first-touch ceiling (0.410 GB/s) those bytes take 17.1 s, at the rate of a second touch "
                      "right after (20.5 GB/s) 341 ms. On a virtual machine", md)
        # Right under the table, before the ceilings' notes and the details.
        self.assertLess(md.index("is the median of 3 passes"), md.index("Ceilings: (1)"))
        self.assertIn("firstPassEdgesPerSecond 5.90 M/s", md)

    def test_unmeasured_ceiling_says_why(self):
        r = fresh_touch_sample()
        why = {"value": None, "reason": "mapping 4294967296 bytes failed"}
        r["ceilings"]["freshMemoryTouch"].update(firstTouchGigabytesPerSecond=why, retouchGigabytesPerSecond=why,
                                                 memsetGigabytesPerSecond=why)
        del r["ceilings"]["freshMemoryTouch"]["firstTouchSeconds"]
        r["import"][0]["detail"]["firstTouchCeilingSeconds"] = {
            "value": None, "reason": "ceilings.freshMemoryTouch.firstTouchGigabytesPerSecond was not measured"}
        self.assertIn("| not measured (mapping 4294967296 bytes failed) |", self.render(r, "ceilings"))
        self.assertIn("first-touch ceiling (not measured (mapping 4294967296 bytes failed)) those bytes take not "
                      "measured (ceilings.freshMemoryTouch.firstTouchGigabytesPerSecond was not measured)",
                      self.render(r, "import"))

    def test_report_before_minor_10_says_not_measured(self):
        self.assertIn("| Fresh memory, first touch (1 byte per 4 KiB) | not measured (the report predates schemaMinor"
                      " 10) | — |", self.render(sample(), "ceilings"))
        r = sample()
        r["schemaMinor"] = 9
        r["selectedFamilies"] = r["selectedFamilies"] + ["import"]
        r["import"] = import_rows()
        self.assertIn("EVLP into a new graph, first pass: not measured (the report predates schemaMinor 10); the "
                      "row's figure is one pass, the process's first", self.render(r, "import"))

    def test_schema_refuses_a_zero_a_missing_figure_and_an_unknown_field(self):
        schema = os.path.join(REPO, "schemas", "capacity-report.schema.json")
        rcd.validate(fresh_touch_sample(), schema, "report")
        for change in ({"firstTouchGigabytesPerSecond": 0}, {"bytes": 0}, {"hugePagesAdvised": 1},
                       {"pageFaults": 3}):
            r = fresh_touch_sample()
            r["ceilings"]["freshMemoryTouch"].update(change)
            with self.assertRaisesRegex(rcd.RenderError, "/ceilings/freshMemoryTouch", msg=str(change)):
                rcd.validate(r, schema, "report")
        r = fresh_touch_sample()
        del r["ceilings"]["freshMemoryTouch"]["retouchGigabytesPerSecond"]
        with self.assertRaisesRegex(rcd.RenderError, "/ceilings/freshMemoryTouch"):
            rcd.validate(r, schema, "report")
        r = fresh_touch_sample()
        r["import"][0]["detail"]["firstTouchCeilingSeconds"] = 0
        with self.assertRaises(rcd.RenderError):
            rcd.validate(r, schema, "report")


def engine_rows():
    """Rows of the engine family as bench/capacity/engine_family.cc writes them (chosen figures)."""
    tail = "GetSnapshot() + ~Snapshot() on one graph's current version (1000 vertices, volatile, no writer)"
    solo = {"figure": "snapshotAcquireRelease", "variant": "1 thread; " + tail, "elements": 1_000_000,
            "threads": 1, "samples": 5, "value": 24.0, "unit": "ns",
            "ceiling": {"value": None, "reason": "none: this row is the bound the 2-thread row is read against"},
            "ceilingDefinition": None,
            "ratio": {"value": None, "reason": "none: the 2-thread row carries the ratio to this figure"},
            "ratioDefinition": "none (the 2-thread row's ratio is its figure / this one)",
            "target": "none: the 1-thread cost the 2-thread row is held to",
            "targetMet": {"value": None, "reason": "no target: the bound of the 2-thread row"},
            "detail": {"sharedCounterNs": 9.5}}
    pair = {"figure": "snapshotAcquireRelease", "variant": "2 threads at once, each timing its own loop; " + tail,
            "elements": 1_000_000, "threads": 2, "samples": 5, "value": 60.0, "unit": "ns", "ceiling": 24.0,
            "ceilingDefinition": "not a machine bound: the 1-thread row's figure of the same run",
            "ratio": 2.5, "ratioDefinition": "ns per acquire + release per thread on 2 threads / on 1 thread",
            "target": "ratio <= 1.5", "targetMet": False,
            "detail": {"thread0Ns": 58.0, "thread1Ns": 62.0, "sharedCounterOneThreadNs": 9.5,
                       "sharedCounterTwoThreadsNs": 41.0, "leastBusyThreadShare": 0.62,
                       "threadCpuNs": 25.0}}
    inserts = {"figure": "randomEdgeInserts",
               "variant": "1000000 vertices committed, then 10000000 edges, uniform random source and target",
               "elements": 10_000_000, "threads": 1, "samples": 3, "value": 1_250_000.0, "unit": "edgesPerSecond",
               "ceiling": 50_000_000.0, "ceilingDefinition": "a raw CSR build of the same edge list, 1 thread",
               "ratio": 0.025, "ratioDefinition": "figure (the median pass, recording + Write) / ceiling",
               "target": ">= 5M edges/s", "targetMet": False,
               "detail": {"vertices": 1_000_000, "batches": 100, "recordSeconds": 1.5, "writeSeconds": 6.5,
                          "recordEdgesPerSecond": 6_666_667.0, "writeEdgesPerSecond": 1_538_462.0,
                          "slowestPassEdgesPerSecond": 1_200_000.0, "fastestPassEdgesPerSecond": 1_300_000.0}}
    return [solo, pair, inserts]


class EngineTableTest(unittest.TestCase):
    """The engine family (schemaMinor >= 11): snapshot acquire on 1 and 2 threads, random-target edge inserts."""

    def section(self, page, name):
        return page[page.index(f"<!-- capacity:{name} -->"):page.index(f"<!-- /capacity:{name} -->")]

    def report(self):
        report = sample()
        report["schemaMinor"] = 11
        report["selectedFamilies"] = report["selectedFamilies"] + ["engine"]
        report["engine"] = engine_rows()
        return report

    def test_engine_table_and_split(self):
        ws = Workspace(self)
        ws.write_report(self.report())
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        md = self.section(ws.read_page(), "engine")
        self.assertIn("| Figure | Variant | Elements | Threads | Value | Ceiling | Ratio | Ratio is | Target | Met |", md)
        # The 1-thread row is the bound: no ceiling, no ratio, no target, each saying why.
        self.assertIn("| snapshot acquire + release | 1 thread; GetSnapshot() + ~Snapshot() on one graph's current"
                      " version (1000 vertices, volatile, no writer) | 1,000,000 | 1 | 24.0 ns | not measured (none:"
                      " this row is the bound the 2-thread row is read against) | not measured (none: the 2-thread"
                      " row carries the ratio to this figure) |", md)
        self.assertIn("| not measured (no target: the bound of the 2-thread row) |", md)
        # The 2-thread row: its ceiling is the 1-thread figure, its target the ratio.
        self.assertIn("| 1,000,000 | 2 | 60.0 ns | 24.0 ns (1) | 2.50 | ns per acquire + release per thread on 2"
                      " threads / on 1 thread | ratio <= 1.5 | **no** |", md)
        self.assertIn("| random-target edge inserts, 1 writer | 1000000 vertices committed, then 10000000 edges,"
                      " uniform random source and target | 10,000,000 | 1 | 1.25 M/s | 50.0 M/s (2) | 0.0250 |"
                      " figure (the median pass, recording + Write) / ceiling | >= 5M edges/s | **no** |", md)
        self.assertIn("Ceilings: (1) not a machine bound: the 1-thread row's figure of the same run; (2) a raw CSR"
                      " build of the same edge list, 1 thread.", md)
        self.assertIn("Snapshot acquire + release on 2 threads: 60.0 ns per operation per thread (thread 0 58.0 ns,"
                      " thread 1 62.0 ns) against 24.0 ns on 1 thread: ratio 2.50 (target ratio <= 1.5).", md)
        self.assertIn("took 9.50 ns on 1 thread and 41.0 ns per thread on 2. The less busy of the two threads ran"
                      " on its core for 62 % of its loop's wall time (median of the passes)", md)
        self.assertIn("sharedCounterTwoThreadsNs 41.0 ns, leastBusyThreadShare 62 %, threadCpuNs 25.0 ns.", md)
        self.assertIn("Random-target edge inserts: 1.25 M/s over the median pass (3 passes; target >= 5M edges/s), of"
                      " which 1.50 s recording the batches (`WriteBatch::AddEdge`, 6.67 M/s) and 6.50 s inside"
                      " `Write` (1.54 M/s); a raw CSR build of the same edges ran at 50.0 M/s.", md)

    def test_met_targets_say_yes(self):
        ws = Workspace(self)
        report = self.report()
        rows = report["engine"]
        rows[1].update(value=30.0, ratio=1.25, targetMet=True)
        rows[2].update(value=6_000_000.0, ratio=0.12, targetMet=True)
        ws.write_report(report)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        md = self.section(ws.read_page(), "engine")
        self.assertIn("| 30.0 ns | 24.0 ns (1) | 1.25 |", md)
        self.assertIn("| ratio <= 1.5 | yes |", md)
        self.assertIn("| 6.00 M/s | 50.0 M/s (2) | 0.120 |", md)
        self.assertIn("| >= 5M edges/s | yes |", md)

    def test_report_that_predates_the_family(self):
        ws = Workspace(self)
        report = sample()  # schemaMinor 10: no engine family
        report.pop("engine", None)
        ws.write_report(report)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        self.assertIn("*Not in this report: it predates the `engine` family.*", self.section(ws.read_page(), "engine"))

    def test_committed_full_report_has_the_family(self):
        # Recorded since stop 35: the page shows its rows, not the "predates" line.
        with open(os.path.join(REPO, "bench", "results", "capacity-report-full.json"), encoding="utf-8") as f:
            engine = json.load(f).get("engine")
        self.assertIsInstance(engine, list)
        self.assertEqual({row["figure"] for row in engine}, {"snapshotAcquireRelease", "randomEdgeInserts"})

    def test_partial_report_family_not_measured(self):
        ws = Workspace(self)
        report = self.report()
        report["partial"] = True
        report["engine"] = {"value": None, "reason": "not selected (--only import)"}
        ws.write_report(report)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        self.assertIn("*Not measured (not selected (--only import)).*", self.section(ws.read_page(), "engine"))

    def test_row_without_the_split_says_so(self):
        ws = Workspace(self)
        report = self.report()
        del report["engine"][2]["detail"]["writeSeconds"]
        del report["engine"][1]["detail"]["leastBusyThreadShare"]
        ws.write_report(report)
        code, err = ws.run()
        self.assertEqual(code, 0, err)
        md = self.section(ws.read_page(), "engine")
        self.assertIn("and not measured (not in this row) inside `Write`", md)
        self.assertNotIn("less busy", md)

    def test_schema_refuses_a_zero_an_unknown_figure_or_unit_and_a_missing_verdict(self):
        schema = os.path.join(REPO, "schemas", "capacity-report.schema.json")
        report = self.report()
        rcd.validate(report, schema, "report")
        for broken in ({"value": 0}, {"ceiling": 0}, {"ratio": 0}, {"figure": "snapshotAcquire"},
                       {"unit": "rowsPerSecond"}, {"detail": {"recordSeconds": 0}}, {"elements": 0},
                       {"threads": 0}, {"extra": 1}):
            rows = copy.deepcopy(report["engine"])
            rows[2].update(broken)
            with self.assertRaises(rcd.RenderError, msg=str(broken)):
                rcd.validate(dict(report, engine=rows), schema, "report")
        rows = copy.deepcopy(report["engine"])
        del rows[1]["targetMet"]
        with self.assertRaises(rcd.RenderError):
            rcd.validate(dict(report, engine=rows), schema, "report")
        rows = copy.deepcopy(report["engine"])
        rows[0]["targetMet"] = {"value": None}
        with self.assertRaises(rcd.RenderError):
            rcd.validate(dict(report, engine=rows), schema, "report")
        with self.assertRaises(rcd.RenderError):
            rcd.validate(dict(report, engine=[]), schema, "report")
        with self.assertRaises(rcd.RenderError):
            rcd.validate(dict(report, selectedFamilies=report["selectedFamilies"] + ["engines"]), schema, "report")


if __name__ == "__main__":
    unittest.main()

"""Where a sweep's errors lie (scoring/regions.py): a unary sweep over bit patterns keeps per-bin
figures over its range from the device scorer's per-program rows; they add up to the measurement's,
a planted misrounded range lands in its bin, they round-trip through report.json, and the page
draws them against the input's value."""
import json
import math

import numpy as np
import pytest

import nbx
from nbx.harness import api
from nbx.harness.records.measurement import Measurement
from nbx.harness.report import Report
from nbx.harness.report import html
from nbx.harness.scoring import device as device_scoring
from nbx.harness.scoring import regions
from nbx.harness.targets.target import Target

LO = 0x3F800000                 # exp over [1, 1.0078): 2^16 float32 inputs


def _totals(m):
    b = m.bins
    return sum(b["count"]), sum(b["misrounded"]), sum(b["special"]), max(b["max_ulp"])


@pytest.mark.parametrize("op, lo, n, block", [("exp", LO, 1 << 16, 1 << 12),
                                              # one input undecided on the device: the host's
                                              ("sigmoid", 0xB6C60000 - 40000, (1 << 16) + 77, None)])
def test_bins_add_up_to_the_measurement(monkeypatch, op, lo, n, block):
    if block:
        monkeypatch.setattr(device_scoring, "BLOCK", block)
    m = api.measure(Target(op, {}, nbx.float32), "sweep", bits=(lo, lo + n))
    assert not m.error, m.error
    b = m.bins
    assert (b["lo"], b["hi"]) == (lo, lo + n)
    k = len(b["count"])
    assert k == -(-n // b["width"]) and all(len(b[x]) == k for x in ("misrounded", "special", "max_ulp"))
    assert _totals(m) == (m.cases, m.not_correctly_rounded, m.special_mismatches, m.max_ulp)
    if block:
        assert k == n // block and min(b["count"]) == block      # 16 bins, one row each
    else:
        assert m.undecided == 1


class Planted(Target):
    """exp with its results at inputs PLANT one float32 ulp up: misrounded there only."""
    PLANT = range(LO + 5000, LO + 5100)

    def run_device(self, xs):
        got = super().run_device(xs)
        x = xs[0].numpy().view(np.uint32)
        bits = got.numpy().view(np.uint32).copy()
        hit = (x >= self.PLANT.start) & (x < self.PLANT.stop)
        bits[hit] += 1
        return nbx.from_numpy(bits.view(np.float32))


def test_a_planted_misrounded_range_lands_in_its_bin(monkeypatch):
    monkeypatch.setattr(device_scoring, "BLOCK", 1 << 10)
    m = api.measure(Planted("exp", {}, nbx.float32), "sweep", bits=(LO, LO + (1 << 16)))
    b = m.bins
    assert len(b["count"]) == 64 and b["width"] == 1 << 10
    at = (Planted.PLANT.start - LO) // b["width"]
    assert at == 4 and (Planted.PLANT.stop - 1 - LO) // b["width"] == 4
    assert m.not_correctly_rounded == len(Planted.PLANT)
    assert [i for i, c in enumerate(b["misrounded"]) if c] == [at] and b["misrounded"][at] == len(Planted.PLANT)
    assert b["max_ulp"][at] == m.max_ulp > 1
    assert max(u for i, u in enumerate(b["max_ulp"]) if i != at) <= 0.5
    # the page's bars: 64 bins drawn as they are, the planted one marked, x labelled by value
    d = html.plot_data(m, 0.5)["rg"]
    assert len(d["u"]) == 64 and d["m"] == [len(Planted.PLANT) if i == at else 0 for i in range(64)]
    assert d["t"][0] == [0, "1"] and d["t"][-1][0] == 64 and "s" not in d


def test_a_sampled_sweep_scored_on_the_host_keeps_bins_over_every_bit_pattern():
    """The ci and nightly profiles' float32 sweeps are samples scored on the host: their errors are
    binned over all 2^32 bit patterns (256 bins of 2^24), every case in one, the figures the
    measurement's; float64 sweeps (2^64 patterns) keep none."""
    m = api.measure(Target("sin", {}, nbx.float32), "sweep")
    b = m.bins
    assert (b["lo"], b["hi"], b["width"], len(b["count"])) == (0, 1 << 32, 1 << 24, 256)
    assert sum(b["count"]) == m.cases and sum(b["misrounded"]) == m.not_correctly_rounded
    assert max(b["max_ulp"]) == m.max_ulp
    assert sum(1 for c in b["count"] if c) > 200                       # the sample spans the whole range
    assert api.measure(Target("sin", {}, nbx.float64), "sweep").bins is None


def test_bins_round_trip_through_report_json():
    b = regions.RangeBins(0, 1 << 32, 1 << 16)
    assert len(b.count) == 256 and b.width == 1 << 24
    rows = np.array([[0, 10, 1, 0, 0.75], [1 << 16, 5, 0, 2, 0.5]], np.float64)
    b.add_rows(0x7F000000, rows)                    # both rows in bin 0x7f
    m = Measurement("exp", "float32", "sweep", "interpreter", cases=15, max_ulp=0.75, not_correctly_rounded=1,
                    special_mismatches=2, bins=b.to_dict())
    assert m.bins["count"][0x7F] == 15 and m.bins["special"][0x7F] == 2 and m.bins["max_ulp"][0x7F] == 0.75
    m.bins["max_ulp"][3] = math.inf                 # JSON has no inf: it travels as "inf"
    rep = Report(backend={"id": "interpreter"}, measurements=[m, Measurement("exp", "float32", "bank", "x")])
    text = rep.to_json()
    assert '"inf"' in text and "Infinity" not in text
    back = Report.from_json(text)
    assert back.measurements[0] == m and back.measurements[1].bins is None
    # a report written before bins loads, without them
    old = json.loads(text)
    del old["measurements"][0]["bins"]
    assert Report.from_json(json.dumps(old)).measurements[0].bins is None
    bad = json.loads(text)
    bad["measurements"][0]["bins"]["max_ulp"].pop()
    with pytest.raises(ValueError):
        Report.from_json(json.dumps(bad))


def test_the_page_merges_bins_and_labels_the_range_by_value():
    b = regions.RangeBins(0, 1 << 32, 1 << 16)
    b.misrounded[0x3F] = 7                          # [0.5, 1): float32 patterns 0x3f000000 ..
    b.max_ulp[:] = 0.5
    b.max_ulp[0x3F] = 2.0
    m = Measurement("exp", "float32", "sweep", "interpreter", bins=b.to_dict())
    d = html.region_data(m)
    assert len(d["u"]) == html.PAGE_BINS == 128 and d["w"] == 1 << 25
    assert d["m"] == [7 if i == 0x3F // 2 else 0 for i in range(128)] and d["u"][0x3F // 2] == 2.0
    labels = dict((i, t) for i, t in d["t"])
    assert labels[0] == "0" and labels[128] == "nan"              # the last input: 0xffffffff
    assert labels[64] == "-0"                                     # 0x80000000
    assert regions.tiles_for(1 << 32, 1024, 64) == 64 and regions.tiles_for(1 << 16, 1024, 64) == 1

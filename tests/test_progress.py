"""harness/progress.py: a bar with rate and ETA on a terminal, whole periodic lines elsewhere."""
from __future__ import annotations

import io

import pytest

from nbx.harness import progress
from nbx.harness.progress import Progress, fmt_duration, fmt_rate


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


class Tty(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture(autouse=True)
def defaults():
    yield
    progress.configure(mode="auto", interval=30.0, tag="")


def test_lines_off_a_terminal_start_every_interval_and_at_the_end():
    out, clock = io.StringIO(), Clock()
    p = Progress(100, "nbx run ci", out, clock=clock)
    for i in range(100):
        clock.t += 1.0                       # 1 s a job: a line every 30 jobs, and the last
        p.step(f"job {i}")
    lines = out.getvalue().splitlines()
    assert lines[0] == "nbx run ci: 0/100 jobs, started"
    assert lines[1] == "nbx run ci: 30/100 jobs (30%), 1.00 jobs/s, elapsed 30s, ETA 1m10s; last: job 29"
    assert len(lines) == 5 and "\r" not in out.getvalue()
    assert lines[-1] == "nbx run ci: 100/100 jobs (100%), 1.00 jobs/s, done in 1m40s"


def test_a_bar_on_a_terminal_with_rate_and_eta(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")              # the bar is cut to the terminal's width
    out, clock = Tty(), Clock()
    p = Progress(4, "nbx run ci", out, clock=clock)
    clock.t = 0.5
    p.step("exp float32 sweep")
    text = out.getvalue()
    assert text.startswith("\rnbx run ci [#####               ] 1/4  25% 2.00 jobs/s 0s ETA 2s")
    assert "exp float32 sweep" in text and text.endswith("\x1b[K") and "\n" not in text
    clock.t = 0.55
    p.step("too soon")                        # redrawn at most 10 times a second
    assert "too soon" not in out.getvalue()
    clock.t = 2.0
    p.step()
    p.step()
    assert out.getvalue().endswith("4/4 100% 2.00 jobs/s 2s\x1b[K\n")


def test_configure_sets_the_form_and_a_tag():
    progress.configure(mode="lines", interval=5, tag="shard 1/4")
    out, clock = Tty(), Clock()
    p = Progress(2, "nbx run nightly", out, clock=clock)
    clock.t = 6
    p.step()
    assert out.getvalue().splitlines()[1].startswith("nbx run nightly [shard 1/4]: 1/2 jobs (50%)")
    with pytest.raises(ValueError):
        progress.configure(mode="fancy")
    with pytest.raises(ValueError):
        progress.configure(interval=0)


def test_formats():
    assert [fmt_duration(s) for s in (0, 59.4, 61, 3599, 7380)] == ["0s", "59s", "1m01s", "59m59s", "2h03m"]
    assert fmt_rate(0) == "-" and fmt_rate(2.5) == "2.50 jobs/s" and fmt_rate(0.25) == "4.0 s/job"


def test_a_closed_stream_does_not_stop_the_run():
    out = io.StringIO()
    p = Progress(3, "x", out)
    out.close()
    p.step()
    p.step()
    p.step()

"""Repository-wide pytest hooks: nbval's cells are marked ``notebook``, and a run ends with each notebook's
time, the heaviest xdist groups' (tests/conftest.py sends the heaviest first: its ``GROUP_SECONDS``) and each
worker's: the seconds of its tests and when it finished.

The lanes of the tests, their markers and shared fixtures are in tests/conftest.py.

nbval reports each cell as its own test, so `--durations` shows slow cells; this adds each chapter's total
(set-up, cells and teardown), which must stay within the 20 s budget of CONTRIBUTING.md. It reports and
does not fail: timings on a shared machine are no basis for a red build.
"""

from __future__ import annotations

import time
from collections import defaultdict

import pytest

NOTEBOOK_BUDGET_S = 20.0
_seconds: defaultdict[str, float] = defaultdict(float)
_groups: defaultdict[str, float] = defaultdict(float)  # xdist group -> seconds of its tests
_busy: defaultdict[str, float] = defaultdict(float)  # xdist worker -> seconds of its tests
_last: dict[str, float] = {}  # xdist worker -> when it reported its last test, from the session's start
_start = time.monotonic()


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.notebook)


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::", 1)[0]
    if path.endswith(".ipynb"):
        _seconds[path] += report.duration
    if "@" in report.nodeid:  # "<nodeid>@<group>" under `--dist loadgroup`
        _groups[report.nodeid.rsplit("@", 1)[1]] += report.duration
    worker = getattr(getattr(report, "node", None), "workerinput", {}).get("workerid")
    if worker:
        _busy[worker] += report.duration
        _last[worker] = time.monotonic() - _start


def pytest_terminal_summary(terminalreporter, config):
    if _groups:
        terminalreporter.section("the heaviest xdist groups (seconds of their tests)")
        for group, seconds in sorted(_groups.items(), key=lambda g: -g[1])[:20]:
            terminalreporter.write_line(f"{seconds:6.1f} s  {group}")
        for worker in sorted(_busy):  # the workers should finish close together (within 30 s)
            done = f"its last one done {_last[worker]:.0f} s after the start"
            terminalreporter.write_line(f"{worker}: {_busy[worker]:.0f} s of tests, {done}")
    if not _seconds:
        return
    workers = getattr(config.option, "numprocesses", None)
    title = "notebook execution time"
    if workers:  # pytest-xdist: the other worker loads the same cores, so these times are longer
        title += f" ({workers} workers share the cores: run a notebook alone to check the budget)"
    terminalreporter.section(title)
    for path, seconds in sorted(_seconds.items()):
        flag = "  OVER BUDGET" if seconds > NOTEBOOK_BUDGET_S else ""
        terminalreporter.write_line(f"{seconds:6.1f} s  {path}{flag}")
    terminalreporter.write_line(f"{sum(_seconds.values()):6.1f} s  every notebook ({len(_seconds)})")

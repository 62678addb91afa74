"""Where a measurement ran: the one description every ``make`` target records beside its timings.

``make minilm-heads``, ``make smollm2-heads``, ``make decoder`` and ``make weights`` store their wall and CPU
seconds in the JSON they write; a time means little without the machine, so each records this string too.
"""

from __future__ import annotations

import os
import platform


def machine() -> str:
    """The machine a measurement ran on: architecture, CPU model (from ``/proc/cpuinfo`` on Linux), logical
    CPUs and operating system, for example ``"x86_64, AMD EPYC 7B13, 2 logical CPUs, Linux"``."""
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), cpu)
    except OSError:  # not Linux
        pass
    return f"{platform.machine()}, {cpu or 'CPU unknown'}, {os.cpu_count()} logical CPUs, {platform.system()}"

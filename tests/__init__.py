"""The tests of the book and its package, one folder per lane (tests/conftest.py says what each needs).

A package, so that every lane imports what the lanes share (``tests.port_cases``, ``tests.built_site``) and
the repository's scripts (``scripts.*``, ``benchmarks.*``) by name: pytest puts the repository's root on
``sys.path`` (``pythonpath`` in pyproject.toml), and no test edits it.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the repository

import os
import platform

from book.compute.provenance import machine


def test_machine_names_architecture_cpus_and_system():
    text = machine()
    arch, *_, cpus, system = text.split(", ")
    assert arch == platform.machine() and system == platform.system()
    assert cpus == f"{os.cpu_count()} logical CPUs"


def test_machine_without_proc_cpuinfo_falls_back(monkeypatch):
    def no_file(*args, **kwargs):
        raise OSError("no /proc here")

    monkeypatch.setattr("builtins.open", no_file)
    monkeypatch.setattr(platform, "processor", lambda: "")
    assert ", CPU unknown, " in machine()

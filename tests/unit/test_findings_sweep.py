"""Findings are declared for every bound: a slice of bench/bounds_sweep.py over the real profiles.

Each configuration is larger than the default suite in some direction (brokers, requests,
RF 3); the check must report no unexpected violation and no missing finding there. The whole
sweep is `python bench/bounds_sweep.py` (a few minutes).
"""

from __future__ import annotations

import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _sweep():
    spec = importlib.util.spec_from_file_location("bounds_sweep", os.path.join(ROOT, "bench", "bounds_sweep.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SWEEP = _sweep()


@pytest.mark.slow
@pytest.mark.parametrize("profile,overrides", SWEEP.SWEEP[: SWEEP.QUICK],
                         ids=[f"{p}-" + "-".join(f"{k}{v}" for k, v in o.items()) for p, o in SWEEP.SWEEP[: SWEEP.QUICK]])
def test_larger_bounds_report_nothing_unexpected(profile, overrides):
    result = SWEEP.run(profile, overrides)
    assert result.complete
    assert result.unexpected == [], SWEEP.verdict_line(result)

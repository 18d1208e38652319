import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", database=None, derandomize=True, deadline=None, max_examples=100,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, max_examples=100)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))

import pytest


@pytest.fixture(autouse=True)
def _kreassign_environment():
    """`check` flags such as --workers, --no-fast, --no-kernel set KREASSIGN_* variables in the process that
    runs them (for its forked workers); a test that runs the CLI in process must not pass them on."""
    before = {k: v for k, v in os.environ.items() if k.startswith("KREASSIGN_")}
    yield
    for k in [k for k in os.environ if k.startswith("KREASSIGN_")]:
        if k not in before:
            del os.environ[k]
    os.environ.update(before)

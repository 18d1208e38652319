"""The quota under concurrency and change: the windowed Rate sensor (reference/quota_rate.py) and
request handlers sharing a sensor while the quota changes (checker/models/quota_handlers.py)."""

from __future__ import annotations

from fractions import Fraction as F

from kreassign.checker.explore.bfs import explore
from kreassign.checker.models.quota_handlers import HandlersConfig, QuotaHandlersModel
from kreassign.reference import quota_rate as rate
from kreassign.reference.quota import QuotaConfig

CFG = QuotaConfig(F(1), samples=2, window_ms=1000)


def test_rate_window_is_at_least_samples_minus_one_windows_and_throttle_brings_the_rate_back():
    s = rate.record(None, CFG, 3, 0)
    # Rate.windowSize: 0 ms elapsed < (2 − 1) full windows, so the window is 1000 ms: 3 mutations/s
    assert rate.measure(s, CFG, 0)[0] == 3
    # QuotaUtils.throttleTime: (3 − 1) / 1 × 1000 ms; waiting it brings O·W/(W + X) down to the bound
    assert rate.check(s, CFG, 0)[:2] == (False, 2000)
    assert rate.measure(s, CFG, 1500)[0] == 2 and rate.check(s, CFG, 1500)[:2] == (False, 1500)
    # purgeObsoleteSamples: a sample whose last event is samples × window old is reset
    assert rate.measure(s, CFG, 2000)[0] == 0 and rate.check(s, CFG, 2000)[:2] == (True, 0)


def test_rate_samples_rotate_in_a_ring_of_samples_plus_one():
    s = None
    for t in (0, 1000, 2000, 3000):
        s = rate.record(s, CFG, 1, t)
    assert len(s.samples) == 3 and s.current == 0 and s.samples[0].start_ms == 3000
    # the sample of 1000 is purged (last event 2000 ms ago); those of 2000 and 3000 remain, and the
    # window runs from the oldest start (2000) to now: 1000 ms, which is (samples − 1) full windows
    assert rate.measure(s, CFG, 3000)[0] == 2


def _violations(**kw):
    return {k: [str(a) for _, a in v.path[1:]] for k, v in explore(QuotaHandlersModel(HandlersConfig(**kw))).violations.items()}


def test_kafka_holds_under_concurrency_and_change():
    assert _violations(rate=F(2), quota_changes=(F(1, 2), None), sizes=(1, 3)) == {}
    assert _violations(sensor="rate", quota_changes=(None,)) == {}


def test_check_then_record_interleaved_across_handlers_is_caught():
    # broken on purpose: the check and the record are not under the sensor's lock
    v = _violations(atomic=False)
    assert v == {"overdraft_bounded_with_concurrent_handlers": [
        "Send(handler 0, 3 mutations)", "Send(handler 1, 3 mutations)", "Record(handler 0)", "Record(handler 1)"]}


def test_a_sensor_that_keeps_its_old_config_is_caught():
    # broken on purpose: the sensor's MetricConfig is not rewritten when the quota changes
    v = _violations(rate=F(2), quota_changes=(F(1, 2),), sizes=(1,), handlers=1, follows_quota_changes=False)
    assert v == {"next_admission_uses_quota_in_force": [
        "Send(handler 0, 1 mutations)", "AlterQuota(1/2)", "Send(handler 0, 1 mutations)"]}
    v = _violations(quota_changes=(None,), handlers=1, follows_quota_changes=False)
    assert v == {"unquoted_never_throttled": [
        "Send(handler 0, 3 mutations)", "AlterQuota(remove)", "Send(handler 0, 3 mutations)"]}

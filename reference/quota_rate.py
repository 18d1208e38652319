"""The windowed Rate sensor that Kafka's quotas measured with before KIP-599's token bucket, and the
throttle time it computes (issue 14, item 6). Pure functions; time is an argument in integer ms;
arithmetic is exact (Fraction), with Java's Math.round where Kafka rounds.

Mirrors Kafka 3.8 clients/.../metrics/stats/SampledStat.java, Rate.java and WindowedSum, and
core/.../utils/QuotaUtils.scala:

- `record(v, now)`: the current sample, or a new one when it is complete
  (`now − start ≥ window`; the ring keeps samples + 1 slots: the extra one is the "overlapping
  sample" a purge may keep), gets v added;
- `purgeObsoleteSamples(now)`: a sample whose last event is ≥ samples × window old is reset to
  an empty sample starting now;
- `windowSize(now)`: now − the oldest sample's start, raised to (samples − 1) full windows when
  less has elapsed, at least 1 ms; `Rate.measure` = the samples' sum / windowSize in seconds;
- `Sensor.checkQuotas`: a violation iff the measured rate > the bound (`Quota.acceptable` is
  `value <= bound` for an upper bound);
- `QuotaUtils.throttleTime`: round((value − bound) / bound × windowSize) — the delay X with
  O·W / (W + X) = T.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

from .quota import QuotaConfig, java_round


@dataclass(frozen=True, slots=True)
class Sample:
    start_ms: int
    last_event_ms: int
    value: Fraction = Fraction(0)
    event_count: int = 0


@dataclass(frozen=True, slots=True)
class RateSensor:
    """SampledStat's ring: the samples (at most samples + 1) and the index of the current one."""

    samples: tuple[Sample, ...] = ()
    current: int = 0


def _fresh(now_ms: int) -> Sample:
    return Sample(now_ms, now_ms)  # Sample.reset / newSample: initialValue 0, no events


def purge(sensor: RateSensor, config: QuotaConfig, now_ms: int) -> RateSensor:
    """purgeObsoleteSamples: reset every sample whose last event is at least samples × window old."""
    expire = config.samples * config.window_ms
    samples = tuple(_fresh(now_ms) if now_ms - s.last_event_ms >= expire else s for s in sensor.samples)
    return replace(sensor, samples=samples)


def record(sensor: RateSensor | None, config: QuotaConfig, value: int | Fraction, now_ms: int) -> RateSensor:
    """SampledStat.record (no purge: Sensor.record does not purge)."""
    s = sensor or RateSensor()
    samples, current = list(s.samples), s.current
    if not samples:
        samples.append(_fresh(now_ms))
    sample = samples[current]
    if now_ms - sample.start_ms >= config.window_ms:  # isComplete (eventWindow is unbounded)
        current = (current + 1) % (config.samples + 1)  # advance
        if current >= len(samples):
            samples.append(_fresh(now_ms))
        else:
            samples[current] = _fresh(now_ms)
        sample = samples[current]
    samples[current] = Sample(sample.start_ms, now_ms, sample.value + Fraction(value), sample.event_count + 1)
    return RateSensor(tuple(samples), current)


def window_size_ms(sensor: RateSensor | None, config: QuotaConfig, now_ms: int) -> tuple[int, RateSensor]:
    """Rate.windowSize (which purges first): (window in ms, the purged sensor)."""
    s = purge(sensor or RateSensor(), config, now_ms)
    if not s.samples:  # oldest() on an empty stat adds a fresh sample
        s = RateSensor((_fresh(now_ms),), 0)
    oldest = min(x.start_ms for x in s.samples)
    elapsed = now_ms - oldest
    full, least = elapsed // config.window_ms, config.samples - 1
    if full < least:
        elapsed += (least - full) * config.window_ms
    return max(elapsed, 1), s


def measure(sensor: RateSensor | None, config: QuotaConfig, now_ms: int) -> tuple[Fraction, RateSensor]:
    """Rate.measure in units per second: (rate, the purged sensor)."""
    window, s = window_size_ms(sensor, config, now_ms)
    total = sum((x.value for x in s.samples), Fraction(0))
    return total / Fraction(window, 1000), s


def throttle_time_ms(value: Fraction, bound: Fraction, window_ms: int) -> int:
    """QuotaUtils.throttleTime: Math.round((value − bound) / bound × windowSize)."""
    return java_round((Fraction(value) - bound) / bound * window_ms)


def check(sensor: RateSensor | None, config: QuotaConfig, now_ms: int) -> tuple[bool, int, RateSensor]:
    """Sensor.checkQuotas on a Rate: (within quota?, throttle time if not else 0, purged sensor)."""
    value, s = measure(sensor, config, now_ms)
    if value <= config.rate:
        return True, 0, s
    window, s = window_size_ms(s, config, now_ms)
    return False, throttle_time_ms(value, config.rate, window), s


__all__ = ["RateSensor", "Sample", "check", "measure", "purge", "record", "throttle_time_ms", "window_size_ms"]

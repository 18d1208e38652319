"""A conformance campaign (docs/conformance.md): scenarios drawn from the model with faults, run one after
another on one real cluster of the release, each checked step by step against the reference (the Admin
answers, the observed states, the waits; then each extra check: the metadata log, the controller's logs), a
divergent one minimized and kept replayable.

One cluster serves every scenario: that is sound because each scenario has its own topic, touches only it (its
faults touch brokers, which it brings back), starts only on a whole cluster, removes the throttles it set and
deletes its topic. A scenario whose wait did not hold leaves the cluster as it was: every node is started
again, and if the cluster does not come back whole it is replaced by a fresh one.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kreassign.checker.cluster import (
    AdminError,
    AdminRequestError,
    Cluster,
    ClusterError,
    ClusterSpec,
    start_cluster,
)
from kreassign.checker.scenarios.format import Scenario, write_scenario
from kreassign.checker.scenarios.generate import random_walk
from kreassign.checker.scenarios.pauses import PAUSE_BROKER_CONFIG, PAUSE_SESSION_TIMEOUT_MS
from kreassign.checker.scenarios.run import ZK_BROKER_CONFIG, ScenarioWaitError, restore, run_scenario
from kreassign.spec import actions as A

from kreassign.outputs import write_text_atomically

from .known_bugs import known_bug_of
from .minimize import Minimized, minimize
from .options import ConformanceOptions

#: a step's kind -> the fault it injects (the counts in the summary)
FAULT_OF_STEP = {"kill": "kill", "stop": "stop", "kill_controller": "failover", "reelect_controller": "failover",
                 "pause": "pause"}
#: the model action a fault's scenarios are required to take (each scenario requires one fault, in turn)
REQUIRED = {"kill": A.BrokerFail, "stop": A.BrokerFail, "failover": A.ControllerFailover,
            "pause": A.LeaderShrinkIsr}
#: an extra check after a scenario: (cluster, scenario, its run) -> divergences (each a dict with "kind" and
#: "what"); the run is run_scenario's RunResult
Check = Callable[[Cluster, Scenario, Any], list[dict]]


@dataclass
class ScenarioOutcome:
    index: int
    scenario: Scenario
    divergences: list[dict]
    seconds: float
    result: dict[str, Any] | None = None  # RunResult.to_json(): the steps, waits, observations
    error: str | None = None  # the run could not be done (the cluster, not the verdict)
    minimized: Minimized | None = None
    known: list[dict] = field(default_factory=list)  # divergences a declared Kafka bug explains (known_bugs.py)

    @property
    def verdict(self) -> str:
        if self.error:
            return "error"
        return "diverges" if self.divergences else "known" if self.known else "agrees"

    @property
    def faults(self) -> Counter:
        return Counter(FAULT_OF_STEP[s.do] for s in self.scenario.steps if s.do in FAULT_OF_STEP)

    def to_json(self, with_scenario: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.index, "topic": self.scenario.topic, "seed": self.scenario.seed,
                               "verdict": self.verdict, "steps": len(self.scenario.steps),
                               "faults": dict(sorted(self.faults.items())), "seconds": round(self.seconds, 2),
                               "divergences": self.divergences}
        if self.known:
            out["known_kafka_bugs"] = self.known
        if self.error:
            out["error"] = self.error
        if with_scenario or self.divergences or self.known:
            out["scenario"] = self.scenario.to_json()
        if self.minimized is not None:
            out["minimized"] = {"steps": len(self.minimized.scenario.steps), "runs": self.minimized.runs,
                                "divergences": self.minimized.divergences,
                                "scenario": self.minimized.scenario.to_json()}
        return out


@dataclass
class CampaignResult:
    options: ConformanceOptions
    outcomes: list[ScenarioOutcome] = field(default_factory=list)
    cluster_starts: list[float] = field(default_factory=list)  # seconds each cluster took to start
    seconds: float = 0.0
    stopped: str | None = None  # "interrupted" when Ctrl-C ended the campaign early

    def totals(self) -> dict[str, Any]:
        verdicts = Counter(o.verdict for o in self.outcomes)
        faults: Counter = Counter()
        for o in self.outcomes:
            faults.update(o.faults)
        running = sum(o.seconds for o in self.outcomes)
        return {"scenarios": len(self.outcomes), "agree": verdicts["agrees"], "diverge": verdicts["diverges"],
                "known": verdicts["known"], "errors": verdicts["error"],
                "known_kafka_bugs": dict(sorted(Counter(k["kafka_issue"] for o in self.outcomes
                                                        for k in o.known).items())), "steps": sum(len(o.scenario.steps) for o in self.outcomes),
                "faults": dict(sorted(faults.items())),
                "divergences_by_kind": dict(sorted(Counter(d["kind"] for o in self.outcomes
                                                           for d in o.divergences).items())),
                "cluster_starts": len(self.cluster_starts),
                "cluster_start_seconds": round(sum(self.cluster_starts), 1),
                "seconds": round(self.seconds, 1),
                "scenarios_per_minute": round(60 * len(self.outcomes) / self.seconds, 2) if self.seconds else 0.0,
                "seconds_per_scenario": round(running / len(self.outcomes), 1) if self.outcomes else 0.0}

    @property
    def exit_code(self) -> int:
        """1: a divergence; 3: a scenario the cluster could not run (and no divergence); 0: all agree."""
        t = self.totals()
        return 1 if t["diverge"] else 3 if t["errors"] else 0

    def to_json(self) -> dict[str, Any]:
        o = self.options
        return {"format": "kreassign-conformance", "format_version": 1, "kafka_version": o.kafka_version,
                "mode": o.mode, "seed": o.seed, "faults": list(o.faults), "brokers": o.brokers,
                "length": o.length, "stopped": self.stopped, "totals": self.totals(),
                "scenarios": [s.to_json() for s in self.outcomes]}


def draw(options: ConformanceOptions, index: int) -> Scenario:
    """The index-th scenario of a campaign: a seeded walk at the index-th bounds, required to inject the
    index-th of the campaign's faults (so every kind is exercised), on a topic of its own."""
    seed = options.seed + index
    faults = tuple(options.faults)
    require = (REQUIRED[faults[index % len(faults)]],) if faults else ()
    return random_walk(options.bounds(index), seed, options.length, topic=f"conformance-{seed}",
                       kafka_version=options.kafka_version, require=require, faults=faults, mode=options.mode)


#: the controller's periodic preferred-leader balancing off (every 300 s in KRaft, QuorumController's
#: maybeBalancePartitionLeaders; 5 s after each election in ZooKeeper mode, run.ZK_BROKER_CONFIG): the model at
#: these bounds does not take it (AutoLeaderBalance is a capability of its own), and a campaign outlives 300 s
NO_AUTO_BALANCE = (("auto.leader.rebalance.enable", "false"),)


def cluster_spec(options: ConformanceOptions, scenarios: Iterable[Scenario] = ()) -> ClusterSpec:
    """One controller and the campaign's brokers, its leader balancing off; the settings pauses need when it
    may pause a follower."""
    pauses = "pause" in options.faults or any(s.do == "pause" for sc in scenarios for s in sc.steps)
    brokers = (PAUSE_BROKER_CONFIG if pauses else ()) + (ZK_BROKER_CONFIG if options.mode == "zk" else ())
    return ClusterSpec(version=options.kafka_version, mode=options.mode, controllers=1, brokers=options.brokers,
                       broker_config=brokers,
                       controller_config=NO_AUTO_BALANCE if options.mode == "kraft" else (),
                       session_timeout_ms=PAUSE_SESSION_TIMEOUT_MS if pauses else 6000)


class Campaign:
    def __init__(self, options: ConformanceOptions, *, log: Callable[[str], None] = lambda _m: None,
                 checks: tuple[Check, ...] = (), out_dir: str | None = None,
                 start: Callable[..., Cluster] | None = None):
        self.options, self.log, self.checks = options, log, checks
        self.start = start or start_cluster
        self.out = Path(out_dir) if out_dir else None
        self.cluster: Cluster | None = None
        self.spec: ClusterSpec | None = None

    # -- the cluster ------------------------------------------------------------------------------------

    def _start(self, result: CampaignResult) -> Cluster:
        assert self.spec is not None
        t0 = time.monotonic()
        self.cluster = self.start(self.spec)
        result.cluster_starts.append(time.monotonic() - t0)
        self.log(f"conformance: {self.spec.describe()} up in {result.cluster_starts[-1]:.1f} s at "
                 f"{self.cluster.bootstrap}")
        return self.cluster

    def _heal(self, result: CampaignResult) -> None:
        """Every node running again; a fresh cluster if this one does not come back whole."""
        assert self.cluster is not None
        try:
            restore(self.cluster)
            self.cluster.wait_until_ready()
        except (ClusterError, AdminError, AdminRequestError) as e:
            self.log(f"conformance: the cluster did not come back whole ({str(e).splitlines()[0]}); starting a "
                     "fresh one")
            self.cluster.close()
            self._start(result)

    # -- one scenario -----------------------------------------------------------------------------------

    def _attempt(self, scenario: Scenario, result: CampaignResult) -> tuple[list[dict], dict | None, str | None]:
        """Run one scenario and the extra checks: (divergences, the run's JSON, an infrastructure error)."""
        assert self.cluster is not None
        try:
            run = run_scenario(self.cluster, scenario, settle_s=self.options.settle_s)
        except ScenarioWaitError as e:
            run = e.result
            wait = {"kind": "wait", "step": len(run.steps) - 1, "what": run.failed,
                    "detail": str(e).splitlines()[0]}
            self._heal(result)
            return [*run.divergences, wait], run.to_json(), None
        except (ClusterError, AdminError, AdminRequestError) as e:  # the cluster, not a verdict
            self._heal(result)
            return [], None, str(e).splitlines()[0]
        divergences = list(run.divergences)
        try:
            for check in self.checks:
                divergences += check(self.cluster, scenario, run)
        except (ClusterError, AdminError, AdminRequestError) as e:  # a check the cluster could not answer
            self._heal(result)
            return divergences, run.to_json(), str(e).splitlines()[0]
        try:
            self.cluster.admin.delete_topics([scenario.topic])
        except (ClusterError, AdminError, AdminRequestError) as e:  # not a verdict: the next topic is its own
            self.log(f"conformance: could not delete {scenario.topic}: {str(e).splitlines()[0]}")
        return divergences, run.to_json(), None

    def _one(self, index: int, scenario: Scenario, result: CampaignResult) -> ScenarioOutcome:
        assert self.cluster is not None
        down = [n.name for n in self.cluster.nodes if n.role in ("broker", "controller") and n.state != "running"]
        if down:  # a node that ended on its own during the last scenario: each scenario starts on a whole cluster
            self.log(f"conformance: {', '.join(down)} not running before {scenario.topic}: starting it again")
            self._heal(result)
        t0 = time.monotonic()
        found, run, error = self._attempt(scenario, result)
        divergences, known = _classify(scenario, found)
        outcome = ScenarioOutcome(index, scenario, divergences, time.monotonic() - t0, run, error, known=known)
        if divergences and self.options.minimize_runs:
            self.log(f"conformance: {scenario.topic} diverges ({_first(divergences)}); minimizing "
                     f"(at most {self.options.minimize_runs} runs)")

            def replay(candidate: Scenario) -> list[dict] | None:
                found, _, err = self._attempt(candidate, result)
                return None if err else _classify(candidate, found)[0]

            outcome.minimized = minimize(scenario, divergences, replay, self.options.minimize_runs)
        self._write(outcome)
        return outcome

    def _write(self, outcome: ScenarioOutcome) -> None:
        if self.out is None:
            return
        self.out.mkdir(parents=True, exist_ok=True)
        topic = outcome.scenario.topic
        write_scenario(outcome.scenario, str(self.out / f"{topic}.scenario.json"))
        if outcome.result is not None:
            write_text_atomically(str(self.out / f"{topic}.result.json"), json.dumps(outcome.result, indent=1) + "\n")
        if outcome.minimized is not None:
            write_scenario(outcome.minimized.scenario, str(self.out / f"{topic}.minimized.json"))

    # -- the campaign -----------------------------------------------------------------------------------

    def run(self, scenarios: list[Scenario] | None = None) -> CampaignResult:
        """Draw options.scenarios scenarios (or run the given ones) on one cluster; Ctrl-C ends the campaign
        with what was done (stopped: "interrupted"), the cluster removed."""
        o = self.options
        result = CampaignResult(o)
        given = scenarios is not None
        total = len(scenarios) if scenarios is not None else o.scenarios
        self.spec = cluster_spec(o, scenarios or ())
        started = time.monotonic()
        try:
            self._start(result)
            for index in range(total):
                scenario = scenarios[index] if given else draw(o, index)  # type: ignore[index]
                outcome = self._one(index, scenario, result)
                result.outcomes.append(outcome)
                faults = ", ".join(f"{k} {v}" for k, v in sorted(outcome.faults.items())) or "no fault"
                extra = f": {_first(outcome.divergences)}" if outcome.divergences else \
                    f": {outcome.error}" if outcome.error else \
                    f": {outcome.known[0]['kafka_issue']} ({outcome.known[0]['known_bug']})" if outcome.known else ""
                self.log(f"conformance: [{index + 1}/{total}] {scenario.topic} {outcome.verdict} "
                         f"({len(scenario.steps)} steps; {faults}) in {outcome.seconds:.1f} s{extra}")
        except KeyboardInterrupt:
            result.stopped = "interrupted"
        finally:
            result.seconds = time.monotonic() - started
            if self.cluster is not None:
                self.cluster.close()
        return result


def _classify(scenario: Scenario, found: list[dict]) -> tuple[list[dict], list[dict]]:
    """(the divergences, those a declared Kafka bug explains — each marked with its issue)."""
    divergences, known = [], []
    for d in found:
        bug = known_bug_of(scenario, d)
        if bug is None:
            divergences.append(d)
        else:
            known.append({**d, "kafka_issue": bug.kafka_issue, "known_bug": bug.name})
    return divergences, known


def _first(divergences: list[dict]) -> str:
    d = divergences[0]
    what = d.get("what") or f"{d.get('field')}: expected {d.get('expected')}, observed {d.get('observed')}"
    more = f" (+{len(divergences) - 1} more)" if len(divergences) > 1 else ""
    return f"{d['kind']} at step {d.get('step')}: {what}{more}"


__all__ = ["FAULT_OF_STEP", "Campaign", "CampaignResult", "Check", "ScenarioOutcome", "cluster_spec", "draw"]

"""A divergent scenario made smaller (docs/conformance.md): steps are left out one at a time, each candidate
rebuilt on the model (a step that is no longer enabled drops the candidate; every paused follower is still
resumed and every failed broker brought back at the end) and replayed on the cluster; a candidate that still
diverges replaces the scenario. Greedy, within a budget of runs: the result is smaller, not the smallest."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kreassign.checker.scenarios.format import Scenario
from kreassign.checker.scenarios.generate import actions_of, from_actions


@dataclass
class Minimized:
    scenario: Scenario  # the smallest divergent scenario found (the original if none was smaller)
    runs: int  # cluster runs spent
    divergences: list[dict]  # what the smallest one showed


def minimize(scenario: Scenario, divergences: list[dict], replay: Callable[[Scenario], list[dict] | None],
             budget: int) -> Minimized:
    """`replay(candidate)` runs a candidate on the cluster and returns its divergences (empty: it agrees; None:
    it could not be run). Each candidate's topic is the scenario's with a suffix, so that none collides."""
    best, best_div = scenario, divergences
    runs = 0
    improved = True
    while improved and runs < budget:
        improved = False
        actions = actions_of(best)
        for i in range(len(actions)):
            if runs >= budget:
                break
            candidate = from_actions(best, actions[:i] + actions[i + 1:], topic=f"{scenario.topic}-m{runs + 1}")
            if candidate is None or len(candidate.steps) >= len(best.steps):
                continue  # no longer valid on the model, or no smaller (a closing restart comes back)
            runs += 1
            found = replay(candidate)
            if found:
                best, best_div, improved = candidate, found, True
                break
    return Minimized(best, runs, best_div)


__all__ = ["Minimized", "minimize"]

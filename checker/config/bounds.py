"""Bounds of a reassignment model: what the explorer may do, as data (TOML file or CLI flags).

A TOML config holds one `[bounds]` table (and optionally `[profiles]`):

    [bounds]
    brokers = 4            # broker ids 1..brokers
    partitions = 1         # partitions of topic "t"
    rf = 2                 # replication factor of the initial assignment
    initial = [[1, 2]]     # initial replicas per partition (default: 1..rf for each)
    targets = "all"        # "all" RF-subsets (ascending ids), "permutations" (every order of
                           # every RF-subset), or a list like [[3, 4], [1, 3]]
    reassigns = 1          # Reassign requests (including overrides) the admin may send
    cancels = 1            # Cancel requests
    failures = 0           # BrokerFail actions (recoveries are free)
    failovers = 0          # controller failovers
    isr_changes = true     # leaders may shrink / expand the ISR
    elections = []         # ElectLeaders types to try: "PREFERRED", "UNCLEAN"
    unclean = false        # the topic's unclean.leader.election.enable
    replication = false    # the replication layer (logs, high watermark)
    log_length = 1         # records a leader may append
    znode = false          # zk/kip236: the legacy /admin/reassign_partitions route
    broker_view = false    # check the broker's own view (under-replicated, adding local replica)
    throttles = false      # the admin uses kafka-reassign-partitions.sh with --throttle
                           # (--execute/--cancel/--verify) and the throttle properties are checked
    create_partitions = 0  # CreatePartitions requests (one new partition each) the admin may send
    fair = false           # liveness under weak fairness, brokers that may stay down (lassos)
    broker_replicas = false  # the logs brokers host, created/deleted as they replay the metadata
    leader_balance = false # the controller's periodic preferred-leader balancing runs
    zk_versions = false    # zk: the controller's cached leader/ISR with zkVersions, leaders' own ISR
                           # writes to ZooKeeper, and the controller-memory properties
    kraft_actions = []     # kraft: the controller's own actions to explore, from "controlled-shutdown",
                           # "restart", "balance-leaders", "elect-unclean" (docs/kafka.md)
    delete_topic = false   # the admin may delete the topic (DeleteTopic; zk: deferred while reassigning)
    kafka_version = ""     # kraft: the Kafka release whose controller the profile follows, e.g. "4.4.0"
                           # (default: the newest; spec/kafka_releases.py, docs/kafka.md)
    elr = ""               # kraft: eligible leader replicas (KIP-966) "on" or "off" (default: what the
                           # release formats a new cluster with at its metadata.version)
    min_insync = 1         # the topic's min.insync.replicas (ELR's bound)
    actors = []            # tools and automation acting beside the controller, from "rebalancer",
                           # "auto-throttler", "second-operator" (these two need throttles), "bad-plans"
    broker_isr = false     # kraft/zk: the leaders' ISR maintenance (fetches, lag, expiry, AlterPartition in
                           # flight, KIP-497 maximal ISR) in place of LeaderExpandIsr/LeaderShrinkIsr; turns
                           # the replication layer on; with broker_replicas, the followers' fetchers
    znode_batch = false    # zk: /admin/reassign_partitions written as one batch of every partition
                           # (ZnodeReassignBatch, needs znode and partitions >= 2) and the forced cancel
                           # before KIP-455 (ZnodeDelete, then ControllerFailover); its properties
    zk_events = false      # zk: the controller's identity (ControllerResign / ControllerElect(b) in place of
                           # ControllerFailover, from the failovers budget) and its event queue (with
                           # zk_versions, leaders' ISR writes whose notifications wait behind the run)

Every key is checked: an unknown key, a wrong type or an out-of-range value is an
error that names the key.
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass, fields
from itertools import combinations, permutations
from typing import Any

from kreassign.errors import UsageError

#: no bound may exceed this: larger values are typos or attacks, not models (and would make
#: validation itself allocate without end); the state-space estimate refuses far smaller ones
MAX_BOUND = 1_000_000


class ConfigError(UsageError, ValueError):
    """A bad bound; the message names the key (exit code 2)."""


def short(value: Any, limit: int = 60) -> str:
    """repr(value), cut to `limit` characters; integers too long to print are described by size."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"an integer of about {int(value.bit_length() * 0.30103)} digits"
    try:
        text = repr(value)
    except ValueError:  # a nested integer beyond Python's digit limit
        text = f"a {type(value).__name__} too large to print"
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class Bounds:
    brokers: int = 3
    partitions: int = 1
    rf: int = 2
    initial: tuple[tuple[int, ...], ...] | None = None
    targets: str | tuple[tuple[int, ...], ...] = "all"
    reassigns: int = 1
    cancels: int = 1
    failures: int = 0
    failovers: int = 0
    isr_changes: bool = True
    elections: tuple[str, ...] = ()
    unclean: bool = False
    replication: bool = False
    log_length: int = 1
    znode: bool = False
    # issue 14 capabilities, all off by default (the default suite's pinned counts do not move)
    broker_view: bool = False
    throttles: bool = False
    create_partitions: int = 0
    fair: bool = False
    broker_replicas: bool = False
    leader_balance: bool = False
    zk_versions: bool = False
    kraft_actions: tuple[str, ...] = ()  # in CONTROLLER_ACTIONS' order (normalized below)
    delete_topic: bool = False
    kafka_version: str = ""  # "" = the newest release (spec/kafka_releases.py)
    elr: str = ""  # "", "on" or "off"
    min_insync: int = 1
    actors: tuple[str, ...] = ()  # in ACTOR_NAMES' order (normalized below)
    broker_isr: bool = False
    znode_batch: bool = False
    zk_events: bool = False

    def __post_init__(self) -> None:
        for name in ("brokers", "partitions", "rf", "reassigns", "cancels", "failures", "failovers", "log_length",
                     "create_partitions"):
            if abs(getattr(self, name)) > MAX_BOUND:
                raise ConfigError(f"{name}: must be between -{MAX_BOUND:,} and {MAX_BOUND:,}, got {short(getattr(self, name))}")
        for name in ("brokers", "partitions", "rf"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: must be at least 1, got {getattr(self, name)}")
        for name in ("reassigns", "cancels", "failures", "failovers", "log_length", "create_partitions"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name}: must not be negative, got {getattr(self, name)}")
        if self.znode_batch and not self.znode:
            raise ConfigError("znode_batch: needs znode = true (the batch is written to /admin/reassign_partitions)")
        if self.znode_batch and self.partitions < 2:
            raise ConfigError(f"znode_batch: needs partitions >= 2 (a batch names several), got {self.partitions}")
        if self.rf > self.brokers:
            raise ConfigError(f"rf: {self.rf} is larger than the number of brokers ({self.brokers})")
        if not 1 <= self.min_insync <= MAX_BOUND:
            raise ConfigError(f"min_insync: must be at least 1, got {short(self.min_insync)}")
        if self.elr not in ("", "on", "off"):
            raise ConfigError(f"elr: expected \"on\" or \"off\", got {short(self.elr)}")
        if self.kafka_version:
            from kreassign.spec import kafka_releases

            try:
                kafka_releases.release(self.kafka_version)
            except ValueError as e:
                raise ConfigError(f"kafka_version: {e}") from None
        for e in self.elections:
            if e not in ("PREFERRED", "UNCLEAN"):
                raise ConfigError(f"elections: unknown election type {e!r} (PREFERRED or UNCLEAN)")
        ids = set(self.broker_ids)
        for key, lists in (("initial", self.initial or ()), ("targets", () if isinstance(self.targets, str) else self.targets)):
            for k, replicas in enumerate(lists):
                if not replicas:
                    raise ConfigError(f"{key}[{k}]: empty replica list")
                if len(set(replicas)) != len(replicas):
                    raise ConfigError(f"{key}[{k}]: duplicate broker ids in {list(replicas)}")
                for b in replicas:
                    if b not in ids:
                        raise ConfigError(f"{key}[{k}]: broker {b} is not one of 1..{self.brokers}")
        if isinstance(self.targets, str) and self.targets not in ("all", "permutations"):
            raise ConfigError(f"targets: expected \"all\", \"permutations\" or a list of replica lists, got {self.targets!r}")
        if self.initial is not None and len(self.initial) != self.partitions:
            raise ConfigError(f"initial: {len(self.initial)} replica lists for {self.partitions} partitions")
        if self.actors:
            from kreassign.reference.actors import ACTOR_NAMES, THROTTLE_ACTORS

            unknown = [a for a in self.actors if a not in ACTOR_NAMES]
            if unknown:
                raise ConfigError(f"actors: unknown actor(s) {short(', '.join(map(str, unknown)))} "
                                  f"(known: {', '.join(ACTOR_NAMES)})")
            needs = [a for a in self.actors if a in THROTTLE_ACTORS]
            if needs and not self.throttles:
                raise ConfigError(f"actors: {', '.join(needs)} manage(s) the tool's throttles: needs throttles = true")
            if "rebalancer" in self.actors and self.throttles:
                raise ConfigError("actors: the rebalancer sends AlterPartitionReassignments without the tool's "
                                  "throttles; not modelled together with throttles = true")
            object.__setattr__(self, "actors", tuple(a for a in ACTOR_NAMES if a in self.actors))
        if self.kraft_actions:
            from kreassign.reference.kraft import CONTROLLER_ACTIONS

            unknown = [a for a in self.kraft_actions if a not in CONTROLLER_ACTIONS]
            if unknown:
                raise ConfigError(f"kraft_actions: unknown action(s) {short(', '.join(map(str, unknown)))} "
                                  f"(known: {', '.join(CONTROLLER_ACTIONS)})")
            # one spelling per set of actions, so that equal bounds compare (and hash) equal
            object.__setattr__(self, "kraft_actions", tuple(a for a in CONTROLLER_ACTIONS if a in self.kraft_actions))

    @property
    def broker_ids(self) -> tuple[int, ...]:
        return tuple(range(1, self.brokers + 1))

    def initial_assignment(self) -> list[list[int]]:
        if self.initial is not None:
            return [list(r) for r in self.initial]
        return [list(range(1, self.rf + 1)) for _ in range(self.partitions)]

    def target_lists(self) -> tuple[tuple[int, ...], ...]:
        if self.targets == "all":
            return tuple(combinations(self.broker_ids, self.rf))
        if self.targets == "permutations":
            return tuple(permutations(self.broker_ids, self.rf))
        return tuple(tuple(t) for t in self.targets)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        for k in OPTIONAL_KEYS:  # later additions: omitted at their default, so older traces stay identical
            if d[k] == getattr(Bounds, k):
                del d[k]
        return {k: (list(map(list, v)) if k in ("initial", "targets") and isinstance(v, tuple) else v) for k, v in d.items()}


_TYPES = {f.name: f.type for f in fields(Bounds)}

#: keys added after trace files fixed the bounds' JSON form (omitted from it at their default)
OPTIONAL_KEYS = ("broker_view", "throttles", "create_partitions", "fair", "broker_replicas", "leader_balance",
                 "kraft_actions", "delete_topic", "zk_versions", "kafka_version", "elr", "min_insync", "actors", "broker_isr",
                 "znode_batch", "zk_events")


def bounds_from_mapping(data: dict[str, Any], base: Bounds | None = None, where: str = "bounds") -> Bounds:
    """Build Bounds from a mapping (TOML table or JSON), checking every key and type."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a table")
    values = asdict(base or Bounds())
    for key, v in data.items():
        if key not in values:
            raise ConfigError(f"{where}.{key}: unknown key (known: {', '.join(values)})")
        default = getattr(Bounds(), key)
        if isinstance(default, bool):
            if not isinstance(v, bool):
                raise ConfigError(f"{where}.{key}: expected true or false, got {short(v)}")
        elif isinstance(default, int):
            if isinstance(v, bool) or not isinstance(v, int):
                raise ConfigError(f"{where}.{key}: expected an integer, got {short(v)}")
        elif key in ("initial", "targets"):
            if (key == "targets" and v in ("all", "permutations")) or (key == "initial" and v is None):
                pass
            elif not isinstance(v, list) or not all(
                isinstance(r, list) and all(isinstance(b, int) and not isinstance(b, bool) for b in r) for r in v
            ):
                raise ConfigError(f"{where}.{key}: expected a list of lists of broker ids, got {short(v)}")
            else:
                v = tuple(tuple(r) for r in v)
        elif isinstance(default, str) and key != "targets":
            if not isinstance(v, str):
                raise ConfigError(f"{where}.{key}: expected a string, got {short(v)}")
        elif key in ("elections", "kraft_actions", "actors"):
            if not isinstance(v, list) or not all(isinstance(e, str) for e in v):
                raise ConfigError(f"{where}.{key}: expected a list of strings, got {short(v)}")
            v = tuple(v)
        values[key] = v
    try:
        return Bounds(**values)
    except ConfigError as e:
        raise ConfigError(f"{where}.{e}") from None


def load_config(path: str) -> tuple[Bounds, list[str] | None]:
    """Read a TOML config: ([bounds] as Bounds, [profiles].names or None)."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a TOML file") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from None
    except (ValueError, RecursionError) as e:  # e.g. an integer beyond Python's digit limit
        raise ConfigError(f"{path}: invalid TOML: {str(e)[:200]}") from None
    for key in data:  # [quota_handlers]: the kip599-handlers profiles' bounds (models/quota.py reads it)
        if key not in ("bounds", "profiles", "quota_handlers"):
            raise ConfigError(f"{path}: unknown table [{key}] (expected [bounds], [profiles], [quota_handlers])")
    bounds = bounds_from_mapping(data.get("bounds", {}), where=f"{path}: bounds")
    names = None
    if "profiles" in data:
        if not isinstance(data["profiles"], dict):
            raise ConfigError(f"{path}: profiles: expected a table [profiles] with names = [...], "
                              f"got {short(data['profiles'])}")
        names = data["profiles"].get("names")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ConfigError(f"{path}: profiles.names: expected a list of profile names")
    return bounds, names

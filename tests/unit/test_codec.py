"""JSON form of states and actions: round trips, and errors that name the offending field."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kreassign.reference import ActionSpace, profile
from kreassign.spec import actions as A
from kreassign.spec.codec import DecodeError, decode_action, state_from_json, to_json
from kreassign.spec.state import make_cluster


def base_json():
    return to_json(make_cluster(3, {"t": [[0, 1, 2]]}, replication_layer=True))


def test_state_round_trip_including_replication_layer():
    s = make_cluster(3, {"t": [[0, 1, 2], [2, 1]]}, unclean=["t"], replication_layer=True)
    assert state_from_json(to_json(s)) == s


@given(st.lists(st.integers(0, 1000), max_size=12))
def test_round_trip_of_reachable_states_and_their_actions(choices):
    prof = profile("kraft")
    s = make_cluster(range(1, 5), {"t": [[1, 2]]})
    space = ActionSpace(targets=(("t", 0, (3, 4)), ("t", 0, (1, 3))), failures=True)
    for c in choices:
        acts = prof.enabled_actions(s, space)
        a = acts[c % len(acts)]
        assert decode_action(to_json(a)) == a
        s = prof.apply(s, a).state
        assert state_from_json(to_json(s)) == s


@pytest.mark.parametrize(
    "mutate, path, words",
    [
        (lambda d: d["topics"][0]["partitions"][0].__setitem__("isr", [0, "x"]), "topics[0].partitions[0].isr[1]", "integer"),
        (lambda d: d["topics"][0]["partitions"][0].__setitem__("replicas", [0, 0]), "topics[0].partitions[0].replicas", "duplicate"),
        (lambda d: d["topics"][0]["partitions"][0].__setitem__("replicas", [0, -3]), "topics[0].partitions[0].replicas[1]", "negative"),
        (lambda d: d["topics"][0]["partitions"][0].__setitem__("replicas", [0, 7]), "topics[0].partitions[0].replicas[1]", "unknown broker 7"),
        (lambda d: d["brokers"][1].__setitem__("id", 0), "brokers[1].id", "duplicate"),
        (lambda d: d["brokers"][0].__setitem__("active", 1), "brokers[0].active", "true or false"),
        (lambda d: d["topics"][0].pop("name"), "topics[0].name", "missing"),
        (lambda d: d["topics"][0].__setitem__("colour", "red"), "topics[0].colour", "unknown field"),
        (lambda d: d["topics"][0]["partitions"][0].__setitem__("leader_epoch", True), "topics[0].partitions[0].leader_epoch", "integer"),
    ],
)
def test_bad_state_input_names_the_field(mutate, path, words):
    data = base_json()
    mutate(data)
    with pytest.raises(DecodeError) as e:
        state_from_json(data)
    assert e.value.path == path
    assert words in str(e.value)


def test_bad_action_input_names_the_field():
    with pytest.raises(DecodeError, match="unknown action 'Frobnicate'"):
        decode_action({"type": "Frobnicate"})
    with pytest.raises(DecodeError) as e:
        decode_action({"type": "Reassign", "topic": "t", "partition": 0, "replicas": [1, "2"]})
    assert e.value.path == "replicas[1]"
    assert decode_action(to_json(A.Cancel("t", 3))) == A.Cancel("t", 3)

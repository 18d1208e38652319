"""The resident layout's wire (checker/spark/resident/wire.py) and the choice of layout (checker/spark/layout.py).

The wire: records reach their mailbox filed by (level, kind) once every sender has ended its part; a
connection without the run's token is refused (and the server goes on accepting); a peer that goes away is
an error naming it, not a wait for ever. The choice: auto takes the resident layout where it applies, the
levels layout where the run needs it, and asking for the resident layout where it does not apply is a usage
error naming why.
"""

from __future__ import annotations

import socket
import threading

import pytest
from kreassign.checker.check.suite import DEFAULT_SUITE
from kreassign.checker.models.registry import build_model
from kreassign.checker.spark.engine import explore_spark
from kreassign.checker.spark.layout import layout_for
from kreassign.checker.spark.options import SparkOptions
from kreassign.checker.spark.resident.wire import Channel, Mailbox, Peers, WireError, accept, connect, listen

from kreassign.errors import UsageError

pytestmark = pytest.mark.spark

TOKEN = b"0123456789abcdef"


def test_records_are_filed_by_level_and_kind_once_every_sender_ended():
    boxes = [Mailbox("127.0.0.1", TOKEN, 2) for _ in range(2)]
    addresses = [b.address for b in boxes]
    peers = [None, None]

    def open_peers(i):
        peers[i] = Peers(i, addresses, TOKEN, boxes[i])

    threads = [threading.Thread(target=open_peers, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        peers[0].send(1, 3, "cands", ("a",))
        peers[1].send(1, 3, "cands", ("b",))  # (to itself: straight into its own mailbox)
        peers[0].send(1, 4, "cands", ("later",))
        for p in peers:
            p.end(3, "cands")
        assert sorted(boxes[1].take(3, "cands", wait=10)) == [(0, ("a",)), (1, ("b",))]
        assert boxes[0].take(3, "cands", wait=10) == []
        with pytest.raises(WireError, match="waited 0.5 s"):  # level 4 was not ended
            boxes[1].take(4, "cands", wait=0.5)
        peers[0].close()  # a peer that goes away: an error, not a wait for ever
        with pytest.raises(WireError, match="peer 0"):
            boxes[1].take(5, "cands", wait=30)
    finally:
        for p in peers:
            p.close()
        for b in boxes:
            b.close()


def test_a_connection_without_the_token_is_refused():
    server = listen("127.0.0.1")
    address = server.getsockname()[:2]
    try:
        stray = socket.create_connection(address)
        stray.sendall(b"x" * len(TOKEN))
        good = connect(address, TOKEN, ("hello", 7))
        sock, hello = accept(server, TOKEN, 10)  # (the stray one is closed and skipped)
        assert hello == ("hello", 7)
        Channel(good, "test").send(("deduped", 1, 5))
        assert Channel(sock, "test").recv(wait=10) == ("deduped", 1, 5)
        for s in (stray, good, sock):
            s.close()
    finally:
        server.close()


def test_auto_takes_the_resident_layout_where_it_applies(sc, tmp_path):
    model = build_model("reassignment", "kraft", DEFAULT_SUITE["kraft"])  # (it has eventually properties)
    assert layout_for(sc, model, SparkOptions(), 2) == "resident"
    assert layout_for(sc, model, SparkOptions(liveness=True), 2) == "levels"
    assert layout_for(sc, model, SparkOptions(keep_graph=True), 2) == "levels"
    assert layout_for(sc, model, SparkOptions(checkpoint_dir=str(tmp_path)), 2) == "levels"
    assert layout_for(sc, model, SparkOptions(), 9) == "levels"  # more buckets than local[2]'s slots
    assert layout_for(sc, model, SparkOptions(layout="levels"), 2) == "levels"
    with pytest.raises(UsageError, match="resident: not with checkpoints"):
        layout_for(sc, model, SparkOptions(layout="resident", checkpoint_dir=str(tmp_path)), 2)
    with pytest.raises(UsageError, match="9 buckets on 2 task slots"):
        explore_spark(model, SparkOptions(layout="resident", partitions=9), sc=sc)


def test_an_unknown_layout_is_refused():
    with pytest.raises(ValueError, match="layout: expected one of auto, resident, levels"):
        SparkOptions(layout="fast")

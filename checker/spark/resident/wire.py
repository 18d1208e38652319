"""The resident layout's wire: pickled messages over TCP, between the driver and its tasks and between tasks.

A message is an 8-byte length, then the pickled value (protocol 5). Every connection opens with the
run's secret token, so a stray connection to a task's or the driver's port is refused rather than read.
`Channel` is one connection (the driver's to a task, a task's to the driver); `Mailbox` is a task's
server, whose receiving threads file the records its peers send by (level, kind, sender); `Peers` are
a task's connections to the other tasks. Every wait has a timeout and names what it waited for.
"""

from __future__ import annotations

import contextlib
import hmac
import pickle
import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import Any

HEADER = struct.Struct("<Q")
#: seconds a task or the driver waits for one message before it gives up (a peer that died says so sooner:
#: its connection closes)
WAIT_SECONDS = 3600.0


class WireError(RuntimeError):
    """A connection closed, a wrong token, or a wait that timed out."""


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if not k:
            raise WireError("connection closed")
        got += k
    return bytes(buf)


def send_value(sock: socket.socket, value: Any) -> int:
    """Send one message; the bytes it took."""
    data = pickle.dumps(value, protocol=5)
    sock.sendall(HEADER.pack(len(data)))
    sock.sendall(data)
    return HEADER.size + len(data)


def recv_value(sock: socket.socket) -> Any:
    (n,) = HEADER.unpack(_recv_exact(sock, HEADER.size))
    return pickle.loads(_recv_exact(sock, n))  # (the connection presented the run's token)


def listen(host: str) -> socket.socket:
    """A listening socket on `host`, on a port the system picks."""
    server = socket.create_server((host, 0), backlog=256)
    return server


def connect(address: tuple[str, int], token: bytes, hello: Any, timeout: float = 60.0) -> socket.socket:
    """A connection to `address` that has presented `token` and sent `hello`."""
    sock = socket.create_connection(address, timeout=timeout)
    sock.settimeout(None)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.sendall(token)
    send_value(sock, hello)
    return sock


def accept(server: socket.socket, token: bytes, timeout: float) -> tuple[socket.socket, Any]:
    """The next connection that presents `token`, and its hello (others are closed and skipped)."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise WireError(f"no connection within {timeout:g} s")
        server.settimeout(min(left, 1.0))
        try:
            sock, _ = server.accept()
        except TimeoutError:
            continue
        sock.settimeout(10.0)
        try:
            ok = hmac.compare_digest(_recv_exact(sock, len(token)), token)
            hello = recv_value(sock) if ok else None
        except (OSError, WireError, pickle.UnpicklingError):
            ok = False
        if not ok:
            with contextlib.suppress(OSError):
                sock.close()
            continue
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock, hello


class Channel:
    """One connection, one message at a time each way; `recv` waits at most `wait` seconds, asking `alive`
    (when given) every second whether waiting still makes sense."""

    def __init__(self, sock: socket.socket, name: str):
        self.sock, self.name = sock, name

    def send(self, value: Any) -> int:
        try:
            return send_value(self.sock, value)
        except OSError as e:
            raise WireError(f"{self.name}: {e}") from None

    def recv(self, wait: float = WAIT_SECONDS, alive: Callable[[], None] | None = None) -> Any:
        deadline = time.monotonic() + wait
        while True:
            self.sock.settimeout(1.0)
            try:
                head = self.sock.recv(HEADER.size, socket.MSG_PEEK)
            except TimeoutError:
                if alive is not None:
                    alive()
                if time.monotonic() > deadline:
                    raise WireError(f"{self.name}: nothing received in {wait:g} s") from None
                continue
            except OSError as e:
                raise WireError(f"{self.name}: {e}") from None
            finally:
                with contextlib.suppress(OSError):
                    self.sock.settimeout(None)
            if not head:
                raise WireError(f"{self.name}: connection closed")
            try:
                return recv_value(self.sock)
            except OSError as e:
                raise WireError(f"{self.name}: {e}") from None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


class Mailbox:
    """A task's server: one receiving thread per peer files each record under (level, kind); a peer's END
    record closes its part of a (level, kind). `take` waits for every sender's END and returns the records."""

    END = None  # (the record that ends a sender's part: records themselves are never None)

    def __init__(self, host: str, token: bytes, senders: int):
        self.server = listen(host)
        self.address = self.server.getsockname()[:2]
        self.token, self.senders = token, senders
        self.cond = threading.Condition()
        self.records: dict[tuple[int, str], list[tuple[int, Any]]] = {}
        self.ended: dict[tuple[int, str], set[int]] = {}
        self.failed: str | None = None
        self.received_bytes = 0
        self.socks: list[socket.socket] = []
        self.closed = False
        self.acceptor = threading.Thread(target=self._accept, name="kreassign-resident-accept", daemon=True)
        self.acceptor.start()

    def _accept(self) -> None:
        for _ in range(self.senders - 1):  # (a task's own records are filed directly: `put`)
            try:
                sock, hello = accept(self.server, self.token, WAIT_SECONDS)
            except (OSError, WireError) as e:
                self._fail(f"accepting a peer: {e}")
                return
            self.socks.append(sock)
            threading.Thread(target=self._receive, args=(sock, hello), name="kreassign-resident-recv",
                             daemon=True).start()

    def _receive(self, sock: socket.socket, sender: int) -> None:
        try:
            while True:
                (n,) = HEADER.unpack(_recv_exact(sock, HEADER.size))
                level, kind, value = pickle.loads(_recv_exact(sock, n))  # (the peer presented the token)
                with self.cond:
                    self.received_bytes += HEADER.size + n
                self.put(sender, level, kind, value)
        except (OSError, WireError, pickle.UnpicklingError, struct.error) as e:
            if not self.closed:
                self._fail(f"peer {sender}: {e}")

    def _fail(self, why: str) -> None:
        with self.cond:
            if self.failed is None:
                self.failed = why
            self.cond.notify_all()

    def put(self, sender: int, level: int, kind: str, value: Any) -> None:
        with self.cond:
            if value is None:
                self.ended.setdefault((level, kind), set()).add(sender)
            else:
                self.records.setdefault((level, kind), []).append((sender, value))
            self.cond.notify_all()

    def take(self, level: int, kind: str, wait: float = WAIT_SECONDS,
             alive: Callable[[], None] | None = None) -> list[tuple[int, Any]]:
        """Every (sender, record) of (level, kind), once each sender has ended it."""
        deadline = time.monotonic() + wait
        with self.cond:
            while len(self.ended.get((level, kind), ())) < self.senders:
                if self.failed is not None:
                    raise WireError(self.failed)
                if time.monotonic() > deadline:
                    raise WireError(f"level {level}: waited {wait:g} s for the peers' {kind}")
                self.cond.wait(1.0)
                if alive is not None:
                    alive()
            self.ended.pop((level, kind))
            return self.records.pop((level, kind), [])

    def close(self) -> None:
        self.closed = True
        for s in [self.server, *self.socks]:
            with contextlib.suppress(OSError):
                s.close()


class Peers:
    """A task's connections to the other tasks (index -> address); records to itself go to its own mailbox."""

    def __init__(self, me: int, addresses: list[tuple[str, int]], token: bytes, mailbox: Mailbox):
        self.me, self.mailbox = me, mailbox
        self.socks: dict[int, socket.socket] = {}
        for i, address in enumerate(addresses):
            if i != me:
                self.socks[i] = connect(tuple(address), token, me)
        self.sent_bytes = 0

    def send(self, to: int, level: int, kind: str, value: Any) -> None:
        if to == self.me:
            self.mailbox.put(self.me, level, kind, value)
            return
        data = pickle.dumps((level, kind, value), protocol=5)
        try:
            self.socks[to].sendall(HEADER.pack(len(data)))
            self.socks[to].sendall(data)
        except OSError as e:
            raise WireError(f"sending to task {to}: {e}") from None
        self.sent_bytes += HEADER.size + len(data)

    def end(self, level: int, kind: str) -> None:
        """Tell every task (this one too) that this task sent all its records of (level, kind)."""
        for to in [self.me, *self.socks]:
            self.send(to, level, kind, Mailbox.END)

    def close(self) -> None:
        for s in self.socks.values():
            with contextlib.suppress(OSError):
                s.close()


__all__ = ["WAIT_SECONDS", "Channel", "Mailbox", "Peers", "WireError", "accept", "connect", "listen"]

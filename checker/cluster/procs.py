"""Processes and sockets on this machine, for the cluster: free ports, launching a JVM in its own process
group, the listening sockets of a process, and ZooKeeper's `srvr` probe. Linux (/proc)."""

from __future__ import annotations

import os
import random
import signal
import socket
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .config import HOST

#: where ports are drawn from when the kernel's ephemeral range leaves room below it
PORT_FLOOR = 10000


def ephemeral_range() -> tuple[int, int]:
    """The kernel's range for the local ports of outgoing connections (ip_local_port_range)."""
    try:
        low, high = (int(x) for x in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999


def free_ports(count: int, rng: random.Random | None = None) -> list[int]:
    """`count` distinct ports on 127.0.0.1 that nothing listens on now, below the kernel's ephemeral range:
    the nodes bind them seconds later, and an outgoing connection (any client on the machine) never takes a
    port outside that range in between. Each is bound once to prove it free, all at once so they differ.
    Another program binding one on purpose in between makes its node fail to start, naming it."""
    rng = rng or random.Random()
    low, _ = ephemeral_range()
    room = low - PORT_FLOOR
    candidates = rng.sample(range(PORT_FLOOR, low), min(room, 64 * count)) if room >= 1000 else []
    sockets: list[socket.socket] = []
    try:
        for port in candidates:
            if len(sockets) == count:
                break
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind((HOST, port))
            except OSError:
                s.close()
                continue
            sockets.append(s)
        while len(sockets) < count:  # no room below the ephemeral range: let the kernel choose
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((HOST, 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def launch(argv: list[str], cwd: Path, output: Path) -> subprocess.Popen:
    """Start a process in its own process group (a terminal's Ctrl-C reaches the driver only, which stops the
    cluster in order), no stdin, stdout and stderr appended to `output`, no inherited descriptors (the
    watchdog's pipe stays the driver's alone)."""
    with open(output, "ab") as out:
        return subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                close_fds=True, process_group=0)


def signal_group(proc: subprocess.Popen, sig: int) -> None:
    """Send `sig` to the process's group (the JVM and anything it started); nothing if it is gone."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass
    except PermissionError:  # not a group leader after all: the process alone
        try:
            os.kill(proc.pid, sig)
        except ProcessLookupError:
            pass


def process_state(pid: int) -> str | None:
    """The kernel's one-letter state of a process (R, S, T stopped, Z ended, ...); None if there is none."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def interrupt_and_reap(proc: subprocess.Popen, timeout_s: float) -> int:
    """Stop a kreassign run as a user's Ctrl-C does (SIGINT: it stops what it started), then SIGKILL it if it
    has not exited within `timeout_s`; its exit status. Nothing is done to a process that has exited."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
    return proc.wait()


def kill_and_reap(proc: subprocess.Popen, timeout_s: float = 15.0) -> int | None:
    """SIGKILL (a stopped process dies too) and wait; the exit status."""
    signal_group(proc, signal.SIGKILL)
    try:
        return proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return inodes
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    return inodes


def _address(hex_addr: str) -> str:
    """/proc/net/tcp{,6}'s little-endian hex address as text (IPv4-mapped IPv6 as its IPv4 address)."""
    raw = bytes.fromhex(hex_addr)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
    text = socket.inet_ntop(socket.AF_INET6, words)
    return text[7:] if text.startswith("::ffff:") and "." in text else text


def listening_sockets(pid: int) -> list[tuple[str, int]]:
    """(address, port) of every TCP socket the process listens on, IPv4 and IPv6 ("0.0.0.0" or "::" would be
    every interface)."""
    inodes = _socket_inodes(pid)
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if len(cols) > 9 and cols[3] == "0A" and cols[9] in inodes:  # 0A: LISTEN
                addr, port = cols[1].split(":")
                found.append((_address(addr), int(port, 16)))
    return sorted(found)


@dataclass(frozen=True)
class BrokerView:
    """What one broker's own metadata says: the brokers it lists (KRaft: registered and unfenced; ZooKeeper
    mode: registered) and the controller it names (ZooKeeper mode: the controller broker; KRaft: any broker)."""

    brokers: tuple[int, ...]
    controller: int


def broker_view(port: int, timeout_s: float = 2.0) -> BrokerView | None:
    """Ask the broker on 127.0.0.1:port itself, with a Metadata request for no topics, what its metadata says;
    None if it does not answer. An Admin client would ask whichever broker it likes; right after a restart that
    can be one whose metadata is not there yet. Version 4, which every supported release answers (4.0 removed
    versions 0 to 3, KIP-896): request header v1, response header v0, no tagged fields."""
    client = b"kreassign-cluster"
    request = struct.pack(">hhih", 3, 4, 1, len(client)) + client + struct.pack(">i?", 0, False)
    try:
        with socket.create_connection((HOST, port), timeout=timeout_s) as s:
            s.sendall(struct.pack(">i", len(request)) + request)
            size = struct.unpack(">i", _read(s, 4))[0]
            data = _read(s, size)
    except (OSError, struct.error):
        return None
    try:
        pos = 8  # correlation id, throttle time
        (count,) = struct.unpack_from(">i", data, pos)
        pos += 4
        brokers = []
        for _ in range(count):
            node_id, host_len = struct.unpack_from(">ih", data, pos)
            pos += 6 + host_len + 4  # host, port
            (rack_len,) = struct.unpack_from(">h", data, pos)
            pos += 2 + max(rack_len, 0)
            brokers.append(node_id)
        (cluster_len,) = struct.unpack_from(">h", data, pos)
        pos += 2 + max(cluster_len, 0)
        (controller,) = struct.unpack_from(">i", data, pos)
    except struct.error:
        return None
    return BrokerView(tuple(sorted(brokers)), controller)


def _read(s: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = s.recv(n - len(out))
        if not chunk:
            raise OSError("connection closed")
        out += chunk
    return out


def zookeeper_serving(port: int, timeout_s: float = 2.0) -> bool:
    """ZooKeeper answers its `srvr` four-letter word on 127.0.0.1:port (whitelisted by default): it serves."""
    try:
        with socket.create_connection((HOST, port), timeout=timeout_s) as s:
            s.sendall(b"srvr")
            data = b""
            while chunk := s.recv(4096):
                data += chunk
    except OSError:
        return False
    return b"Zookeeper version" in data


__all__ = ["PORT_FLOOR", "BrokerView", "broker_view", "ephemeral_range", "free_ports", "kill_and_reap", "launch", "listening_sockets", "process_state",
           "signal_group", "zookeeper_serving"]

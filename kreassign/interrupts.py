"""Ctrl-C that cannot get lost.

Python swallows an exception raised inside a garbage-collector callback or a `__del__`
("Exception ignored in: gc callback", with a traceback on stderr) and carries on. Hypothesis
registers a gc callback that runs often, and z3's Python objects free themselves in `__del__`,
so a Ctrl-C during `kreassign fuzz` or `prove` could land there: a traceback was printed and
the run went on. `reliable_ctrl_c` installs a SIGINT handler that,
when the signal arrives inside such a frame, re-delivers it a moment later instead of raising
there; everywhere else it raises KeyboardInterrupt as usual (exit 130 via kreassign.cli.main).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator

#: frames where an exception is swallowed ("unraisable") rather than propagated
_SWALLOWING = frozenset({"gc_callback", "__del__"})


def _in_swallowing_frame(frame) -> bool:
    while frame is not None:
        if frame.f_code.co_name in _SWALLOWING:
            return True
        frame = frame.f_back
    return False


def _unsafe(frame) -> bool:
    """Raise here and the exception is lost or mangled: a gc callback, a `__del__`, or the code of a
    library that cannot take it (z3's ctypes wrappers turn it into ctypes.ArgumentError and leave
    half-built objects whose `__del__` then fails)."""
    if frame is not None and _state["unsafe_dirs"] and frame.f_code.co_filename.startswith(_state["unsafe_dirs"]):
        return True
    return _in_swallowing_frame(frame)


_state: dict = {"active": False, "pending": False, "unsafe_dirs": ()}


def _redeliver() -> None:
    _state["pending"] = False
    if _state["active"]:  # not once the block has ended (the interrupt was handled, or the run is over)
        os.kill(os.getpid(), signal.SIGINT)


def _handler(signum, frame) -> None:
    if _unsafe(frame):
        if not _state["pending"]:
            _state["pending"] = True
            timer = threading.Timer(0.05, _redeliver)
            timer.daemon = True
            timer.start()
        return
    _state["active"] = False  # raised once: later re-deliveries are moot
    raise KeyboardInterrupt


@contextlib.contextmanager
def reliable_ctrl_c(*unsafe_modules: str) -> Iterator[None]:
    """Within the block, Ctrl-C is never lost in a gc callback, a `__del__` or the code of the
    `unsafe_modules` (imported packages, e.g. "z3"); main thread, default handler only."""
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield  # ignored (a background job) or handled by someone else: leave it alone
        return
    dirs = []
    for name in unsafe_modules:
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            dirs.append(os.path.dirname(os.path.abspath(module.__file__)) + os.sep)
    _state.update(active=True, pending=False, unsafe_dirs=tuple(dirs))
    signal.signal(signal.SIGINT, _handler)
    try:
        yield
    finally:
        _state["active"] = False
        signal.signal(signal.SIGINT, signal.default_int_handler)


__all__ = ["reliable_ctrl_c"]

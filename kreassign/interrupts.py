"""Ctrl-C that cannot get lost, and never lands where it would print a traceback.

Python swallows an exception raised inside a garbage-collector callback or a `__del__`
("Exception ignored in: gc callback", with a traceback on stderr) and carries on. Hypothesis
registers a gc callback that runs often, and z3's Python objects free themselves in `__del__`,
so a Ctrl-C during `kreassign fuzz` or `prove` could land there: a traceback was printed and
the run went on. `reliable_ctrl_c` installs a SIGINT handler that,
when the signal arrives inside such a frame, re-delivers it a moment later instead of raising
there; everywhere else it raises KeyboardInterrupt as usual (exit 130 via kreassign.cli.main).

Three more places a Ctrl-C must not be raised, all handled by the same handler:

- the code of a library that cannot take it (`unsafe_modules`, and `defer_inside` for a library
  imported later): z3's ctypes wrappers turn it into ctypes.ArgumentError; Py4J, which carries every
  call PySpark makes to the JVM, logs a KeyboardInterrupt raised while it waits for the JVM's answer with
  its traceback at ERROR level. The interrupt is deferred while any frame of the main thread's stack is in
  such code, and `on_interrupt` (run in a thread of its own) ends what that code waits on (Spark's jobs), so
  that the wait returns; an error the ended wait raises is the interrupt (`take_interrupt`);
- a library's own SIGINT handler: PySpark's SparkContext installs one that calls the JVM from inside the
  signal handler (a re-entrant Py4J call, two tracebacks); `defer_inside` takes SIGINT back;
- a process forked inside the block (a multiprocessing pool's worker) inherits the handler: there a
  Ctrl-C ends that process at once and silently, as SIGINT's default action would (no
  "Process ForkPoolWorker-1:" traceback); the parent, which gets the same Ctrl-C, reports it and ends
  its pool.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator

#: frames where an exception is swallowed ("unraisable") rather than propagated
_SWALLOWING = frozenset({"gc_callback", "__del__"})


def _in_swallowing_frame(frame) -> bool:
    while frame is not None:
        if frame.f_code.co_name in _SWALLOWING:
            return True
        frame = frame.f_back
    return False


def _unsafe_dirs() -> tuple[str, ...]:
    """The folders of the unsafe modules imported so far (a module may be imported after the block began)."""
    dirs = []
    for name in _state["unsafe_modules"]:
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            dirs.append(os.path.dirname(os.path.abspath(module.__file__)) + os.sep)
    return tuple(dirs)


def _unsafe(frame) -> bool:
    """Raise here and the exception is lost or mangled: a gc callback, a `__del__`, or (anywhere on the
    stack) the code of a library that cannot take it (z3's ctypes wrappers turn it into ctypes.ArgumentError
    and leave half-built objects whose `__del__` then fails; Py4J logs it with its traceback)."""
    dirs = _unsafe_dirs() if _state["unsafe_modules"] else ()
    while frame is not None:
        if frame.f_code.co_name in _SWALLOWING or (dirs and frame.f_code.co_filename.startswith(dirs)):
            return True
        frame = frame.f_back
    return False


_state: dict = {"active": False, "pending": False, "requested": False, "redelivered": False,
                "unsafe_modules": (), "on_interrupt": None, "pid": None}
_lock = threading.Lock()


def _redeliver() -> None:
    with _lock:
        _state["pending"] = False
        if not (_state["active"] and _state["requested"]):  # the block has ended, or the interrupt was taken
            return
        _state["redelivered"] = True
    os.kill(os.getpid(), signal.SIGINT)


def _handler(signum, frame) -> None:
    if _state["pid"] is not None and os.getpid() != _state["pid"]:  # a forked worker: end quietly
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    with _lock:
        stale = _state["redelivered"] and not _state["requested"]  # our re-delivery of an interrupt since taken
        _state["redelivered"] = False
    if stale:
        return
    if _unsafe(frame):
        first = not _state["requested"]
        _state["requested"] = True
        if first and _state["on_interrupt"] is not None:
            threading.Thread(target=_state["on_interrupt"], name="kreassign-ctrl-c", daemon=True).start()
        if not _state["pending"]:
            _state["pending"] = True
            timer = threading.Timer(0.05, _redeliver)
            timer.daemon = True
            timer.start()
        return
    _state["requested"] = False  # raised once: later re-deliveries are moot
    raise KeyboardInterrupt


@contextlib.contextmanager
def reliable_ctrl_c(*unsafe_modules: str) -> Iterator[None]:
    """Within the block, Ctrl-C is never lost in a gc callback, a `__del__` or the code of the
    `unsafe_modules` (packages, e.g. "z3"); main thread, default handler only."""
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield  # ignored (a background job) or handled by someone else: leave it alone
        return
    _state.update(active=True, pending=False, requested=False, redelivered=False,
                  unsafe_modules=tuple(unsafe_modules), on_interrupt=None, pid=os.getpid())
    signal.signal(signal.SIGINT, _handler)
    try:
        yield
    finally:
        _state.update(active=False, requested=False, unsafe_modules=(), on_interrupt=None, pid=None)
        signal.signal(signal.SIGINT, signal.default_int_handler)


def defer_inside(*modules: str, on_interrupt: Callable[[], None] | None = None) -> bool:
    """Inside a `reliable_ctrl_c` block: also defer Ctrl-C while the main thread runs `modules`' code, run
    `on_interrupt` (once per Ctrl-C, in a thread of its own) to end what that code is waiting on, and take
    SIGINT back from a library that installed a handler of its own since the block began (PySpark's
    SparkContext does). Call it again once such a library has started. Outside a block (a test, a script,
    another thread): does nothing and returns False."""
    if not _state["active"] or threading.current_thread() is not threading.main_thread():
        return False
    _state["unsafe_modules"] = tuple(dict.fromkeys((*_state["unsafe_modules"], *modules)))
    if on_interrupt is not None:
        _state["on_interrupt"] = on_interrupt
    if signal.getsignal(signal.SIGINT) is not _handler:
        signal.signal(signal.SIGINT, _handler)
    return True


def interrupt_pending() -> bool:
    """A Ctrl-C arrived while the main thread was in unsafe code and has not been raised yet (for an
    `on_interrupt` that must retry until the main thread takes it)."""
    return bool(_state["active"] and _state["requested"])


def take_interrupt() -> bool:
    """True when a Ctrl-C arrived while the main thread was in unsafe code and has not been raised yet;
    it is then the caller's to raise (as KeyboardInterrupt). A library call that blocks in unsafe code
    leaves the main thread there until it returns, so the deferred interrupt would find it there again:
    code that calls such a library checks this before and after each call (and the error of a call
    that `on_interrupt` ended, e.g. a cancelled Spark job, is the interrupt, not a failure)."""
    with _lock:
        requested, _state["requested"] = _state["requested"], False
    return bool(requested) and _state["active"]


__all__ = ["defer_inside", "interrupt_pending", "reliable_ctrl_c", "take_interrupt"]

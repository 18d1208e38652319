"""What a Spark failure means, in one line: the Java exception and its causes, or a task's Python error.

Every Spark failure reaches the user as an InfraError (exit 3) whose message these functions
write (checker/spark/jobs.py `run_job`, the session's start in engine.py); `quietly` is the
clean-up that runs while such a failure is being handled and must not replace it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def describe_error(e: BaseException) -> str:
    """The real cause of a Spark failure: the Java exception's class and message (the root cause's
    too), or the Python exception of the task, with the last lines of its traceback."""
    java = getattr(e, "java_exception", None) or getattr(e, "_origin", None)  # (Py4JJavaError, captured exceptions)
    parts = []
    with contextlib.suppress(Exception):
        cause, seen = java, 0
        if java is None:
            raise LookupError
        while cause is not None and seen < 8:
            message = str(cause.getMessage() or "").strip()
            parts.append(f"{cause.getClass().getName()}: {message.splitlines()[0] if message else ''}".rstrip(": "))
            cause, seen = cause.getCause(), seen + 1
    text = str(e)
    start = text.find("Traceback (most recent call last)")
    if start >= 0:  # a Python exception in a task: its last frame and the exception itself
        lines = [ln for ln in text[start:].split("\n\tat ")[0].strip().splitlines() if ln.strip()]
        parts.append("Python task error: " + " | ".join(ln.strip() for ln in lines[-3:]))
    return "; caused by ".join(dict.fromkeys(parts)) or f"{type(e).__name__}: {first_line(e)}"


def from_spark(e: BaseException) -> bool:
    """Errors Spark, Py4J or the JVM raise (not the engine's own bugs, which keep their traceback)."""
    module = type(e).__module__ or ""
    return (module.startswith(("py4j", "pyspark")) or type(e).__name__ in ("Py4JJavaError", "PythonException")
            or hasattr(e, "java_exception"))


def quietly(cleanup: Callable[[], Any]) -> None:
    """Clean-up that must not hide the exception being handled (the context may be gone)."""
    with contextlib.suppress(Exception):
        cleanup()


__all__ = ["describe_error", "first_line", "from_spark", "quietly"]

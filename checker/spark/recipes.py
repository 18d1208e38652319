"""How a model reaches the executors: rebuilt there from its profile and bounds, or pickled.

A model of ours that nobody modified travels as a recipe of plain JSON data (`model_recipe`,
checked by rebuilding it on the driver); any other model is cloudpickled, with the code of the
modules executors cannot import (bench/, a test's, a notebook's) sent by value. Executors
rebuild either with checker/spark/tasks.py `build_model`.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import json
import sys
from typing import Any

from kreassign.checker.explore.protocol import checked_properties
from kreassign.checker.spark import tasks as T


def _patched(model: Any) -> bool:
    """Does the instance override a method (e.g. `model.properties = lambda: ...`)?"""
    cls = type(model)
    return any(callable(v) and hasattr(cls, k) for k, v in getattr(model, "__dict__", {}).items())


def _plain_json(data: Any) -> Any:
    """JSON data as it reads back (tuples become lists): a recipe is plain data."""
    return json.loads(json.dumps(data))


def _rebuildable_recipe(model: Any) -> dict[str, Any] | None:
    """The recipe that rebuilds a known model from its profile and bounds (no pickled objects)."""
    from kreassign.checker.models.quota import QuotaModel
    from kreassign.checker.models.reassign import ReassignmentModel
    from kreassign.checker.models.symmetry import SymmetryReduced

    if _patched(model) or getattr(model, "engine_properties", None) is not None:
        return None  # a rebuild from profile and bounds would have neither its methods nor its checked properties
    if type(model) is ReassignmentModel:
        from kreassign.reference import PROFILES, profile

        name = model.profile_name
        if name in PROFILES and profile(name) is model.profile and model.name == name:
            return {"kind": "reassignment", "profile": name, "bounds": _plain_json(model.bounds.to_json())}
    if type(model) is QuotaModel:
        from kreassign.reference import quota as ref

        if model.rule is ref.RULES.get(model.config.profile):
            return {"kind": "quota", "profile": model.config.profile, "bounds": _plain_json(model.config.describe())}
    if type(model) is SymmetryReduced:
        inner = _rebuildable_recipe(model.inner)
        if inner is not None:
            return {"kind": "symmetry", "inner": inner}
    return None


@functools.cache
def _distributions() -> frozenset[str]:
    return frozenset(importlib.metadata.packages_distributions())


def _installed(module_name: str) -> bool:
    """Can an executor import this module (standard library or an installed distribution)?"""
    top = module_name.split(".")[0]
    return top in sys.stdlib_module_names or top == "builtins" or top in _distributions()


def _local_modules(model: Any) -> list[Any]:
    """Modules behind the model's classes that executors cannot import (bench/, tests, __main__)."""
    classes = set(type(model).__mro__)
    for value in getattr(model, "__dict__", {}).values():
        classes.update(type(value).__mro__)
    names = {c.__module__ for c in classes if not _installed(c.__module__) and c.__module__ != "__main__"}
    return [sys.modules[n] for n in sorted(names) if n in sys.modules]


def pickled_recipe(model: Any, codec: Any = None) -> dict[str, Any]:
    """The model itself, cloudpickled; the code of modules executors cannot import goes by value,
    and so does the driver's codec (its state classes may exist on the executors only as
    unpickled copies, whose annotations cannot be resolved there)."""
    from pyspark import cloudpickle

    modules = _local_modules(model)
    for m in modules:
        cloudpickle.register_pickle_by_value(m)
    try:
        data = cloudpickle.dumps((model, codec))
    except Exception as e:  # noqa: BLE001 - pickling raises anything: say what it means here
        raise ValueError(f"model {type(model).__qualname__}: cannot be shipped to Spark executors ({e}); "
                         "a model must be rebuildable from its profile and bounds, or picklable") from None
    finally:
        for m in modules:
            cloudpickle.unregister_pickle_by_value(m)
    return {"kind": "pickle", "data": data}


def callables_by_value(data: Any, model: Any) -> bytes:
    """Callables for the executors, cloudpickled with the code of modules they cannot import
    (the model's, and those defining the callables: a test's, a notebook's) by value."""
    from pyspark import cloudpickle

    names = {getattr(f, "__module__", None) for f in _callables(data)}
    modules = _local_modules(model) + [sys.modules[n] for n in sorted(n for n in names if n)
                                       if n != "__main__" and not _installed(n) and n in sys.modules]
    for m in modules:
        cloudpickle.register_pickle_by_value(m)
    try:
        return cloudpickle.dumps(data)
    finally:
        for m in modules:
            with contextlib.suppress(ValueError):
                cloudpickle.unregister_pickle_by_value(m)


def _callables(data: Any) -> list[Any]:
    if callable(data):
        return [data]
    if isinstance(data, (list, tuple)):
        return [f for item in data for f in _callables(item)]
    return []


def model_recipe(model: Any, codec: Any = None) -> dict[str, Any]:
    """How executors get the model: rebuilt from its profile + bounds when it is one of ours and
    unmodified (checked by rebuilding it here), otherwise the pickled model itself (with `codec`)."""
    recipe = _rebuildable_recipe(model)
    if recipe is not None:
        try:
            rebuilt = T.build_model(recipe)
            same = (rebuilt.describe() == model.describe()
                    and [p.name for p in checked_properties(rebuilt)] == [p.name for p in checked_properties(model)]
                    and list(rebuilt.init_states()) == list(model.init_states()))
        except Exception:  # noqa: BLE001 - a recipe that does not rebuild: ship the model itself
            same = False
        if same:
            return recipe
    return pickled_recipe(model, codec)


def recipe_id(recipe: dict[str, Any]) -> str:
    """What identifies a recipe on the executors (their cache of rebuilt models is keyed by it)."""
    return T.recipe_id(json.dumps(recipe, default=repr, sort_keys=True).encode()
                       if recipe["kind"] != "pickle" else recipe["data"])


__all__ = ["callables_by_value", "model_recipe", "pickled_recipe", "recipe_id"]

"""Plugin registries: look a policy up by name, or import a user's by ``"package.module:attr"``."""
from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable

from ..errors import ConfigError, PbfError

__all__ = ["Registry", "call_plugin", "is_multifactor"]


def is_multifactor(obj: object) -> bool:
    """Whether ``obj`` is a :class:`pbf.plugins.Multifactor` priority, without loading its module: an
    object can only be one once the module is loaded (a replay with another priority does without it)."""
    module = sys.modules.get("pbf.plugins.multifactor")
    return module is not None and isinstance(obj, module.Multifactor)


def call_plugin(kind: str, where: str, fn: Callable, *args: object) -> object:
    """Call a user's plugin function; whatever it raises comes back as a :class:`ConfigError` that
    names the plugin (pbf's own errors pass through)."""
    try:
        return fn(*args)
    except PbfError:
        raise
    except Exception as exc:
        raise ConfigError(f"{kind} {where}: raised {type(exc).__name__}: {exc}") from exc


def _as_floats(values, what):
    """A plugin's answer as float64s, or a ConfigError saying what it returned instead."""
    import numpy as np
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{what}: returned {type(values).__name__} values that are not numbers ({exc})") from None


class Registry:
    """Named plugins of one kind (``priority``, ``predictor``, ``correction``, ``chooser``, ``preset``).

    :meth:`resolve` accepts a registered name, a ``"package.module:attr"`` string (the module is
    imported from ``sys.path`` or the current directory; a class is instantiated with no arguments),
    or a plugin object itself. ``adapt`` turns
    an imported or given object into the kind's plugin type (and says what is wrong with it).
    """

    def __init__(self, kind: str, adapt: Callable[[object, str], object] | None = None):
        self.kind = kind
        self._entries = {}
        self._prefixes = {}
        self._adapt = adapt

    def register(self, name: str, factory: Callable[[], object], summary: str) -> Callable[[], object]:
        """Register ``factory`` (called with no arguments on lookup) under ``name``."""
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._entries[name] = (factory, summary)
        return factory

    def register_prefix(self, prefix: str, factory: Callable[[str], object],
                        summary: str) -> Callable[[str], object]:
        """Resolve ``"prefix:ARGUMENT"`` by ``factory(ARGUMENT)`` (e.g. ``learned:model.npz``)."""
        self._prefixes[prefix] = (factory, summary)
        return factory

    def prefixes(self) -> list[tuple[str, str]]:
        """``[(prefix, one-line summary)]``."""
        return [(p, summary) for p, (_, summary) in self._prefixes.items()]

    def names(self) -> list[str]:
        return list(self._entries)

    def summaries(self) -> list[tuple[str, str]]:
        """``[(name, one-line summary)]`` in registration order."""
        return [(name, summary) for name, (_, summary) in self._entries.items()]

    def resolve(self, spec: object) -> object:
        """The plugin ``spec`` names (a registered name, ``prefix:ARGUMENT``, ``package.module:attr``),
        or ``spec`` itself made the kind's plugin type."""
        if isinstance(spec, str):
            if spec in self._entries:
                return self._entries[spec][0]()
            prefix, sep, rest = spec.partition(":")
            if sep and prefix in self._prefixes:
                if not rest:
                    raise ConfigError(f"{self.kind} {spec!r}: expected {prefix}:ARGUMENT "
                                      f"({self._prefixes[prefix][1]})")
                return self._adapt_obj(self._prefixes[prefix][0](rest), spec)
            if ":" in spec:
                return self._adapt_obj(_import(spec, self.kind), spec)
            raise ConfigError(f"unknown {self.kind} {spec!r}; known: {', '.join(self._entries)} "
                              f"(or a 'package.module:attr' of your own)")
        return self._adapt_obj(spec, repr(spec))

    def _adapt_obj(self, obj, where):
        if isinstance(obj, type):
            try:
                obj = obj()
            except TypeError as exc:
                raise ConfigError(f"{self.kind} {where}: cannot create it with no arguments ({exc})") from None
        return self._adapt(obj, where) if self._adapt else obj


def _import(spec, kind):
    module, _, attr = spec.partition(":")
    if not module or not attr:
        raise ConfigError(f"{kind} {spec!r}: expected 'package.module:attr'")
    try:
        # like `python -m`, the current directory is searched too (console scripts leave it out)
        if os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.append(os.getcwd())
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError(f"{kind} {spec!r}: cannot import module {module!r} ({exc})") from None
    obj = mod
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ConfigError(f"{kind} {spec!r}: module {module!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj

"""Durations on the command line: ``90``, ``90s``, ``15m``, ``12h``, ``7d``, ``2w``."""
from __future__ import annotations

import math
import numbers

from ..bounded import MAX_SECONDS, parse_real
from ..errors import ConfigError

__all__ = ["parse_duration"]

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text: str | float, name: str = "duration") -> int:
    """Seconds in ``text`` (an int, or a number with one of the suffixes s, m, h, d, w): a finite
    number, ASCII, from 1 second to :data:`pbf.bounded.MAX_SECONDS`; :class:`ConfigError` otherwise."""
    shown = repr(text) if len(repr(text)) <= 40 else repr(text)[:37] + "..."
    if isinstance(text, numbers.Real) and not isinstance(text, bool):
        value = float(text)
        if not math.isfinite(value):
            raise ConfigError(f"{name} must be a finite number of seconds, got {shown}")
    else:
        s = str(text).strip().lower()
        mult = _UNITS.get(s[-1:], None)
        num = s[:-1] if mult else s
        try:
            value = parse_real(num, -math.inf) * (mult or 1)
        except ValueError:
            raise ConfigError(f"{name} must be seconds or a number with s/m/h/d/w, got {shown}") from None
    if not value > 0:
        raise ConfigError(f"{name} must be > 0, got {shown}")
    seconds = int(round(value)) if value <= MAX_SECONDS else 0
    if not 1 <= seconds <= MAX_SECONDS:
        raise ConfigError(f"{name} must be from 1 s to {MAX_SECONDS:,} s, got {shown}")
    return seconds

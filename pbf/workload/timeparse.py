"""Durations on the command line: ``90``, ``90s``, ``15m``, ``12h``, ``7d``, ``2w``."""
from __future__ import annotations

from ..errors import ConfigError

__all__ = ["parse_duration"]

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text: str | float, name: str = "duration") -> int:
    """Seconds in ``text`` (an int, or a number with one of the suffixes s, m, h, d, w)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = text
    else:
        s = str(text).strip().lower()
        mult = _UNITS.get(s[-1:], None)
        num = s[:-1] if mult else s
        try:
            value = float(num) * (mult or 1)
        except ValueError:
            raise ConfigError(f"{name} must be seconds or a number with s/m/h/d/w, got {text!r}") from None
    if value <= 0 or value != value:
        raise ConfigError(f"{name} must be > 0, got {text!r}")
    return int(round(value))

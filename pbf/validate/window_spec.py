"""The words of a harness case's timed spec (``--reservation SPEC``, ``--drain SPEC``): ``Nodes=LIST
StartTime=+SECONDS Duration=SECONDS`` (or ``EndTime=+SECONDS``) and the option's own keys, times in
seconds of the workload's clock. One reader for both, so that they name their errors alike."""
from __future__ import annotations

from ..bounded import parse_whole
from ..errors import ConfigError
from ..node import expand_hostlist

__all__ = ["bad_value", "read_window_spec"]


def bad_value(option: str, text: str, key: str, value: str, expected: str) -> ConfigError:
    """The error of ``option``'s spec ``text`` at ``key=value``, saying what was expected."""
    return ConfigError(f"{option} {text!r}: {key}={value!r}: expected {expected}")


def _seconds(option, text, key, value, plus):
    if plus and not value.startswith("+"):
        raise bad_value(option, text, key, value, "+SECONDS from the workload's time 0 (e.g. +60)")
    try:
        return parse_whole(value[1:] if plus else value, 0 if plus else 1, 10 ** 9)
    except ValueError:
        raise bad_value(option, text, key, value, ("+SECONDS, a whole number from 0 to 1000000000" if plus else
                                                   "SECONDS, a whole number from 1 to 1000000000")) from None


def read_window_spec(option: str, text: str, keys: tuple, usage: str, known=None, end_note: str = ""
                     ) -> tuple[dict, tuple, int, int]:
    """``option``'s spec ``text`` read: (its words by key, the nodes, start, end). ``keys``: every key
    the option takes (each at most once, in any case); ``usage``: the spec's form for an error;
    ``known``: the site's node names (a node outside them is an error); ``end_note``: said after the
    Duration/EndTime error. Raises :class:`pbf.ConfigError` naming the key, the value and what was
    expected."""
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"{option} {text!r}: expected {usage}")
    got = {}
    for tok in text.split():
        key, eq, value = tok.partition("=")
        match = next((k for k in keys if k.lower() == key.lower()), None)
        if not eq or match is None:
            raise ConfigError(f"{option} {text!r}: {tok!r}: expected KEY=VALUE with KEY one of " + ", ".join(keys))
        if match in got:
            raise bad_value(option, text, match, value, "each key once")
        if not value:
            raise bad_value(option, text, match, value, "a value")
        got[match] = value
    for key in ("Nodes", "StartTime"):
        if key not in got:
            raise ConfigError(f"{option} {text!r}: no {key}= (expected {usage})")
    if ("Duration" in got) == ("EndTime" in got):
        raise ConfigError(f"{option} {text!r}: expected one of Duration=SECONDS and EndTime=+SECONDS{end_note}")
    try:
        nodes = tuple(expand_hostlist(got["Nodes"]))
    except (ValueError, ConfigError) as exc:
        raise bad_value(option, text, "Nodes", got["Nodes"], f"a host list such as a1,a2 or a[1-2] ({exc})") from None
    if not nodes or len(set(nodes)) != len(nodes):
        raise bad_value(option, text, "Nodes", got["Nodes"], "distinct node names")
    if known is not None:
        unknown = [n for n in nodes if n not in set(known)]
        if unknown:
            raise bad_value(option, text, "Nodes", got["Nodes"], f"nodes of the site's slurm.conf "
                            f"({', '.join(known)}); not there: {', '.join(unknown)}")
    start = _seconds(option, text, "StartTime", got["StartTime"], True)
    if "Duration" in got:
        end = start + _seconds(option, text, "Duration", got["Duration"], False)
    else:
        end = _seconds(option, text, "EndTime", got["EndTime"], True)
        if end <= start:
            raise bad_value(option, text, "EndTime", got["EndTime"], f"a time after StartTime (+{start})")
    return got, nodes, start, end

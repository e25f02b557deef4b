"""Cluster-wide licenses, as Slurm counts them: a cluster's ``Licenses=matlab:2,fluent*10,foo``
(slurm.conf; ``NAME``, ``NAME:N`` or ``NAME*N``, a bare name counting 1) and what a job asks
(``--licenses=matlab:2,fluent``; sacct's ``Licenses``, ``ReqTRES`` ``license/NAME=N``). A running job
holds its licenses from its start to its end; a job whose licenses are not all free is passed over
(Slurm 22.05 without ``bf_licenses``: not started, not reserved); a job asking more of a kind than the
cluster has, or a kind it does not have, is rejected (Slurm: "Invalid license specification").
docs/engine.md, "Licenses".
"""
from __future__ import annotations

from collections.abc import Sequence

from .errors import ConfigError

__all__ = ["MAX_LICENSES", "parse_licenses", "slurm_conf_licenses", "job_license_texts", "license_requests"]

#: the most of one license kind a cluster or a job may count (Slurm counts them in 32 bits)
MAX_LICENSES = 2**32 - 1


def parse_licenses(text: str, where: str) -> dict[str, int]:
    """``{name: count}`` of a license list (``matlab:2,fluent*10,foo``; a server suffix ``@db`` is part of
    the name, as Slurm keeps it). A job's ``a|b`` (either one) counts as its first choice. ``where``
    names the file, line and field for errors."""
    out: dict[str, int] = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        item = item.split("|")[0].strip()
        name, sep, count = item.replace("*", ":").partition(":")
        name = name.strip()
        count = count.strip() if sep else "1"
        if not name or not name.isprintable() or " " in name:
            raise ConfigError(f"{where}: {text!r}: expected NAME, NAME:N or NAME*N items separated by commas, "
                              f"got the item {item!r}")
        if not (count.isascii() and count.isdigit()) or len(count) > 10 or int(count) > MAX_LICENSES:
            raise ConfigError(f"{where}: {text!r}: license {name!r}: expected a whole count from 0 to "
                              f"{MAX_LICENSES:,}, got {count!r}")
        out[name] = out.get(name, 0) + int(count)
        if out[name] > MAX_LICENSES:
            raise ConfigError(f"{where}: {text!r}: license {name!r} counted {out[name]:,} times in all: expected "
                              f"at most {MAX_LICENSES:,}")
    return out


def slurm_conf_licenses(conf) -> dict[str, int]:
    """``{name: count}`` of a read slurm.conf's ``Licenses=`` (a :class:`pbf.slurm_conf.SlurmConf`)."""
    line, value = conf.settings.get("licenses", (None, ""))
    if not value:
        return {}
    return parse_licenses(value, f"{getattr(line, 'path', conf.path)}, line {line}: {conf.at('licenses')[1]}")


def job_license_texts(table) -> list[str] | None:
    """Each job's license list (``matlab:2``; "" none) of a :class:`pbf.JobTable`: its ``licenses``
    attribute, else its ``licenses`` column with the header's ``; Licenses: N text`` legend (sacct
    dumps); None where the trace has none."""
    texts = getattr(table, "__dict__", {}).get("licenses")
    if texts is not None:
        return [str(t) for t in texts]
    if "licenses" not in table.columns:
        return None
    from .resources import constraint_legend
    legend = constraint_legend(table.header, "Licenses")
    return [legend.get(int(c), "") for c in table.columns["licenses"]]


def license_requests(cluster_licenses: Sequence[tuple[str, int]], texts: Sequence[str], source: str = "the trace"
                     ) -> tuple:
    """``(kinds, totals, asked)``: the cluster's license kinds and their counts, then one kind for each
    name only jobs ask (count 0: such a job is rejected), and each job's row of counts (numpy arrays)."""
    import numpy as np  # (this module is read by the CLI's parser, which does not load numpy)
    kinds = [name for name, _ in cluster_licenses]
    totals = [int(count) for _, count in cluster_licenses]
    index = {name: i for i, name in enumerate(kinds)}
    rows = []
    for i, text in enumerate(texts):
        asked = parse_licenses(text, f"{source}, job {i + 1}, licenses") if text else {}
        for name in asked:
            if name not in index:
                index[name] = len(kinds)
                kinds.append(name)
                totals.append(0)
        rows.append(asked)
    matrix = np.zeros((len(texts), len(kinds)), dtype=np.int64)
    for i, asked in enumerate(rows):
        for name, count in asked.items():
            matrix[i, index[name]] = count
    return kinds, np.array(totals, dtype=np.int64), matrix

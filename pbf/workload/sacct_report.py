"""What reading a sacct dump found (:mod:`pbf.workload.sacct`): the summary a replay and ``pbf trace``
carry (``cleaning.sacct`` in ``summary.json``), and its text."""
from __future__ import annotations

import textwrap
from collections import Counter

from .sacct_fields import _SAME_AS, _TRES_MODELLED


def _summary(info, names, col, spelled, used, read_only, empties, lines):
    """The JSON-ready ``sacct`` dict of a table: what every column and record kind gave."""
    nonempty = {n: int(lines - empties[i]) for i, n in enumerate(names)}
    read_keys = {f for f in read_only if f}
    columns = {"modelled": [spelled[f] for f in used if f not in read_keys],
               "read_not_modelled": {spelled[f]: nonempty[spelled[f]] for f in used if f in read_keys},
               "not_modelled": {}, "same_as": {}}
    for i, name in enumerate(names):
        key = name.lower()
        if col.get(key) == i and key in used:
            continue
        columns["not_modelled"][name] = nonempty[name]
        if key in _SAME_AS and col.get(key) == i:
            columns["same_as"][name] = _SAME_AS[key]
    read_elsewhere = ("license/", "gres/")          # (into the licenses and gres columns)
    tres = {key: Counter({k: v for k, v in c.items() if k not in _TRES_MODELLED and not k.startswith(read_elsewhere)})
            for key, c in info["tres"].items()}
    top = lambda c: dict(c.most_common())  # noqa: E731
    return {
        "lines": {"read": int(lines), "job_records": info["records"], "step_lines": info["steps"],
                  "submit_lines_with_a_pipe_joined": info["pipes_in_submit_line"]},
        "columns": columns,
        "arrays": {"elements": info["array_elements"], "arrays": len(info["arrays"]),
                   "pending_elements_not_expanded": info["pending_array_elements"],
                   "pending_lists_cut_short_by_sacct": info["pending_lists_cut_short"],
                   "throttled_arrays_not_modelled": len(info["array_throttles"])},
        "het": {"jobs": len(info["het_jobs"]), "components": info["het_components"]},
        "run_times": {"zero_length": info["zero_length"], "never_started": info["never_started"],
                      "not_ended": info["not_ended"]},
        "gpus": {"jobs_by_column": top(info["gpu_jobs"]), "types": top(info["gpu_types"])},
        "exclusive": {"jobs": info["exclusive"], "as_whole_nodes": info["exclusive_whole_nodes"],
                      "other_forms_not_modelled": top(info["exclusive_other"])},
        "dependencies": {"jobs": info["dependencies"], "kinds": top(info["dependency_kinds"]),
                         **info.get("dependency_parents", {})},
        "licenses": top(info["licenses"]), "reasons": top(info["reasons"]), "flags": top(info["flags"]),
        "submit_line_options_not_modelled": top(info["options"]),
        "submit_lines_not_sbatch_srun_salloc": info["submit_lines_other"],
        "tres_not_modelled": {k: top(v) for k, v in tres.items() if v},
        "gres": top(info["gres"]),
    }


def _counts(d: dict, limit: int = 8) -> str:
    items = list(d.items())
    text = ", ".join(f"{k} {v:,}" for k, v in items[:limit])
    return text + (f", {len(items) - limit} more" if len(items) > limit else "")


def _many(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else plural or word + 's'}"


def describe_sacct(s: dict, cleaning: dict | None = None) -> list[str]:
    """Lines saying what a dump's ``sacct`` dict (:func:`read_sacct`) holds: the records and how each
    kind replays, what is modelled, what is read and not modelled, and every column present and not
    modelled with its count of non-empty values. ``cleaning``: the cleaning report's dict, for what
    became of the zero-length jobs."""
    ln, ar, het, rt = s["lines"], s["arrays"], s["het"], s["run_times"]
    kinds = []
    if ar["elements"] or ar["pending_elements_not_expanded"]:
        pending = ar["pending_elements_not_expanded"]
        kinds.append(f"{_many(ar['elements'], 'array element')} of {_many(ar['arrays'], 'array')}, each a job"
                     + (f"; {pending:,}{'+' if ar['pending_lists_cut_short_by_sacct'] else ''} elements pending at the "
                        "dump counted, not expanded (they did not run)" if pending else ""))
    if het["components"]:
        kinds.append(f"{_many(het['components'], 'component')} of {_many(het['jobs'], 'heterogeneous job')}, each a "
                     "job submitted with the others (their joint start is not modelled)")
    first = _many(ln["job_records"], "job record") + (f" ({'; '.join(kinds)})" if kinds else "")
    first += f"; {_many(ln['step_lines'], 'step line')} (steps of those jobs, not jobs)"
    if ln["submit_lines_with_a_pipe_joined"]:
        first += f"; {_many(ln['submit_lines_with_a_pipe_joined'], 'SubmitLine')} holding '|' joined back"
    lines = [first]
    zero = _many(rt["zero_length"], "zero-length job")
    if cleaning is not None and cleaning.get("zero_length_dropped"):
        zero += " dropped (--drop-zero-length)"
    elif cleaning is not None:
        zero += " kept (--drop-zero-length drops them)"
    lines.append(zero + f"; {rt['never_started']:,} never started and {rt['not_ended']:,} not ended at the dump "
                 "(no run time)")
    g, ex, d = s["gpus"], s["exclusive"], s["dependencies"]
    modelled = []
    if g["jobs_by_column"]:
        modelled.append(f"GPUs of {_many(sum(g['jobs_by_column'].values()), 'job')} "
                        f"(from {_counts(g['jobs_by_column'])})")
    if g["types"]:
        modelled.append(f"GPU types {_counts(g['types'])} (on a cluster of nodes, each such job runs only on "
                        "nodes of its GPUs' type)")
    if ex["jobs"]:
        modelled.append(f"--exclusive of {_many(ex['jobs'], 'job')}, {ex['as_whole_nodes']:,} as whole nodes "
                        "(AllocCPUS on AllocNodes nodes; not the others: they never ran or the dump lacks those "
                        "columns)")
    if s.get("gres"):
        modelled.append(f"GRES other than GPUs, jobs asking each: {_counts(s['gres'])} (on a cluster whose nodes "
                        "have such resources; read only on one without)")
    if modelled:
        lines.append("modelled: " + "; ".join(modelled))
    read = []
    if d["jobs"]:
        read.append(f"dependencies of {_many(d['jobs'], 'job')} ({_counts(d['kinds'])}; "
                    f"{d.get('jobs_with_a_parent_in_the_dump', 0):,} with a parent in the dump, in SWF field 17)")
    if s["licenses"]:
        read.append(f"licenses {_counts(s['licenses'])}")
    if ex["other_forms_not_modelled"]:
        read.append(_counts(ex["other_forms_not_modelled"]))
    if ar["throttled_arrays_not_modelled"]:
        read.append(_many(ar["throttled_arrays_not_modelled"], "array throttle") + " (%N)")
    if s["submit_line_options_not_modelled"]:
        read.append(f"SubmitLine options {_counts(s['submit_line_options_not_modelled'])}")
    if s["submit_lines_not_sbatch_srun_salloc"]:
        read.append(f"{_many(s['submit_lines_not_sbatch_srun_salloc'], 'SubmitLine')} not sbatch, srun or salloc")
    if s["reasons"]:
        read.append(f"Reason {_counts(s['reasons'], 5)}")
    if s["flags"]:
        read.append(f"Flags {_counts(s['flags'], 5)}")
    for key, c in s["tres_not_modelled"].items():
        read.append(f"{key} {_counts(c)}")
    if read:
        lines.append("read, not modelled: " + "; ".join(read))
    c = s["columns"]
    if c["not_modelled"]:
        same = c["same_as"]
        lines.append(f"columns not modelled (non-empty values in the {ln['read']:,} lines): " + ", ".join(
            f"{name} {count:,}" + (f" (= {same[name]})" if name in same else "")
            for name, count in c["not_modelled"].items()))
    return lines


def format_sacct(s: dict, cleaning: dict | None = None, label: str = "sacct", indent: int = 13,
                 width: int = 118) -> str:
    """:func:`describe_sacct`'s lines as text: the first after ``label`` (padded to ``indent``), each
    wrapped at ``width`` and indented under it."""
    pad = " " * indent
    out = []
    for k, line in enumerate(describe_sacct(s, cleaning)):
        first = label.ljust(indent - 1) + " " if k == 0 else pad
        out += textwrap.wrap(line, width, initial_indent=first, subsequent_indent=pad + "  ",
                             break_on_hyphens=False) or [first]
    return "\n".join(out)

"""Every ``pbf ...`` command the README and docs/ show runs, from the checkout's root and from another
folder, and the worked examples print what the pages say (their wait, jobs and prediction lines).

The commands are read from the pages' code blocks: ``console`` blocks (lines after ``$ ``, with their
output below) and ``bash`` blocks. Synopses (``[--flag]``, ``TRACE``, ``DIR`` ...) are not commands.
A command that takes minutes, needs root and a real Slurm, a Ray cluster, the real archive logs when
they are absent, or a file the page only shows is skipped, and the test says why. "From the root" runs
in a folder that links every entry of the checkout (so ``./pbf`` is there, as in a clone), "from
elsewhere" in an empty folder with the repository's relative paths made absolute; both run the pbf
these tests import (``python -m pbf``), with ``$PBF_TRACES`` set when the real logs are at hand.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import pbf
from pbf.studies.traces import shared_trace_dir

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: pages whose worked examples' output is checked line by line (the others: the commands run)
CHECKED_OUTPUT = {"README.md", "status.md", "benchmarks.md", "slurm-harness.md", "operations.md", "workloads.md",
                  "sweeps.md", "scoring.md", "rl.md"}
#: output lines compared with what the command prints (by their first word)
COMPARED = ("wait ", "jobs ", "prediction ", "cluster use ", "pbf vs slurm ", "AWT ")

#: commands not run, and why
SLOW = [
    (r"^pbf train\b", "trains a policy (10-15 min on 2 cores)"),
    (r"my-lublin|my-bf|my-model", "needs the model the training command writes"),
    (r"validate slurm(?!.*--slurm-runs)", "runs a real Slurm (root and minutes)"),
    (r"--slurm-runs validate-", "needs the folder of a real Slurm run"),
    (r"^pbf experiment (parallel-backfill|coalloc|rlbackfilling|runtime-prediction|priority-functions)",
     "a paper's experiment: minutes"),
    (r"^pbf sweep .*--(resume|backend)", "continues or distributes the sweep above"),
    (r"beocat-slice", "20,000 jobs on Beocat's nodes with Slurm's node search: 3 min"),
    (r"^pbf bench\b", "a benchmark: minutes, and measured apart from the tests"),
    (r"--backend ray", "needs a Ray cluster"),
    (r"--preset slurm\b", "the built-in week on the slurm-sim clock: a minute or more"),
    (r"--jobs 1000000\b", "a million jobs"),
    (r"^pbf gen archer2\b|archer2\.sacct", "an ARCHER2-sized workload on 5,860 nodes: minutes"),
]
#: words that make a line a synopsis, not a command
PLACEHOLDERS = re.compile(r"\[|\.\.\.|\b(TRACE|DIR|FILE|CONF|DUMP|SPEC\.toml|RUN_DIR|RUN_\d|T|N|HEAD:\d+)\b")
_IN_REPO_EXT = (".swf", ".gz", ".sacct", ".conf", ".toml", ".csv", ".npz", ".txt")


def _blocks(text):
    out, lang, buf = [], None, None
    for line in text.splitlines():
        m = re.match(r"^```(\w*)\s*$", line)
        if m and buf is None:
            lang, buf = m.group(1), []
        elif line.startswith("```") and buf is not None:
            out.append((lang, buf))
            buf = None
        elif buf is not None:
            buf.append(line)
    return out


def _commands(lang, lines):
    """(command, the output lines the page shows under it) of a block."""
    cmds, cur, outputs = [], None, None
    for line in lines:
        if cur is not None:
            cur += " " + line.strip().rstrip("\\").strip()
            if not line.rstrip().endswith("\\"):
                cmds.append((cur, outputs))
                cur = None
            continue
        if lang == "console" and not line.startswith("$ "):
            if outputs is not None:
                outputs.append(line)
            continue
        text = line[2:] if lang == "console" else line
        outputs = [] if lang == "console" else None
        if lang not in ("console", "bash", "sh", "") or not re.match(r"(pbf|python -m pbf)\b|cat \S+$", text):
            outputs = None
            continue
        if text.rstrip().endswith("\\"):
            cur = text.rstrip().rstrip("\\").strip()
        else:
            cmds.append((text, outputs))
    return [(c, o) for c, o in cmds if not PLACEHOLDERS.search(c.split("#")[0])]


def _page_blocks():
    cases = []
    for page in PAGES:
        for k, (lang, lines) in enumerate(_blocks(page.read_text())):
            cmds = _commands(lang, lines)
            if cmds:
                cases.append(pytest.param(page, cmds, id=f"{page.name}-{k}"))
    return cases


def _why_not(cmd, traces, made):
    for pattern, reason in SLOW:
        if re.search(pattern, cmd):
            return reason
    if ("$PBF_TRACES" in cmd or "../shared/traces" in cmd) and traces is None:
        return "the real archive logs are not at hand ($PBF_TRACES)"
    for name in re.findall(r"(?:\$PBF_TRACES|\.\./shared/traces)/([\w.-]+)", cmd):
        if not (traces / name).exists():
            return f"{name} is not in {traces}"
    words = shlex.split(cmd.split("|")[0].split(" #")[0])
    outs = {words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-o", "--out", "--output")}
    for w in words[1:]:
        w = w.split(":")[0] if w.endswith((":batch", ":normal")) else w
        if w in outs or w.startswith(("-", "$")) or "=" in w:
            continue
        if ("/" in w or w.endswith(_IN_REPO_EXT)) and not (ROOT / w).exists() and not Path(w).is_absolute() \
                and w.split("/")[0] not in made:
            return f"{w} is not in the repository"
    return None


def _run(cmd, cwd, traces, absolute):
    cmd = cmd.replace("../shared/traces", "$PBF_TRACES")
    cmd = re.sub(r"^(python -m pbf|pbf)\b", lambda m: f"{shlex.quote(sys.executable)} -m pbf", cmd)
    if absolute:                      # from elsewhere: the repository's relative paths made absolute
        def fix(m):
            word = m.group(0)
            path, sep, part = word.partition(":")
            return str(ROOT / path) + sep + part if "/" in path and (ROOT / path).exists() else word
        cmd = re.sub(r"(?<=\s)[\w.][\w./-]*(:\w+)?", fix, cmd)
    env = dict(os.environ, PYTHONPATH=str(Path(pbf.__file__).resolve().parents[1]))
    if traces is not None:
        env["PBF_TRACES"] = str(traces)
    return subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def _linked_root(folder):
    folder.mkdir()
    for entry in ROOT.iterdir():
        if not entry.name.startswith("."):
            (folder / entry.name).symlink_to(entry)
    return folder


@pytest.mark.parametrize("where", ["root", "elsewhere"])
@pytest.mark.parametrize("page, cmds", _page_blocks())
def test_documented_commands_run(page, cmds, where, tmp_path):
    traces = shared_trace_dir()
    traces = traces.resolve() if traces is not None and traces.is_dir() else None
    cwd = _linked_root(tmp_path / "clone") if where == "root" else tmp_path
    skipped, ran, made = [], 0, set()
    for cmd, shown in cmds:
        if cmd.startswith("cat "):        # a file the page shows: written as shown, for the commands below
            (cwd / cmd.split()[1]).write_text("\n".join(shown or []) + "\n")
            made.add(cmd.split()[1])
            continue
        why = _why_not(cmd, traces, made)
        if why:
            skipped.append(f"{cmd[:70]}: {why}")
            continue
        r = _run(cmd, cwd, traces, absolute=where == "elsewhere")
        assert r.returncode == 0, f"{page.name}: {cmd}\n(exit {r.returncode})\n{r.stderr[-2000:]}"
        assert "Traceback" not in r.stderr, f"{page.name}: {cmd}\n{r.stderr[-2000:]}"
        ran += 1
        words = shlex.split(cmd.split("|")[0].split(" #")[0])
        made |= {words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-o", "--out", "--output")}
        if shown and page.name in CHECKED_OUTPUT:
            for line in shown:
                if line.startswith(COMPARED):
                    assert line.rstrip() in r.stdout, f"{page.name}: {cmd}\nthe page shows: {line}\n" \
                                                      f"the command printed:\n{r.stdout[-3000:]}"
    if not ran:
        pytest.skip("; ".join(skipped))

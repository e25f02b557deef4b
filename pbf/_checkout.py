"""What ``import pbf`` does when it finds a source checkout whose compiled modules are not built.

Run from a clone's root after ``pip install .``, Python imports the folder ``./pbf`` (the current
folder comes first on ``sys.path`` for ``python -m`` and ``python -c``), not the installed package,
and that folder has no compiled core. :func:`use_installed` then hands the import over to the
installed pbf, if there is one elsewhere on ``sys.path``, with a one-line note on stderr; else it
stops with one line naming the two ways out.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

__all__ = ["use_installed", "installed_elsewhere", "advice"]

#: a compiled module every built pbf has
_PROBE = "_bitmap"


def _built(folder: str) -> bool:
    """Whether the package folder ``folder`` holds its compiled core."""
    return any(os.path.exists(os.path.join(folder, _PROBE + suffix))
               for suffix in importlib.machinery.EXTENSION_SUFFIXES)


def installed_elsewhere(checkout: str) -> str | None:
    """The folder of a built pbf on ``sys.path`` other than the package folder ``checkout``, or None."""
    here = os.path.realpath(checkout)
    folders = [os.path.join(entry or os.getcwd(), "pbf") for entry in sys.path]
    for finder in sys.meta_path:      # an editable install's finder maps the name to its folder
        if finder is importlib.machinery.PathFinder or not hasattr(finder, "find_spec"):
            continue
        try:
            spec = finder.find_spec("pbf", None)
        except Exception:             # (a third-party finder's own trouble is not ours)
            continue
        if spec is not None and spec.origin:
            folders.append(os.path.dirname(spec.origin))
    for folder in folders:
        if os.path.realpath(folder) == here or not os.path.isfile(os.path.join(folder, "__init__.py")):
            continue
        if _built(folder):
            return folder
    return None


def advice(checkout: str) -> str:
    """The one line that says why the checkout cannot be imported and the two ways out."""
    root = os.path.dirname(os.path.abspath(checkout))
    return (f"pbf: error: {checkout} is a source checkout whose compiled core is not built, and no "
            f"built pbf is installed elsewhere. Build it in place with 'pip install -e . "
            f"--no-build-isolation' in {root}, or install pbf ('pip install .') and run from another folder.")


def use_installed(checkout: str, cause: ImportError) -> None:
    """Called by ``pbf/__init__.py`` when the compiled core is missing in ``checkout`` (its folder).
    Loads the installed pbf in place of this one (``sys.modules['pbf']``: the import statement then
    returns it) and says so on stderr; without one, stops ``python -m pbf ...`` with one line, or
    raises :class:`ImportError` with that line for an import from code."""
    folder = installed_elsewhere(checkout)
    if folder is None:
        if sys.argv[:1] == ["-m"]:            # python -m pbf...: the module is still being located
            print(advice(checkout), file=sys.stderr)
            raise SystemExit(2)
        raise ImportError(advice(checkout).removeprefix("pbf: error: ")) from cause
    for name in [n for n in sys.modules if n.startswith("pbf.")]:
        del sys.modules[name]                 # (this module: the installed pbf must not see it)
    spec = importlib.util.spec_from_file_location("pbf", os.path.join(folder, "__init__.py"),
                                                  submodule_search_locations=[folder])
    module = importlib.util.module_from_spec(spec)
    sys.modules["pbf"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop("pbf", None)
        raise
    print(f"pbf: note: {checkout} is an unbuilt source checkout; using the installed pbf in {folder} "
          "('pip install -e . --no-build-isolation' runs the checkout itself)", file=sys.stderr)

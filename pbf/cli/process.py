"""What the command line sets before anything else is imported: the process's start (a replay's
``wall_s.process`` counts from it) and numpy's thread limits; and the garbage collector held off
while the ``pbf`` process starts."""
import gc
import os
import time

__all__ = ["STARTED", "hold_collector", "release_collector", "untranslated_argparse"]

#: ``time.perf_counter()`` when the command line was first imported
STARTED = time.perf_counter()

# pbf does no linear algebra; numpy's OpenBLAS would start a thread per core at import (about 70 ms
# here). The command line limits it unless the user asked otherwise; the library leaves it alone.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


_held = False


def hold_collector() -> None:
    """Hold the garbage collector off while the ``pbf`` process starts (``main()`` run as the process
    does): importing numpy and pbf makes tens of thousands of objects, every one of them kept, and
    the collector would go over them again and again (dozens of collections, milliseconds)."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release_collector() -> None:
    """Hand the collector back before a command's long work (a replay's loop; any other command at
    once): what the start-up made is frozen out of it first (``gc.freeze``: modules, classes,
    settings -- kept to the end anyway), so that its first collections need not go over it."""
    global _held
    if _held:
        _held = False
        gc.freeze()
        gc.enable()


def untranslated_argparse() -> None:
    """When no gettext catalog translates this process's messages (the usual case), give argparse
    its messages as they are: it looks each one up (dozens for ``pbf replay``'s options), and every
    lookup that finds no catalog searches the locale folders again. With a catalog, nothing changes.
    For the ``pbf`` process only (``main()`` without argv): the lookup is the process's own."""
    import argparse
    import gettext
    domain = gettext.textdomain()
    if argparse._ is gettext.gettext and gettext.find(domain, gettext.bindtextdomain(domain)) is None:
        argparse._ = str
        argparse.ngettext = _ngettext


def _ngettext(singular: str, plural: str, n: int) -> str:
    return singular if n == 1 else plural

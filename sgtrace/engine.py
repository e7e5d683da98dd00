"""What an engine's code means beyond Python, in the words its code uses: one profile the stages share.

The slicer (:mod:`sgtrace.graph.slicer`: which reads are knobs, accessors of
process-wide configuration, environment variables) and the evaluator (through
:class:`sgtrace.analyses.profile.EngineProfile`: what holds the server's
arguments, which calls measure the memory the log shows) read the same
profile. Nothing here names a file, a line or a class of a release: only the
words the engine's code uses for these things, in every release sgtrace reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Engine:
    """An engine's words for its configuration and its measurements."""

    #: Its name.
    name: str
    #: The names of the objects that hold the server's arguments: ``server_args.X``, ``self.server_args.X``,
    #: ``model_runner.server_args.X``, ``get_server_args().X`` read an argument (a knob).
    arguments: tuple[str, ...]
    #: A call without arguments of a module-level function named with this prefix (``get_schedule()``) hands out
    #: process-wide configuration: what it returns is read as a knob, whatever object carries it.
    accessor_prefix: str
    #: The names of environment variables (``SGLANG_ENABLE_X``), as ``os.getenv("...")`` and a registry's
    #: ``envs.X.get()`` spell them.
    environment: re.Pattern[str]
    #: Calls that return the GPU memory free at the moment they run (GB): a measurement the log shows.
    measures_free_memory: frozenset[str]


SGLANG = Engine(
    name="sglang",
    arguments=("server_args",),
    accessor_prefix="get_",
    environment=re.compile(r"^[A-Z][A-Z0-9]*_[A-Z0-9_]+$"),
    measures_free_memory=frozenset({"get_available_gpu_memory"}),
)

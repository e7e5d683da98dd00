"""A partial evaluator of the release's own code, for one run: known facts in, decided values or named unknowns out.

Nothing is run. An expression of the tree is read with the standard library's
``ast`` and evaluated over values that are either :class:`Known` (with where
each came from) or :class:`Unknown` (with the facts that would decide them):
literals, arithmetic, comparisons, ``in`` over literal collections and the
module-level constants they name (spreads and the module's own appends
included), ``and``/``or``/``if-else`` in three values (a known operand that
decides it does, whatever the others), ``any``/``all`` over a known sequence,
``getattr`` with a default, a few pure builtins, and calls into functions of
the tree with the arguments the call gives (their bodies run statement by
statement: assignments, ``if``/``elif``, ``return``; bounded in depth and
remembered). A name takes its value from the run's facts first (``--set``, the
log, the model's config), then from its assignment before the line that reads
it, then from the module's constants; an attribute from the facts, else from
the tree's writes of it (all of them must agree). An environment variable read
through the release's registry (``envs.NAME.get()``) is ``--env``'s value, else
the registry's default.

An undecided value bound to a local is still one value: every read of that
name (and of one attribute of it) in the same run of its function is that
value, so ``x != x`` is decided when ``x`` is not. An object held by a local
is taken to change only by statements that name it (an assignment to one of
its attributes or items, a call it is passed to or called on), not through
another object holding it; and an attribute the tree defines as a function
(a property) is read anew each time.

What SGLang calls what (which attributes hold the model's config, which calls
measure free memory) is the engine's profile (:mod:`sgtrace.analyses.profile`);
this package knows Python only.

The package's rooms, bottom up (each imports only from the ones below it; a
contract of ``.importlinter``): ``values`` (Known, Unknown, Same, values
worked out when first read, the program's arithmetic), ``facts`` (Facts,
ModelConfig, Words, Profile, Dtype), ``objects`` (ClassRef, Instance,
Member), ``syntax`` (walks over statements and expressions, text filters),
``source`` (Code, the source model, with functions parsed when first read),
``memo`` (the scope a body runs in, the memo, what the rooms ask of one
another), the rooms of the evaluator, each a mixin of :class:`Evaluator`:
``expressions`` (a table by node type), ``names`` (names and attributes),
``calls``, ``writes`` (the search for an attribute's writes),
``environment``, ``statements`` (a table by statement type); and
``evaluator`` on top.
"""

from sgtrace.analyses.evaluate.evaluator import MAX_NEW_PARSED, Evaluator
from sgtrace.analyses.evaluate.facts import (
    ASSUMED,
    CLASS_ASSUMED,
    CONFIG_KEY,
    LOADED_ASSUMED,
    Dtype,
    Facts,
    ModelConfig,
    Profile,
    Words,
    model_type_of,
)
from sgtrace.analyses.evaluate.objects import ClassRef, Instance, Member
from sgtrace.analyses.evaluate.source import (
    MAX_BYTES,
    MAX_DEPTH,
    MAX_FILES,
    MAX_PARSED,
    AsyncFunctionDef,
    Code,
    FunctionDef,
    method_of,
)
from sgtrace.analyses.evaluate.syntax import _DEFINED_BEFORE as _DEFINED_BEFORE
from sgtrace.analyses.evaluate.syntax import _WRITTEN_BEFORE as _WRITTEN_BEFORE
from sgtrace.analyses.evaluate.syntax import _defined_after as _defined_after
from sgtrace.analyses.evaluate.syntax import _spelt as _spelt
from sgtrace.analyses.evaluate.syntax import _walk_statements as _walk_statements
from sgtrace.analyses.evaluate.syntax import _written_after as _written_after
from sgtrace.analyses.evaluate.syntax import chain_of
from sgtrace.analyses.evaluate.values import Known, Same, Unknown, Value

__all__ = [
    "ASSUMED",
    "CLASS_ASSUMED",
    "CONFIG_KEY",
    "LOADED_ASSUMED",
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_FILES",
    "MAX_NEW_PARSED",
    "MAX_PARSED",
    "AsyncFunctionDef",
    "ClassRef",
    "Code",
    "Dtype",
    "Evaluator",
    "Facts",
    "FunctionDef",
    "Instance",
    "Known",
    "Member",
    "ModelConfig",
    "Profile",
    "Same",
    "Unknown",
    "Value",
    "Words",
    "chain_of",
    "method_of",
    "model_type_of",
]

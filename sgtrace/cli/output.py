"""Where the commands' answers go: standard output and files, each failure one line and exit code 2.

A missing folder is found before the analysis runs (the ``-o`` options' callback), a full disk or a
closed pipe when the answer is written. A file is replaced only once the new one is written whole, so
a failure never leaves half a baseline where the old one was.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import NoReturn

import click

from sgtrace.model import ExitCode


def emit(text: str) -> None:
    """Write *text* to standard output, flushed (a closed pipe or a full disk is one line and exit 2)."""
    try:
        click.echo(text, nl=False)
        sys.stdout.flush()
    except OSError as exc:
        failed(exc, None)


def write_file(path: Path, text: str) -> None:
    """Write *text* to *path* whole or not at all (one line and exit 2 when it cannot be written)."""
    try:
        if _special(path):  # /dev/stdout, a FIFO: written to, never replaced
            path.write_text(text, encoding="utf-8")
            return
        target = path.resolve()  # through a symbolic link, as an editor saves
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(text)
            os.chmod(temporary, 0o666 & ~_umask())
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as exc:
        failed(exc, path)


def output_path(_ctx: click.Context, _param: click.Parameter, value: str | Path | None) -> str | Path | None:
    """A click callback for an output file: refuse, before any work, a path whose folder is not there."""
    if value is None or str(value) == "-":
        return value
    path = Path(value)
    if path.is_dir():
        raise click.BadParameter(f"{path} is a folder: name a file in it")
    problem = _folder_problem(path)
    if problem:
        raise click.BadParameter(problem)
    return value


def failed(exc: OSError, path: Path | None) -> NoReturn:
    """Say why an output could not be written, in one line, and exit 2."""
    if path is None:
        silence_stdout()  # what is left in its buffer must not be flushed again at exit
        if exc.errno == errno.EPIPE:
            reason = "it was closed before everything was written (broken pipe)"
        else:
            reason = exc.strerror or str(exc)
        click.echo(f"sgtrace: error: cannot write to standard output: {reason}", err=True)
    else:
        reason = _folder_problem(path) if isinstance(exc, (FileNotFoundError, NotADirectoryError)) else ""
        click.echo(f"sgtrace: error: cannot write {path}: {reason or exc.strerror or exc}", err=True)
    sys.exit(ExitCode.ERROR)


def silence_stdout() -> None:
    """Point standard output at the null device: the interpreter's last flush then says nothing."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):  # not a real file (a test's capture): nothing to silence
        pass


def _folder_problem(path: Path) -> str:
    """Why *path*'s folder cannot hold it ("" if it can): missing, or a file where a folder should be."""
    folder = path.parent
    for ancestor in (folder, *folder.parents):
        if ancestor.is_dir():
            break
        if ancestor.exists():
            return f"{ancestor} is not a folder"
    if not folder.is_dir():
        return f"the folder {folder} does not exist"
    return ""


def _special(path: Path) -> bool:
    """Whether *path* is there and is not a regular file (a device, a FIFO)."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask

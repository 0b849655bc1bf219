"""The run-time errors of a compiled program. Part of the runtime every compiled program carries."""


class ProgramError(Exception):
    """An error the user caused (bad input, bad option): printed as one line, no traceback."""


class ReaderGone(ProgramError):
    """The reader of stdout stopped reading (`prog < in | head`): the program ends quietly with SIGPIPE's exit
    status, as a Futhark executable that SIGPIPE ends."""


class KernelUnavailable(ProgramError):
    """A kernel that the device's compiler could not build; a guard falls back to its next version."""


class WorkgroupTooLarge(KernelUnavailable):
    """A workgroup-level version whose arrays do not fit the device's local memory at these sizes: as a
    guard's threshold, a limit of the device, so its fallback is expected (logged with -L, not warned)."""


def fail(where, message):
    """A run-time error of the program at a source position (`file:line:col`, or "" for none)."""
    raise ProgramError(f"{where}: {message}" if where else message)


def unknown_entry_point(name: str, entry_points) -> str:
    """The message for an entry point the program does not have, naming those it has."""
    have = ", ".join(sorted(entry_points)) or "no entry points"
    return f"unknown entry point {name!r}; this program has {have}"

"""The one exception type the tuner raises for problems the user can fix (bad input, failing program)."""


class TunerError(Exception):
    """A user-facing error: its message is printed as one line, without a traceback."""

"""How the fuzzing and differential suites report a problem. Every bug they found while they were written is
fixed, so no pattern is excused; a bug found later and not fixed at once goes here as a function that recognises
its exact pattern (calling `known_issue`), with the call at the place that reports it, until its fix lands.

`INCFLAT_FUZZ_LOG=FILE`: every problem found (known or not) is appended to FILE as a JSON line and the example
passes, so that a long run goes on finding more instead of stopping at the first (tests/test_fuzz.py)."""

import json
import os

from hypothesis import event
from hypothesis.errors import InvalidArgument


def _event(text: str) -> None:
    try:
        event(text)
    except InvalidArgument:  # a plain test, not a hypothesis example
        pass


def known_issue(name: str) -> bool:
    """Records that an example hit the known issue `name`; the caller then accepts the example."""
    _event(f"known issue: {name}")
    return True


def report(kind: str, problem: str, reproducer) -> None:
    """A problem found: logged under INCFLAT_FUZZ_LOG (and the example passes), else a failed test."""
    log = os.environ.get("INCFLAT_FUZZ_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps({"kind": kind, "problem": problem[-3000:], "reproducer": reproducer}) + "\n")
        _event(f"logged: {kind}")
        return
    raise AssertionError(f"{kind}: {problem}\nreproducer: {reproducer!r}")

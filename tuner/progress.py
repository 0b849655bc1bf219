"""The progress bar of long work (the tuner's runs, bench's datasets), shown only on a terminal."""

from __future__ import annotations

import sys


def progress_bar(total: int | None, unit: str = "dataset"):
    """A tqdm bar on stderr when stderr is a terminal (logs stay clean), else None; a total of None is not
    known yet (the bar counts, and shows an estimate once its total is set)."""
    if not sys.stderr.isatty() or total == 0:
        return None
    from tqdm import tqdm
    # No monitor thread: the tuner starts its measurement children with a preexec_fn, which threads make unsafe.
    tqdm.monitor_interval = 0
    return tqdm(total=total, unit=unit, file=sys.stderr, leave=False)

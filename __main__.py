"""`python -m incflat` and the `incflat` command (the console script's entry point)."""

import os
import signal


def _exit_quietly(signum, frame):
    # os._exit, not an exception: extension modules turn exceptions raised in their import into ImportErrors.
    os._exit(128 + signum)


def main() -> None:
    # An interrupt while the compiler's modules load (nothing is written yet) ends the command without a
    # traceback: installed before the first import of incflat's own modules, which take most of a second;
    # incflat.cli.main installs the handlers that clean up.
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _exit_quietly)
    from incflat.cli import run
    run()


if __name__ == "__main__":
    main()

"""Installs the runtime's modules, carried by a compiled program as text, as a package of their own.

A compiled program holds this module's text itself (so it has no import to make before the runtime exists),
then calls `install_runtime` with the text of each runtime module. The modules import each other relatively,
as they do inside incflat, so they run unchanged. The package's name carries a hash of the runtime's text:
programs compiled by the same incflat share one copy in a process, and those of another version get theirs.
"""

import linecache
import sys
import types


def install_runtime(package, modules):
    """`modules`: (name, source text) pairs in dependency order. Returns the package (a module)."""
    if package in sys.modules:
        return sys.modules[package]
    root = types.ModuleType(package, "The incflat runtime of a compiled program.")
    root.__path__ = []
    root.__package__ = package
    sys.modules[package] = root
    try:
        for name, source in modules:
            qualified = f"{package}.{name}"
            module = types.ModuleType(qualified)
            module.__package__ = package
            module.__file__ = f"<{qualified}>"
            # tracebacks show the runtime's source lines
            linecache.cache[module.__file__] = (len(source), None, source.splitlines(True), module.__file__)
            sys.modules[qualified] = module
            exec(compile(source, module.__file__, "exec"), module.__dict__)
            setattr(root, name, module)
    except BaseException:
        for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
            del sys.modules[name]
        raise
    return root

"""The rename_interfaces stage: every name in the program becomes `base_N`, parameters included, so that generated
code can use names as identifiers."""

import dataclasses

from incflat.ir import source as S
from incflat.ir.rename import NameSource, Renamer, all_names
from incflat.ir.types import I64


def rename_interfaces(prog: S.Program) -> S.Program:
    """Gives the parameters and size parameters of every function fresh names too, so that every name
    in the program is `base_N` (generated code can use names as identifiers)."""
    names = NameSource(all_names(prog))
    funs = []
    for f in prog.funs:
        r = Renamer(names, {})
        sizes = tuple(r.bind(S.Var(n, I64)).name for n in f.size_params)
        params = tuple(r.bind(p) for p in f.params)
        body = r.body(f.body)  # before the result types: they may name sizes the body binds
        ret = tuple(r.type(t) for t in f.ret)
        funs.append(dataclasses.replace(f, size_params=sizes, params=params, ret=ret, body=body))
    return dataclasses.replace(prog, funs=tuple(funs))

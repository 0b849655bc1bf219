"""tile_stencil_loops (flatten/stencils.py): a host loop over a stencil map runs K steps a launch, in tiles.
The corpus program stencil_loops.fut checks every version's values at the default tile sizes; here, which
loops are tiled, and the values with other tiles (one step a launch, tiles narrower than the array, blocks of
one element), each version forced."""

import json
import pathlib

import numpy as np
import pytest

from conftest import run_program
from incflat import pipeline
from incflat.cli import compile_file
from incflat.compiled import compile_cached, program_params, version_assignments
from incflat.harness import Compiled, check, load_program, prepare
from incflat.ir import source as S
from incflat.ir.traverse import walk_exps
from test_native_host import binary_values

PROGRAM = pathlib.Path(__file__).resolve().parent / "programs" / "stencil_loops.fut"


def tiled_loops(source: str) -> dict:
    """Per function: the names of the tile-size parameters the stage gave it."""
    prog = pipeline.compile(source, "t.fut", until="tile_stencil_loops")
    return {f.name: sorted(e.name for e in walk_exps(f.body) if isinstance(e, S.TuningParam))
            for f in prog.funs}


def test_the_corpus_loops_are_tiled():
    tiled = tiled_loops(PROGRAM.read_text())
    for entry in ("path", "heat", "heat21", "rule90", "edge"):
        assert tiled[entry] == [f"{entry}.stencil_steps_0", f"{entry}.stencil_width_0"], tiled


NOT_STENCILS = {
    "an index read from the array": "loop x = xs for _t < 3i64 do map (\\i -> x[(i + i64.i32 x[i]) % m]) (iota m)",
    "a neighbour too far": "loop x = xs for _t < 3i64 do map (\\i -> x[(i + 9) % m]) (iota m)",
    "no neighbour": "loop x = xs for _t < 3i64 do map (\\i -> x[i] * 2) (iota m)",
    "an i32 counter": "loop x = xs for _t < 3i32 do map (\\i -> x[(i + 1) % m]) (iota m)",
    "the step reads the array": "loop x = xs for _t < 3i64 do let s = x[0] in map (\\i -> s + x[(i + 1) % m]) (iota m)",
    "a neighbour's neighbour through the map's lambda":
        "loop x = xs for _t < 3i64 do map (\\i -> let j = x[(i + 1) % m] in x[i64.i32 j % m]) (iota m)",
    "two arrays carried": "(loop (x, y) = (xs, xs) for _t < 3i64 do "
                          "(map (\\i -> y[(i + 1) % m]) (iota m), x)).0",
    "inside a map": "map (\\r -> loop x = copy xs for _t < r do map (\\i -> x[(i + 1) % m]) (iota m))"
                    " (iota 2)  |> head",
    "a step with inner parallelism": "loop x = xs for _t < 3i64 do map (\\i -> x[(i + 1) % m] + i32.sum x) (iota m)",
}


@pytest.mark.parametrize("why", NOT_STENCILS)
def test_what_is_not_a_stencil_loop_stays(why):
    source = f"entry main [m] (xs: [m]i32): [m]i32 =\n  {NOT_STENCILS[why]}\n"
    assert tiled_loops(source) == {"main": []}


TILES = [  # (K, W): steps a launch, elements a tile
    (1, 256),  # one step a launch
    (2, 5),  # a block of one element (R = 1)
    (3, 7),
    (9, 4),  # more steps than a tile of 4 allows: K becomes 1
    (50, 20),
    (2, 1),  # a tile narrower than two halos: it widens to 2R + 1
]


@pytest.fixture(scope="module")
def compiled_program(tmp_path_factory):
    return compile_cached(PROGRAM, cache=tmp_path_factory.mktemp("stencils"))


@pytest.mark.parametrize("steps,width", TILES, ids=[f"K{k}-W{w}" for k, w in TILES])
def test_every_tile_size_and_version_agrees(steps, width, device, compiled_program):
    program = load_program(PROGRAM)
    cases = prepare(program)
    sizes = {p.name: steps if ".stencil_steps_" in p.name else width
             for p in program_params(compiled_program) if ".stencil_" in p.name}
    assert len(sizes) == 10
    failures = []
    for versions in version_assignments(compiled_program):
        runner = Compiled(compiled_program, device, {**sizes, **versions})
        assert runner.load() is None
        for p in cases:
            reason = p.problem or check(p, runner.run(p.entry, p.inputs))
            if reason is not None:
                failures.append(f"[{versions}] {p.title}: {reason}")
    assert not failures, "\n".join(failures[:5])


def test_a_tiled_loop_launches_once_every_k_steps(tmp_path, device):
    """path's 39 steps, 16 a launch in the workgroup version (the one a GPU's default thresholds take here):
    3 launches of the tiles and the padding's, where the loop launched 39."""
    program = compile_file(PROGRAM, tmp_path / "stencils", backend="pyopencl")
    wall = np.arange(40 * 300, dtype=np.int32).reshape(40, 300) % 10
    profile = tmp_path / "profile.json"
    run_program(program, binary_values([wall]), "-e", "path", "-b", "-d", device, "-P", "--profile-json",
                str(profile), "--param", "path.suff_outer_par_0=1000000", "--param", "path.suff_intra_par_1=1")
    launches = json.loads(profile.read_text())["kernels"]
    assert sum(k["runs"] for k in launches.values()) <= 5, launches

"""sink_iotas: a kernel computes the iotas it reads (codegen.lower.iotas), and reads none from memory."""

from incflat import pipeline
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.analysis import free_in_body
from incflat.ir.traverse import walk_exps

SOURCE = ("entry main [n][m] (xss: [n][m]f32): [n]f32 =\n"
          "  map (\\xs -> reduce (+) 0 (map (\\j -> xs[j] * f32.i64 j) (iota m))) xss")


def host_iotas(body: S.Body) -> set:
    return {s.pat[0].name for s in body.stms if isinstance(s.exp, S.Iota)}


def test_every_kernel_binds_the_iotas_it_reads():
    before = pipeline.compile(SOURCE, "t.fut", until="rename_interfaces").funs[0].body
    after = pipeline.compile(SOURCE, "t.fut", until="sink_iotas").funs[0].body
    hoisted = host_iotas(before)
    assert hoisted, "normalisation hoists the iota out of the map"
    kernels = [e for e in walk_exps(after) if isinstance(e, T.SEGOPS) and e.level == 1]
    assert kernels
    reading = [k for k in kernels if any(isinstance(s.exp, S.Iota) for s in k.body.stms)]
    assert reading, "the thread-per-row version reads the iota"
    for k in kernels:
        assert not set(free_in_body(k.body)) & host_iotas(after)


def test_a_thread_walking_an_iota_loads_no_index():
    """No kernel takes the iota as an array: the thread-per-row version computes its own (sink_iotas), and
    the flattened segred, whose context binds the iota, computes the element of each index it binds
    (host_iotas): the host's iota never reaches the device's loads."""
    generated = pipeline.compile(SOURCE, "t.fut")
    iota = next(iter(host_iotas(pipeline.compile(SOURCE, "t.fut", until="sink_iotas").funs[0].body)))
    assert any(k.name.startswith("segmap") for k in generated.kernels)
    assert any(k.name.startswith("segred") for k in generated.kernels)
    for k in generated.kernels:
        assert f"{iota}_mem" not in k.source(), k.name

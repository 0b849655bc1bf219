"""Sequential element loops in kernels (KernelWriter.element_loop): an innermost loop of a run-time width is
unrolled UNROLL times; a loop holding another loop, a loop of a constant width and the loops inside a
segred's round of UNROLL elements (unrolled by hand already) are not. The results of the unrolled kernels
are checked with every other kernel's by test_versions_agree and test_benchmarks."""

from incflat import pipeline
from incflat.codegen.opencl import KernelWriter

PRAGMA = f"#pragma unroll {KernelWriter.UNROLL}"


def kernels(source: str) -> dict:
    return {k.name: k.source() for k in pipeline.compile(source, "t.fut").kernels}


def unrolled_loops(text: str) -> list:
    """The text of each loop that follows the pragma, up to its closing brace."""
    loops = []
    for part in text.split(PRAGMA)[1:]:
        depth, end = 0, None
        for at, ch in enumerate(part):
            depth += {"{": 1, "}": -1}.get(ch, 0)
            if ch == "}" and depth == 0:
                end = at
                break
        loops.append(part[:end + 1])
    return loops


def test_a_thread_scanning_its_row_unrolls_the_loop():
    found = kernels("entry main [n][m] (xss: [n][m]f32): [n][m]f32 = map (\\xs -> scan (+) 0 xs) xss")
    per_row = [t for t in found.values() if PRAGMA in t]
    assert per_row, "the thread-per-row version walks its row in an unrolled loop"
    for text in per_row:
        for loop in unrolled_loops(text):
            assert loop.lstrip().startswith("for (long i_c")
            assert loop.count("for (") == 1


def test_a_loop_of_constant_width_is_left_to_the_opencl_compiler():
    found = kernels("entry main [n] (xs: [n]f32): [n]f32 =\n"
                    "  map (\\x -> reduce (+) 0 (map (\\j -> x * f32.i64 j) (iota 16))) xs")
    assert any("< ((long)16L)" in t or "< 16L" in t for t in found.values())
    assert not any(PRAGMA in t for t in found.values())


def test_only_the_innermost_of_nested_loops_is_unrolled():
    found = kernels("entry main [n][m][k] (xsss: [n][m][k]f32): [n]f32 =\n"
                    "  map (\\xss -> reduce (+) 0 (map (\\xs -> reduce (*) 1 xs) xss)) xsss")
    loops = [loop for t in found.values() for loop in unrolled_loops(t)]
    assert loops
    assert all(loop.count("for (") == 1 for loop in loops)


def test_a_segreds_round_of_elements_unrolls_no_inner_loop():
    """Each of the round's UNROLL elements walks a row (the row's maximum): the round has UNROLL loads in
    flight already, so only the loop of the elements after the last round is unrolled."""
    found = kernels("entry main [n][m] (xss: [n][m]f32): f32 = reduce (+) 0 (map (\\xs -> f32.maximum xs) xss)")
    rounds = [t for name, t in found.items() if name.startswith("segred") and t.count("for (") > KernelWriter.UNROLL]
    assert rounds, "a segred whose elements each walk a row"
    for text in rounds:
        assert text.count(PRAGMA) < text.count("for (") - KernelWriter.UNROLL

"""fuse_scan_postmaps: a thread's sequential scan applies the map that reads its prefixes (codegen.lower.postmaps)."""

from incflat import pipeline
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.traverse import walk_exps

SOURCE = ("entry main [n][m] (xss: [n][m]f32): ([n][m]f32, [n]f32) =\n"
          "  unzip (map (\\xs -> let fused = map (\\x -> x * 2) (scan (+) 0 xs)\n"
          "                     let kept = scan (*) 1 xs\n"
          "                     in (map2 (+) fused (map (\\x -> x - 1) kept), kept[0])) xss)")


def thread_scans(prog) -> list:
    """The scanomaps run by the threads of the thread-per-row version (a level-1 segmap)."""
    kernels = [e for e in walk_exps(prog.funs[0].body) if isinstance(e, T.SegMap) and e.level == 1]
    return [e for k in kernels for e in walk_exps(k.body) if isinstance(e, S.Scanomap)]


def test_a_map_that_alone_reads_the_prefixes_becomes_the_post_map():
    before = thread_scans(pipeline.compile(SOURCE, "t.fut", until="sink_iotas"))
    after = thread_scans(pipeline.compile(SOURCE, "t.fut", until="fuse_scan_postmaps"))
    assert len(before) == len(after) >= 2 and all(e.post is None for e in before)
    fused = [e for e in after if e.post is not None]
    assert len(fused) == len(after) // 2, "the scan whose prefixes are also indexed keeps them"
    assert all(len(e.post.params) == 1 and len(e.post.ret) == 1 for e in fused)


def test_the_post_map_is_applied_in_the_loop_and_the_prefixes_are_not_stored():
    generated = pipeline.compile(SOURCE, "t.fut")
    threads = [k.source() for k in generated.kernels if k.name.startswith("segmap")]
    # the thread-per-row kernel: not the intra-group version's, nor the flat versions' (no loops)
    segmaps = [src for src in threads if "barrier" not in src and "for (long" in src]
    assert len(segmaps) == 1
    # loops: the scan with its post-map, the kept scan, the map over kept, the final map2 (without the
    # post-map the first scan would be two loops)
    assert all(src.count("for (long") == 4 for src in segmaps), segmaps[0]

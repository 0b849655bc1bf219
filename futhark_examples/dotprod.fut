-- A dot product: one version (no thresholds), one reduction whose workgroup count decides its speed on a
-- CPU. On PoCL its default grid is far from the best: what `incflat autotune --tune-sizes` is for.
--   incflat autotune --tune-sizes futhark_examples/dotprod.fut
-- ==
-- entry: main
-- "1e7" random input { [10000000]f32 [10000000]f32 }
-- "3e6" notune random input { [3000000]f32 [3000000]f32 }
entry main [n] (xs: [n]f32) (ys: [n]f32): f32 = f32.sum (map2 (*) xs ys)

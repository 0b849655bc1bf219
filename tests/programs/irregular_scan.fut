-- Irregular nested parallelism whose per-element array is stored, not only folded: each thread's scan
-- result has a length computed in the kernel.
-- ==
-- entry: main
-- input { [0i64, 1i64, 4i64, 10i64, 3i64] }
-- output { [0i64, 0i64, 10i64, 165i64, 4i64] }

entry main [n] (ns: [n]i64): [n]i64 = map (\k -> reduce (+) 0 (scan (+) 0 (iota k))) ns

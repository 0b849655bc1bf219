-- Irregular nested parallelism: a map whose body reduces over iota of a per-element length.
-- ==
-- entry: main
-- input { [0i64, 1i64, 4i64, 10i64, 3i64] }
-- output { [0i64, 0i64, 6i64, 45i64, 3i64] }

-- ==
-- entry: squares
-- input { [0i64, 1i64, 4i64, 10i64, 3i64] }
-- output { [0i64, 0i64, 14i64, 285i64, 5i64] }

entry main [n] (ns: [n]i64): [n]i64 = map (\k -> reduce (+) 0 (iota k)) ns

entry squares [n] (ns: [n]i64): [n]i64 = map (\k -> reduce (+) 0 (map (\i -> i * i) (iota k))) ns

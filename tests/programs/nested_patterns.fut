-- Nested tuple patterns in lambdas and lets, over zips of zips.
-- ==
-- input { [1i32, 2i32, 3i32] [2i32, 4i32, 6i32] [3i32, 6i32, 9i32] }
-- output { [5i32, 14i32, 27i32] 6i32 }

entry main [n] (xs: [n]i32) (ys: [n]i32) (zs: [n]i32): ([n]i32, i32) =
  let ws = map (\((a, b), c) -> a * b + c) (zip (zip xs ys) zs)
  let ((p, q), r) = ((xs[0], ys[0]), zs[0])
  in (ws, p + q + r)

-- assert cond e: e's value when cond holds, else a run-time error naming the assertion's position, on the
-- host and inside kernels (a map over the rows, and a nested map that flattening distributes).
-- ==
-- entry: main
-- input { 3i64 [1i32, 2i32, 3i32] }
-- output { 2i32 [2i32, 4i32, 6i32] 6i32 }
-- input { 0i64 empty([0]i32) }
-- error: assert.fut:24:11: .*Assertion is false: m > 0
-- input { 3i64 [1i32, -2i32, 3i32] }
-- error: assert.fut:25:23: .*Assertion is false: x >= 0
-- input { 2i64 [1i32, 2i32] }
-- error: assert.fut:27:11: .*Assertion is false: s != 3

-- ==
-- entry: rows
-- input { [[1i32, 2i32], [3i32, 4i32]] }
-- output { [[1i32, 2i32], [3i32, 4i32]] [3i32, 7i32] }
-- input { [[1i32, 2i32], [3i32, -4i32]] }
-- error: assert.fut:33:40: .*Assertion is false: y >= 0
-- input { empty([0][2]i32) }
-- output { empty([0][2]i32) empty([0]i32) }

entry main [n] (m: i64) (xs: [n]i32): (i32, [n]i32, i32) =
  let k = assert (m > 0) (m - 1)
  let ys = map (\x -> assert (x >= 0) (x * 2)) xs
  let s = i32.sum xs
  let _ = assert (s != 3) s
  in (i32.i64 (assert (k < 10) k) + 0, ys, s)

-- an assertion in a map over rows whose inner map has its own assertion; the unused result of an
-- assertion inside a kernel still checks
entry rows [n][m] (xss: [n][m]i32): ([n][m]i32, [n]i32) =
  let checked = map (\xs -> map (\y -> assert (y >= 0) y) xs) xss
  let sums = map (\xs -> assert (length xs == m) (i32.sum xs)) checked
  in (checked, sums)

-- ==
-- entry: distributed
-- input { [[1i32, 2i32], [3i32, 4i32]] }
-- output { [[10i32, 15i32], [36i32, 45i32]] }
-- input { [[1i32, 2i32], [-3i32, 1i32]] }
-- error: assert.fut:53:18: .*Assertion is false: s > 0
-- input { [[99i32, -5i32]] }
-- error: assert.fut:53:59: .*Assertion is false: y < 100
-- input { empty([0][3]i32) }
-- output { empty([0][3]i32) }

-- the assertion between two inner maps is a nest of its own when the body is distributed; in a branch it
-- checks only the elements that take the branch
entry distributed [n][m] (xss: [n][m]i32): [n][m]i32 =
  map (\xs -> let ys = map (+1) xs
              let s = i32.sum ys
              in assert (s > 0) (map (\y -> if y > 0 then assert (y < 100) (y * s) else 0) ys)) xss

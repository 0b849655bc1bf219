-- Indexing: a[i, j], a[i][j], a row a[i], gathers inside a map; out of bounds is a run-time error.
-- ==
-- entry: main
-- input { [[-5i32, -2i32, 1i32, 4i32], [7i32, 10i32, 13i32, 16i32], [19i32, 22i32, 25i32, 28i32]] 1i64 2i64 }
-- output { 13i32 13i32 [7i32, 10i32, 13i32, 16i32] 28i32 }
-- input { [[-5i32, -2i32, 1i32, 4i32], [7i32, 10i32, 13i32, 16i32], [19i32, 22i32, 25i32, 28i32]] 0i64 0i64 }
-- output { -5i32 -5i32 [-5i32, -2i32, 1i32, 4i32] 28i32 }
-- input { [[-5i32, -2i32, 1i32, 4i32], [7i32, 10i32, 13i32, 16i32], [19i32, 22i32, 25i32, 28i32]] 3i64 0i64 }
-- error: out of bounds
-- input { [[-5i32, -2i32, 1i32, 4i32], [7i32, 10i32, 13i32, 16i32], [19i32, 22i32, 25i32, 28i32]] 0i64 -1i64 }
-- error: out of bounds

-- ==
-- entry: gather
-- input { [0.5f32, 1.5f32, 2.5f32, 3.5f32] [3i64, 0i64, 0i64, 2i64, 1i64] }
-- output { [3.5f32, 0.5f32, 0.5f32, 2.5f32, 1.5f32] }
-- input { [0.5f32, 1.5f32, 2.5f32, 3.5f32] empty([0]i64) }
-- output { empty([0]f32) }
-- input { [0.5f32, 1.5f32, 2.5f32, 3.5f32] [1i64, 4i64] }
-- error: out of bounds

entry main [n][m] (xss: [n][m]i32) (i: i64) (j: i64): (i32, i32, [m]i32, i32) =
  (xss[i, j], xss[i][j], xss[i], xss[n - 1, m - 1])

entry gather [n][k] (xs: [n]f32) (is: [k]i64): [k]f32 = map (\i -> xs[i]) is

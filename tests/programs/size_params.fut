-- Size parameters of functions and entry points, used as values; arguments whose sizes disagree are an error.
-- ==
-- entry: main
-- input { [1.0f32, 2.0f32, 3.0f32] [0.5f32, -1.0f32, 2.0f32, 4.0f32] }
-- output { [[0.5f32, -1.0f32, 2.0f32, 4.0f32], [1.0f32, -2.0f32, 4.0f32, 8.0f32], [1.5f32, -3.0f32, 6.0f32,
--   12.0f32]] 14.0f32 3i64 4i64 }
-- input { empty([0]f32) [0.5f32, -1.0f32, 2.0f32, 4.0f32] }
-- output { empty([0][4]f32) 0.0f32 0i64 4i64 }

-- ==
-- entry: same
-- input { [1.0f32, 2.0f32, 3.0f32] [1.0f32, 1.0f32, 1.0f32] }
-- output { 6.0f32 }
-- input { [1.0f32, 2.0f32, 3.0f32] [0.5f32, -1.0f32, 2.0f32, 4.0f32] }
-- error: [Ss]ize

def dot [n] (xs: [n]f32) (ys: [n]f32): f32 = reduce (+) 0 (map2 (*) xs ys)

def outer [n][m] (xs: [n]f32) (ys: [m]f32): [n][m]f32 = map (\x -> map (\y -> x * y) ys) xs

entry main [n][m] (xs: [n]f32) (ys: [m]f32): ([n][m]f32, f32, i64, i64) =
  (outer xs ys, dot xs xs, n, m)

entry same [n] (xs: [n]f32) (ys: [n]f32): f32 = dot xs ys

-- Reductions with tuple operators: argmax (value and index, ties to the smaller index), and mean and
-- variance in one pass (count, sum, sum of squares); per row too.
-- ==
-- entry: main
-- input { [1.0f32, 5.0f32, -2.0f32, 5.0f32, 3.0f32] }
-- output { 5.0f32 1i64 }
-- input { empty([0]f32) }
-- output { -f32.inf 0i64 }

-- ==
-- entry: rows
-- input { [[1.0f32, 9.0f32, 3.0f32], [4.0f32, 4.0f32, 2.0f32], [-1.0f32, -2.0f32, -3.0f32]] }
-- output { [9.0f32, 4.0f32, -1.0f32] [1i64, 0i64, 0i64] }

-- ==
-- entry: stats
-- input { [1.0f64, 2.0f64, 3.0f64, 4.0f64] }
-- output { 2.5f64 1.25f64 }
-- random input { [1000]f64 }
-- auto output

def argmax [n] (xs: [n]f32): (f32, i64) =
  reduce (\(a, i) (b, j) -> if a > b || (a == b && i < j) then (a, i) else (b, j))
         (-f32.inf, n) (zip xs (iota n))

entry main [n] (xs: [n]f32): (f32, i64) = argmax xs

entry rows [n][m] (xss: [n][m]f32): ([n]f32, [n]i64) = unzip (map argmax xss)

entry stats [n] (xs: [n]f64): (f64, f64) =
  let (c, s, s2) = reduce (\(c1, s1, q1) (c2, s2, q2) -> (c1 + c2, s1 + s2, q1 + q2)) (0, 0, 0)
                          (map (\x -> (1f64, x, x * x)) xs)
  let mean = s / c
  in (mean, s2 / c - mean * mean)

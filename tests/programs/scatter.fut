-- scatter: writes to out-of-bounds indices (negative or too large) are ignored; reversing an array.
-- ==
-- entry: main
-- input { [0i32, 0i32, 0i32, 0i32, 0i32] [4i64, 1i64, -1i64, 7i64, 0i64] [10i32, 20i32, 30i32, 40i32, 50i32] }
-- output { [50i32, 20i32, 0i32, 0i32, 10i32] }
-- input { [0i32, 0i32, 0i32, 0i32, 0i32] empty([0]i64) empty([0]i32) }
-- output { [0i32, 0i32, 0i32, 0i32, 0i32] }

-- ==
-- entry: reversed
-- input { [1.0f32, 2.0f32, 3.5f32] }
-- output { [3.5f32, 2.0f32, 1.0f32] }
-- input { empty([0]f32) }
-- output { empty([0]f32) }

entry main [n][k] (dest: [n]i32) (is: [k]i64) (vs: [k]i32): [n]i32 =
  scatter (map (\x -> x) dest) is vs

entry reversed [n] (xs: [n]f32): [n]f32 =
  scatter (replicate n 0) (map (\i -> n - 1 - i) (iota n)) xs

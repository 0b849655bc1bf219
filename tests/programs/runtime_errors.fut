-- Run-time errors: division by zero (at the top level and inside a map), an index out of bounds inside a
-- loop, and arguments whose sizes disagree with the entry point's type.
-- ==
-- entry: div
-- input { [6i32, -7i32] 2i32 }
-- output { [3i32, -4i32] }
-- input { [6i32, -7i32] 0i32 }
-- error: [Dd]ivision by zero

-- ==
-- entry: scalar_div
-- input { -7i64 3i64 }
-- output { 2i64 }
-- input { 1i64 0i64 }
-- error: [Dd]ivision by zero

-- ==
-- entry: walk
-- input { [1i32, 2i32, 3i32] 3i64 }
-- output { 6i32 }
-- input { [1i32, 2i32, 3i32] 4i64 }
-- error: out of bounds

-- ==
-- entry: pairs
-- input { [1.0f32, 2.0f32] [3.0f32, 4.0f32] }
-- output { [4.0f32, 6.0f32] }
-- input { [1.0f32, 2.0f32] [3.0f32] }
-- error: [Ss]ize

entry div [n] (xs: [n]i32) (d: i32): [n]i32 = map (\x -> x / d) xs

entry scalar_div (a: i64) (b: i64): i64 = a % b

entry walk [n] (xs: [n]i32) (steps: i64): i32 =
  loop acc = 0 for i < steps do acc + xs[i]

entry pairs [n] (xs: [n]f32) (ys: [n]f32): [n]f32 = map2 (+) xs ys

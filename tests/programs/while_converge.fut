-- A while loop whose condition is a reduction over the array state (halve until the sum is at most 1).
-- ==
-- input { [4.0f32, 8.0f32, 2.5f32] }
-- output { [0.25f32, 0.5f32, 0.15625f32] 4i32 }
-- input { [0.5f32] }
-- output { [0.5f32] 0i32 }
-- input { empty([0]f32) }
-- output { empty([0]f32) 0i32 }

entry main [n] (xs: [n]f32): ([n]f32, i32) =
  loop (ys, it) = (xs, 0) while reduce (+) 0 ys > 1 && it < 100 do
    (map (/ 2) ys, it + 1)

-- A loop whose state is an array, updated by a map in each iteration (it converges to 2).
-- ==
-- input { [0.0f32, 2.0f32, 10.0f32, -6.0f32, 100.0f32] 0i32 }
-- output { [0.0f32, 2.0f32, 10.0f32, -6.0f32, 100.0f32] }
-- input { [0.0f32, 2.0f32, 10.0f32, -6.0f32, 100.0f32] 1i32 }
-- output { [1.0f32, 2.0f32, 6.0f32, -2.0f32, 51.0f32] }
-- input { [0.0f32, 2.0f32, 10.0f32, -6.0f32, 100.0f32] 5i32 }
-- output { [1.9375f32, 2.0f32, 2.25f32, 1.75f32, 5.0625f32] }
-- input { [0.0f32, 2.0f32, 10.0f32, -6.0f32, 100.0f32] 40i32 }
-- output { [2.0f32, 2.0f32, 2.0f32, 2.0f32, 2.0f32] }

entry main [n] (xs: [n]f32) (k: i32): [n]f32 =
  loop ys = xs for _i < k do map (\y -> y * 0.5 + 1) ys

-- reduce_comm: commutative reductions.
-- ==
-- input { [1.5f32, 2.5f32, -1.0f32, 4.0f32] [7i32, 3i32, 12i32, 5i32] }
-- output { 7.0f32 12i32 13i32 }
-- random input { [5000]f32 [5000]i32 }
-- auto output

entry main [n] (xs: [n]f32) (ys: [n]i32): (f32, i32, i32) =
  (reduce_comm (+) 0 xs, reduce_comm i32.max i32.lowest ys, reduce_comm (^) 0 ys)

-- min and max as functions and as reduction operators, with lowest/highest/inf as neutral elements.
-- ==
-- input { [5i32, -3i32, 12i32, 7i32, 0i32, -8i32] [1.5f32, -2.25f32, 9.75f32, 3.0f32, -0.5f32, 4.0f32] }
-- output { -8i32 12i32 -2.25f32 9.75f32 [5i32, -2i32, 12i32, 7i32, 0i32, 4i32] }
-- input { empty([0]i32) empty([0]f32) }
-- output { 2147483647i32 -2147483648i32 f32.inf -f32.inf empty([0]i32) }
-- random input { [1000]i32 [1000]f32 }
-- auto output

entry main [n] (xs: [n]i32) (ys: [n]f32): (i32, i32, f32, f32, [n]i32) =
  (reduce i32.min i32.highest xs, reduce i32.max i32.lowest xs,
   reduce f32.min f32.inf ys, reduce f32.max (-f32.inf) ys,
   map2 (\x y -> i32.max x (i32.f32 y)) xs ys)

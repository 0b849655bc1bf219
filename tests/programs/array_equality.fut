-- == and != on arrays: equal when the shapes and all elements are (rank 1 and 2, arrays of
-- tuples, empty arrays, different sizes), as a reduction.
-- ==
-- input { [1i32, 2i32, 3i32] [1i32, 2i32, 3i32] [[1f32, 2f32], [3f32, 4f32]] }
-- output { true false false false false true true }
-- input { [1i32, 2i32, 3i32] [1i32, 2i32, 4i32] [[1f32, 2f32], [3f32, 5f32]] }
-- output { false true false true false true true }
-- input { [1i32, 2i32] [1i32, 2i32, 3i32] empty([0][2]f32) }
-- output { false true false true false true true }
-- input { empty([0]i32) empty([0]i32) empty([0][2]f32) }
-- output { true false false true true true true }

entry main (xs: []i32) (ys: []i32) (a: [][2]f32) =
  let b = map (map (\x -> if x == 4 then 0 else x)) a
  in (xs == ys, xs != ys, xs == (xs ++ [0]),
      a == b,
      zip xs xs == zip ys (map (+1) ys),
      ([] : [0][2]f32) == a[0:0],
      (xs, 1i32) == (xs, 1))

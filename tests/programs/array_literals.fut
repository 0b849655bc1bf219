-- Array literals of scalars and of arrays, built from variables; an entry point without parameters.
-- ==
-- entry: main
-- input { 2i32 3i32 }
-- output { [2i32, 3i32, 5i32] [[2i32, 3i32], [3i32, 2i32]] 12i32 }
-- input { -1i32 5i32 }
-- output { [-1i32, 5i32, 4i32] [[-1i32, 5i32], [5i32, -1i32]] -10i32 }

-- ==
-- entry: consts
-- input {  }
-- output { [1.5f32, 2.0f32, -3.0f32, 0.25f32] }

entry main (x: i32) (y: i32): ([3]i32, [2][2]i32, i32) =
  let a = [x, y, x + y]
  let b = [[x, y], [y, x]]
  in (a, b, reduce (+) 0 (map (\r -> r[0] * r[1]) b))

entry consts : [4]f32 = [1.5, 2, -3, 0.25]

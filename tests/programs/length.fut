-- length of arrays, of rows, and of a filtered array.
-- ==
-- input { [[1.0f32, -2.0f32, 3.0f32], [0.0f32, 5.0f32, -1.0f32]] }
-- output { 2i64 3i64 3i64 }
-- input { empty([0][4]f32) }
-- output { 0i64 4i64 0i64 }

entry main [n][m] (xss: [n][m]f32): (i64, i64, i64) =
  (length xss, length (transpose xss), length (filter (> 0) (flatten xss)))

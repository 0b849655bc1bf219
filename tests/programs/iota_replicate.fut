-- iota and replicate, of scalars and of arrays; a negative size is a run-time error.
-- ==
-- input { 0i64 1.25f32 }
-- output { empty([0]i64) empty([0]f32) empty([0][3]i32) empty([0]i32) }
-- input { 1i64 1.25f32 }
-- output { [0i64] [1.25f32] [[1i32, 2i32, 3i32]] [0i32] }
-- input { 4i64 1.25f32 }
-- output { [0i64, 1i64, 2i64, 3i64] [1.25f32, 1.25f32, 1.25f32, 1.25f32] [[1i32, 2i32, 3i32], [1i32, 2i32,
--   3i32], [1i32, 2i32, 3i32], [1i32, 2i32, 3i32]] [0i32, 1i32, 2i32, 3i32] }
-- input { -1i64 0.0f32 }
-- error: [Nn]egative|invalid|[Ss]ize

entry main (n: i64) (x: f32): ([n]i64, [n]f32, [n][3]i32, [n]i32) =
  (iota n, replicate n x, replicate n [1, 2, 3], map i32.i64 (iota n))

-- zip, zip3, zip4, zip5, unzip and unzip3, with wildcards in tuple patterns.
-- ==
-- input { [1i32, -2i32, 3i32] [0.5f32, 1.5f32, -2.0f32] [true, false, true] [10i64, 20i64, 30i64] [1u8, 2u8,
--   250u8] }
-- output { [1.5f32, -0.5f32, 1.0f32] [1i64, 0i64, 3i64] [10i64, -2i64, 30i64] [11u8, 12u8, 4u8] [1i32, -2i32,
--   3i32] [true, false, true] }

entry main [n] (a: [n]i32) (b: [n]f32) (c: [n]bool) (d: [n]i64) (e: [n]u8): ([n]f32, [n]i64, [n]i64, [n]u8, [n]i32, [n]bool) =
  let s2 = map (\(x, y) -> f32.i32 x + y) (zip a b)
  let s3 = map (\(x, _, z) -> if z then i64.i32 x else 0) (zip3 a b c)
  let s4 = map (\(x, _, z, w) -> if z then w else i64.i32 x) (zip4 a b c d)
  let s5 = map (\(_, _, _, _, v) -> v + 10) (zip5 a b c d e)
  let (a2, _) = unzip (zip a b)
  let (_, _, c2) = unzip3 (zip3 a b c)
  in (s2, s3, s4, s5, a2, c2)

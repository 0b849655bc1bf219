-- Infinities, NaN, the largest and smallest values of each type (for floats: the infinities), and isnan.
-- ==
-- entry: main
-- input { 1.5f32 }
-- output { false false f32.inf -f32.inf f32.inf -f32.inf f32.nan f32.inf }
-- input { 0.0f32 }
-- output { false true f32.inf -f32.inf f32.inf -f32.inf f32.nan f32.nan }
-- input { -2.0f32 }
-- output { false false f32.inf -f32.inf f32.inf -f32.inf f32.nan -f32.inf }
-- input { f32.nan }
-- output { true true f32.inf -f32.inf f32.inf -f32.inf f32.nan f32.nan }

-- ==
-- entry: ints
-- input { 0i32 }
-- output { -2147483648i32 2147483647i32 9223372036854775807i64 255u8 -128i8 -f64.inf }
-- input { 1i32 }
-- output { -2147483648i32 -2147483648i32 9223372036854775807i64 255u8 -128i8 -f64.inf }

entry main (x: f32): (bool, bool, f32, f32, f32, f32, f32, f32) =
  (f32.isnan x, f32.isnan (x / 0), f32.inf, -f32.inf, f32.highest, f32.lowest, f32.nan, x / 0)

entry ints (u: i32): (i32, i32, i64, u8, i8, f64) =
  (i32.lowest, i32.highest + u, i64.highest, u8.highest, i8.lowest, f64.lowest)

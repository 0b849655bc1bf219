-- Conversions between numeric types: float to integer truncates toward zero, integer to integer wraps.
-- ==
-- input { 3.75f32 300i64 true }
-- output { 3i64 300.0f32 3.75f64 300i32 44u8 3i8 1.0f32 1i32 }
-- input { -3.75f32 -1i64 false }
-- output { -3i64 -1.0f32 -3.75f64 -1i32 255u8 -3i8 0.0f32 0i32 }
-- input { 0.5f32 4294967297i64 true }
-- output { 0i64 4294967300.0f32 0.5f64 1i32 1u8 0i8 1.0f32 1i32 }
-- input { 100.0f32 0i64 false }
-- output { 100i64 0.0f32 100.0f64 0i32 0u8 100i8 0.0f32 0i32 }

entry main (x: f32) (n: i64) (b: bool): (i64, f32, f64, i32, u8, i8, f32, i32) =
  (i64.f32 x, f32.i64 n, f64.f32 x, i32.i64 n, u8.i64 n, i8.f32 x, f32.bool b, i32.bool b)

-- A signed integer converted to a wider unsigned type is zero-extended, as Futhark's math.fut defines u32.i16
-- (zext_i16_i32); to a signed type it is sign-extended (sext), and from an unsigned one zero-extended.
-- ==
-- entry: widen
-- input { [0i16, 5i16, -1i16, -32768i16] [-128i8, 127i8] }
-- output { [0u32, 5u32, 65535u32, 32768u32] [0u64, 5u64, 65535u64, 32768u64] [0i32, 5i32, -1i32, -32768i32]
--          [128u16, 127u16] [65408u16, 127u16] }

entry widen (xs: []i16) (bs: []i8): ([]u32, []u64, []i32, []u16, []u16) =
  (map u32.i16 xs, map u64.i16 xs, map i32.i16 xs, map u16.i8 bs, map (\b -> u16.i16 (i16.i8 b)) bs)

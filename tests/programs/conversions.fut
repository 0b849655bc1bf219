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

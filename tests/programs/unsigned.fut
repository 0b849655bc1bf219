-- Unsigned arrays: sums wrap around; division and comparison are unsigned.
-- ==
-- input { [200u8, 100u8, 7u8] [60000u16, 6000u16, 1u16] [4000000000u32, 500000000u32, 3u32]
--   [18446744073709551000u64, 1000u64, 2u64] }
-- output { 51u8 465u16 205032707u32 386u64 [1333333333u32, 166666666u32, 1u32] [true, false, false] }

entry main [n] (a: [n]u8) (b: [n]u16) (c: [n]u32) (d: [n]u64): (u8, u16, u32, u64, [n]u32, [n]bool) =
  (reduce (+) 0 a, reduce (+) 0 b, reduce (+) 0 c, reduce (+) 0 d, map (/ 3) c, map (> 1000) d)

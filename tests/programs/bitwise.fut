-- Bitwise operators on unsigned and signed integers; >> is arithmetic on signed types.
-- ==
-- entry: main
-- input { [61680u32, 12345u32, 0u32, 4294967295u32, 7u32] [4080u32, 54321u32, 1u32, 305419896u32, 9u32] }
-- output { [240u32, 4145u32, 0u32, 305419896u32, 1u32] [65520u32, 62521u32, 1u32, 4294967295u32, 15u32]
--   [65280u32, 58376u32, 1u32, 3989547399u32, 14u32] [493440u32, 98760u32, 0u32, 4294967288u32, 56u32]
--   [1020u32, 13580u32, 0u32, 76354974u32, 2u32] }

-- ==
-- entry: signed
-- input { -100i32 2i32 }
-- output { -25i32 -400i32 156i32 98i32 }
-- input { 1000i32 4i32 }
-- output { 62i32 16000i32 232i32 -1002i32 }
-- input { 123456789i32 7i32 }
-- output { 964506i32 -1377400192i32 21i32 -123456790i32 }
-- input { -1i32 31i32 }
-- output { -1i32 -2147483648i32 255i32 0i32 }

entry main [n] (xs: [n]u32) (ys: [n]u32): ([n]u32, [n]u32, [n]u32, [n]u32, [n]u32) =
  (map2 (&) xs ys, map2 (|) xs ys, map2 (^) xs ys, map (\x -> x << 3) xs, map (\y -> y >> 2) ys)

entry signed (x: i32) (s: i32): (i32, i32, i32, i32) =
  (x >> s, x << s, x & 0xff, (x | 1) ^ -1)

-- >>>: the logical shift right, also on signed types and as a qualified section (u8.>>>).
-- ==
-- input { [-8i32, 8, -1] [0xF0u8, 1u8, 255u8] }
-- output { [2147483644i32, 4, 2147483647] [120u8, 0u8, 127u8] [-4i32, 4, -1] 1073741822i32 }
entry main (xs: []i32) (ys: []u8) =
  (map (>>> 1) xs, map (u8.>>> 1) ys, map (>> 1) xs, -8 >>> 2 + 0)

-- A segmented scan: a scan with a tuple operator on (flag, value) pairs.
-- ==
-- input { [true, false, false, true, false, true, true, false] [1i32, 2i32, 3i32, 4i32, 5i32, 6i32, 7i32,
--   8i32] }
-- output { [1i32, 3i32, 6i32, 4i32, 9i32, 6i32, 7i32, 15i32] }
-- input { [false, true, true, false, true, false, false, true] [1i32, 2i32, 3i32, 4i32, 5i32, 6i32, 7i32,
--   8i32] }
-- output { [1i32, 2i32, 3i32, 7i32, 5i32, 11i32, 18i32, 8i32] }
-- input { empty([0]bool) empty([0]i32) }
-- output { empty([0]i32) }

def sgm_scan [n] (flags: [n]bool) (xs: [n]i32): [n]i32 =
  let (_, res) = unzip (scan (\(f1, x1) (f2, x2) -> (f1 || f2, if f2 then x2 else x1 + x2))
                              (false, 0) (zip flags xs))
  in res

entry main [n] (flags: [n]bool) (xs: [n]i32): [n]i32 = sgm_scan flags xs

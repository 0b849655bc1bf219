-- for x in xs loops with tuple state: the maximum and how many times a new maximum was seen.
-- ==
-- input { [3i32, 1i32, 4i32, 1i32, 5i32, 9i32, 2i32, 6i32] }
-- output { 9i32 4i32 }
-- input { empty([0]i32) }
-- output { -2147483648i32 0i32 }
-- input { [-5i32] }
-- output { -5i32 1i32 }

entry main [n] (xs: [n]i32): (i32, i32) =
  let (mx, cnt) = loop (mx, cnt) = (i32.lowest, 0) for x in xs do
                    if x > mx then (x, cnt + 1) else (mx, cnt)
  in (mx, cnt)

-- while loops: Collatz step counts, per element (a while loop inside a map) and for one number.
-- ==
-- entry: main
-- input { [1i64, 2i64, 3i64, 6i64, 7i64, 27i64, 97i64] }
-- output { [0i32, 1i32, 7i32, 8i32, 16i32, 111i32, 118i32] }

-- ==
-- entry: one
-- input { 1i64 }
-- output { 0i32 }
-- input { 27i64 }
-- output { 111i32 }
-- input { 871i64 }
-- output { 178i32 }

def collatz (x: i64): i32 =
  let (_, steps) = loop (y, steps) = (x, 0) while y != 1 do
                     (if y % 2 == 0 then y / 2 else 3 * y + 1, steps + 1)
  in steps

entry main [n] (xs: [n]i64): [n]i32 = map collatz xs

entry one (x: i64): i32 = collatz x

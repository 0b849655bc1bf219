-- Inclusive scans with +, * and max; an exclusive scan made from an inclusive one.
-- ==
-- entry: main
-- input { [3i32, -1i32, 4i32, 1i32, -5i32, 9i32] }
-- output { [3i32, 2i32, 6i32, 7i32, 2i32, 11i32] [3i32, -3i32, -12i32, -12i32, 60i32, 540i32] [3i32, 3i32,
--   4i32, 4i32, 4i32, 9i32] }
-- input { empty([0]i32) }
-- output { empty([0]i32) empty([0]i32) empty([0]i32) }
-- random input { [3000]i32 }
-- auto output

-- ==
-- entry: exclusive
-- input { [1i64, 2i64, 3i64, 4i64] }
-- output { [0i64, 1i64, 3i64, 6i64] }

entry main [n] (xs: [n]i32): ([n]i32, [n]i32, [n]i32) =
  (scan (+) 0 xs, scan (*) 1 xs, scan i32.max i32.lowest xs)

entry exclusive [n] (xs: [n]i64): [n]i64 =
  let s = scan (+) 0 xs
  in map (\i -> if i == 0 then 0 else s[i - 1]) (iota n)

-- A loop whose array state shrinks: pairwise sums until one element is left (the length is a power of two).
-- ==
-- input { [1i32, 2i32, 3i32, 4i32, 5i32, 6i32, 7i32, 8i32] }
-- output { 36i32 }
-- input { [5i32] }
-- output { 5i32 }
-- input { empty([0]i32) }
-- output { 0i32 }

entry main [n] (xs: [n]i32): i32 =
  let res = loop (ys: []i32) = xs while length ys > 1 do
              let h = length ys / 2
              in map (\i -> ys[2 * i] + ys[2 * i + 1]) (iota h)
  in if length res == 0 then 0 else res[0]

-- map2, map3, map4 and map5.
-- ==
-- input { [1i32, 2i32, 3i32] [4i32, 5i32, 6i32] [-1i32, 0i32, 1i32] [7i32, 8i32, 9i32] [2i32, 2i32, 2i32] }
-- output { [5i32, 7i32, 9i32] [3i32, 10i32, 19i32] [11i32, 15i32, 19i32] [13i32, 12i32, 11i32] }

entry main [n] (a: [n]i32) (b: [n]i32) (c: [n]i32) (d: [n]i32) (e: [n]i32): ([n]i32, [n]i32, [n]i32, [n]i32) =
  (map2 (+) a b,
   map3 (\x y z -> x * y + z) a b c,
   map4 (\x y z w -> x + y + z + w) a b c d,
   map5 (\x y z w v -> x * y - z * w + v) a b c d e)

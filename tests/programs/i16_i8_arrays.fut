-- Small integer types in arrays: conversions between them, wrapping maps and reductions.
-- ==
-- input { [300i16, -400i16, 7i16] [-128i8, 127i8, 5i8] }
-- output { [29872i16, 25663i16, 705i16] [44i8, 112i8, 7i8] -93i16 [-38400i32, -50800i32, 35i32] }

entry main [n] (xs: [n]i16) (ys: [n]i8): ([n]i16, [n]i8, i16, [n]i32) =
  (map2 (\x y -> x * 100 + i16.i8 y) xs ys, map (\x -> i8.i16 x) xs, reduce (+) 0 xs,
   map2 (\x y -> i32.i16 x * i32.i8 y) xs ys)

-- Maps whose lambdas return tuples of scalars and of arrays; unzip of the result.
-- ==
-- entry: main
-- input { [1i32, 2i32, 3i32] }
-- output { [2i32, 4i32, 6i32] [0i32, 1i32, 2i32] [[1i32, 1i32], [2i32, 4i32], [3i32, 9i32]] }

-- ==
-- entry: arrays
-- input { [1i32, 2i32, 3i32] }
-- output { [[1i32, 1i32, 1i32], [2i32, 2i32, 2i32], [3i32, 3i32, 3i32]] [2i32, 3i32, 4i32] }

entry main [n] (xs: [n]i32): ([n]i32, [n]i32, [n][2]i32) =
  let (twice, less) = unzip (map (\x -> (x * 2, x - 1)) xs)
  let pairs = map (\x -> [x, x * x]) xs
  in (twice, less, pairs)

entry arrays [n] (xs: [n]i32): ([n][3]i32, [n]i32) =
  unzip (map (\x -> (replicate 3 x, x + 1)) xs)

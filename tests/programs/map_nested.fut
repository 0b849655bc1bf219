-- Three nested maps, written with partial application and with lambdas.
-- ==
-- entry: main
-- input { [[[-10i32, -9i32, -8i32, -7i32], [-6i32, -5i32, -4i32, -3i32], [-2i32, -1i32, 0i32, 1i32]], [[2i32,
--   3i32, 4i32, 5i32], [6i32, 7i32, 8i32, 9i32], [10i32, 11i32, 12i32, 13i32]]] }
-- output { [[[99i32, 80i32, 63i32, 48i32], [35i32, 24i32, 15i32, 8i32], [3i32, 0i32, -1i32, 0i32]], [[3i32,
--   8i32, 15i32, 24i32], [35i32, 48i32, 63i32, 80i32], [99i32, 120i32, 143i32, 168i32]]] }
-- random input { [3][5][7]i32 }
-- auto output

-- ==
-- entry: lambdas
-- input { [[-10i32, -9i32, -8i32, -7i32], [-6i32, -5i32, -4i32, -3i32], [-2i32, -1i32, 0i32, 1i32]] [1i32,
--   -1i32, 2i32, 0i32] }
-- output { [[-9i32, 10i32, -15i32, 1i32], [-5i32, 6i32, -7i32, 1i32], [-1i32, 2i32, 1i32, 1i32]] }

entry main [n][m][k] (xsss: [n][m][k]i32): [n][m][k]i32 = map (map (map (\x -> x * x - 1))) xsss

entry lambdas [n][m] (xss: [n][m]i32) (ys: [m]i32): [n][m]i32 =
  map (\xs -> map2 (\x y -> x * y + 1) xs ys) xss

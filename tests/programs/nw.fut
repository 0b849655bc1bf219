-- Needleman-Wunsch-like: the score matrix is filled along anti-diagonals in a loop; the cells of one
-- diagonal are computed by a map and written with scatter into the flattened matrix.
-- ==
-- input { [1i32, 2i32, 3i32, 4i32, 2i32] [1i32, 3i32, 3i32, 2i32, 2i32] 1i32 }
-- output { [[0i32, -1i32, -2i32, -3i32, -4i32, -5i32], [-1i32, 1i32, 0i32, -1i32, -2i32, -3i32], [-2i32,
--   0i32, 0i32, -1i32, 0i32, -1i32], [-3i32, -1i32, 1i32, 1i32, 0i32, -1i32], [-4i32, -2i32, 0i32, 0i32,
--   0i32, -1i32], [-5i32, -3i32, -1i32, -1i32, 1i32, 1i32]] }
-- input { [1i32, 2i32, 3i32, 4i32, 2i32] [1i32, 2i32, 3i32, 4i32, 2i32] 2i32 }
-- output { [[0i32, -2i32, -4i32, -6i32, -8i32, -10i32], [-2i32, 1i32, -1i32, -3i32, -5i32, -7i32], [-4i32,
--   -1i32, 2i32, 0i32, -2i32, -4i32], [-6i32, -3i32, 0i32, 3i32, 1i32, -1i32], [-8i32, -5i32, -2i32, 1i32,
--   4i32, 2i32], [-10i32, -7i32, -4i32, -1i32, 2i32, 5i32]] }
-- input { [7i32] [8i32] 3i32 }
-- output { [[0i32, -3i32], [-3i32, -1i32]] }

def score (a: i32) (b: i32): i32 = if a == b then 1 else -1

entry main [n] (xs: [n]i32) (ys: [n]i32) (penalty: i32): [][]i32 =
  let m = n + 1
  let init = map (\i -> map (\j -> if i == 0 then -(i32.i64 j) * penalty
                                    else if j == 0 then -(i32.i64 i) * penalty
                                    else 0)
                             (iota m))
                 (iota m)
  let final = loop mat = flatten init for d < 2 * n - 1 do
    let idxs = map (\k -> let i = k + 1
                          let j = d + 1 - k
                          in if j >= 1 && j <= n then i * m + j else -1)
                   (iota n)
    let vals = map (\k -> let i = k + 1
                          let j = d + 1 - k
                          in if j >= 1 && j <= n
                             then i32.max (mat[(i - 1) * m + j - 1] + score xs[i - 1] ys[j - 1])
                                          (i32.max (mat[(i - 1) * m + j] - penalty) (mat[i * m + j - 1] - penalty))
                             else 0)
                   (iota n)
    in scatter mat idxs vals
  in unflatten final

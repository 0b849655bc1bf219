-- Index sections (.[i]), (.[i, j]), (.[1:]) next to projection sections (.0).
-- ==
-- input { [[1i32, 2i32, 3i32], [4i32, 5i32, 6i32]] 1i64 }
-- output { [1i32, 4i32] [[2i32, 3i32], [5i32, 6i32]] 6i32 [2i32, 5i32] [1i32, 4i32] }
-- input { [[7i32], [8i32]] 0i64 }
-- output { [7i32, 8i32] empty([2][0]i32) 8i32 [7i32, 8i32] [7i32, 8i32] }

entry main [n][m] (xss: [n][m]i32) (i: i64) =
  let firsts = map (.[0]) xss
  let rests = map (.[1:]) xss
  let corner = (.[n-1, m-1]) xss
  let col = map (.[i]) xss
  let pairs = map (.0) (zip firsts col)
  in (firsts, rests, corner, col, pairs)

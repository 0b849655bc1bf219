-- Update paths that mix fields and indices, in `with` and in `let`, as Futhark reads them: `a with [i].x = v` is
-- `a with [i] = (a[i] with x = v)`, `r with xs[i] = v` is `r with xs = (r.xs with [i] = v)`; a record's fields are
-- consumed apart (Futhark's tests/uniqueness/uniqueness61.fut updates x.0, then x.1).
-- ==
-- entry: paths
-- input { 3i64 5i32 }
-- output { [0i32, 5i32, 0i32] 3i32 [[2.0f32, 2.0f32, 2.0f32], [9.0f32, 2.0f32, 2.0f32], [2.0f32, 2.0f32, 2.0f32]]
--          [7i32, 1i32, 1i32] [5i32, 1i32, 1i32] }

entry paths (n: i64) (x: i32) =
  let r = {xs = replicate n 0i32, k = 3i32}
  let r2 = r with xs[1] = x
  let m = replicate n (replicate n {a = (1i32, 2f32)})
  let m2 = m with [1, 0].a.1 = 9
  let ps = replicate n (1i32, 2i32)
  let ps[0].0 = 7
  let q = {ys = replicate n 1i32}
  let q.ys[0] = x
  in (r2.xs, r2.k, map (map (.a.1)) m2, map (.0) ps, q.ys)

-- ==
-- entry: fields_apart
-- input { [1, 2] [3, 4] } output { [5, 2] [6, 4] }

def both [n] (x: *([n]i32, [n]i32)) = (x with 0[0] = 5) with 1[0] = 6

entry fields_apart [n] (x: *[n]i32) (y: *[n]i32) = both (x, y)

-- Existential sizes `?[n].t` (rsbench's size-lifted record, the containers library's partition): the sizes named
-- are unknown, as `[]`; two arrays that share one are checked to agree where they are used together.
-- ==
-- entry: main
-- input { 3i64 [1, 5, 2, 7] }
-- output { 9f32 6 [5, 7] [1, 2] }

type~ data = ?[n][m].{xs: [n]i32, ys: [n]f32, zs: [m]i32}

def mk (k: i64) : data = {xs = replicate k 1, ys = replicate k 2, zs = iota (k + 1) |> map i32.i64}

def part [n] (as: [n]i32) : ?[k].([k]i32, [n - k]i32) = partition (> 2) as

entry main (k: i64) (as: []i32) : (f32, i32, []i32, []i32) =
  let d = mk k
  let (a, b) = part as
  in (f32.sum (map2 (\x y -> f32.i32 x + y) d.xs d.ys), i32.sum d.zs, a, b)

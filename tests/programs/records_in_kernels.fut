-- Arrays of records (one array per field, as for tuples): maps returning records, reductions and scans
-- with record operators, field sections (.x), indexing rs[i].x, record patterns in SOAC lambdas, zip and
-- unzip with records inside tuples, nested maps over rows of records, and a loop inside a map over records.
-- ==
-- entry: centroid
-- input { [1f32, 2f32, 3f32, 6f32] [0f32, 4f32, 8f32, 4f32] }
-- output { 3f32 4f32 4i64 }
-- input { empty([0]f32) empty([0]f32) }
-- output { 0f32 0f32 0i64 }
-- random input { [1000]f32 [1000]f32 }
-- auto output

-- ==
-- entry: argmin_dist
-- input { [3f32, -1f32, 0.5f32, 2f32] [4f32, 1f32, 0.5f32, -2f32] }
-- output { 2i64 1f32 [25f32, 2f32, 0.5f32, 8f32] }
-- input { [1f32] [1f32] }
-- output { 0i64 2f32 [2f32] }

-- ==
-- entry: running
-- input { [1i32, 2i32, 3i32, 4i32] }
-- output { [1i32, 3i32, 6i32, 10i32] [1i32, 2i32, 6i32, 24i32] [4i32, 3i32, 2i32, 1i32] }
-- input { empty([0]i32) }
-- output { empty([0]i32) empty([0]i32) empty([0]i32) }

-- ==
-- entry: rows
-- input { [[1f32, 2f32], [3f32, 4f32], [5f32, 6f32]] }
-- output { [[2f32, 4f32], [6f32, 8f32], [10f32, 12f32]] [3f32, 7f32, 11f32] [2f32, 12f32, 30f32] }

-- ==
-- entry: steps
-- input { [1f32, 2f32, 0f32] [0f32, 1f32, 5f32] 3i32 }
-- output { [4f32, 5f32, 0f32] [0f32, 1f32, 5f32] [true, true, false] }

type pt = {x: f32, y: f32}
type body = {pos: pt, mass: f32}

def dist2 (a: pt) (b: pt): f32 =
  let d = {x = a.x - b.x, y = a.y - b.y}
  in d.x * d.x + d.y * d.y

def points [n] (xs: [n]f32) (ys: [n]f32): [n]pt = map2 (\x y -> {x, y}) xs ys

entry centroid [n] (xs: [n]f32) (ys: [n]f32): (f32, f32, i64) =
  let ps = points xs ys
  let s = reduce (\a b -> {x = a.x + b.x, y = a.y + b.y}) {x = 0, y = 0} ps
  let k = f32.i64 (i64.max n 1)
  let sx = f32.sum (map (.x) ps)
  in (sx / k, s.y / k, length ps)

entry argmin_dist [n] (xs: [n]f32) (ys: [n]f32): (i64, f32, [n]f32) =
  let ps = points xs ys
  let ds = map (\p -> dist2 p {x = 0, y = 0}) ps
  let best = reduce (\a b -> if a.d < b.d || (a.d == b.d && a.i < b.i) then a else b)
                    {d = f32.inf, i = n}
                    (map2 (\d i -> {i, d}) ds (iota n))
  in (best.i, ps[best.i].x + ps[best.i].y, ds)

entry running [n] (xs: [n]i32): ([n]i32, [n]i32, [n]i32) =
  let rs = map (\x -> {sum = x, prod = x}) xs
  let sc = scan (\a b -> {sum = a.sum + b.sum, prod = a.prod * b.prod}) {sum = 0, prod = 1} rs
  let (tagged, _) = unzip (zip (map (\r -> {v = r.sum}) sc) xs)
  let rev = map (\i -> rs[n - 1 - i].sum) (iota n)
  in (map (.v) tagged, map (.prod) sc, rev)

entry rows [n][m] (xss: [n][m]f32): ([n][m]f32, [n]f32, [n]f32) =
  let rs = map (\row -> {row, total = f32.sum row}) xss
  let scaled = map (\{row, total}: {row: [m]f32, total: f32} -> {row = map (* 2) row, total}) rs
  let prods = map (\r -> reduce (\a b -> {p = a.p * b.p}) {p = 1} (map (\v -> {p = v}) r.row)) rs
  in (map (.row) scaled, map (.total) scaled, map (.p) prods)

entry steps [n] (xs: [n]f32) (ys: [n]f32) (k: i32): ([n]f32, [n]f32, [n]bool) =
  let bs = map2 (\x y -> {pos = {x, y}, mass = 1f32}) xs ys
  let moved = map (\(b: body) ->
                     loop b = b for _i < k do
                       if b.pos.y < 3 then b with pos.x = b.pos.x + b.mass else b) bs
  in (map (.pos.x) moved, map (\b -> b.pos.y) moved, map2 (\a b -> a.pos.x != b.pos.x) bs moved)

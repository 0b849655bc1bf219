-- Type abbreviations for a scalar type and a tuple type.
-- ==
-- input { [0.0f64, 3.0f64, 3.0f64, 0.0f64] [0.0f64, 0.0f64, 4.0f64, 4.0f64] }
-- output { 14.0f64 }
-- input { [1.0f64] [2.0f64] }
-- output { 0.0f64 }

type real = f64
type point = (real, real)

def dist ((x1, y1): point) ((x2, y2): point): real =
  f64.sqrt ((x1 - x2) * (x1 - x2) + (y1 - y2) * (y1 - y2))

entry main [n] (xs: [n]real) (ys: [n]real): real =
  let ps: [n]point = zip xs ys
  in reduce (+) 0 (map (\i -> dist ps[i] ps[(i + 1) % n]) (iota n))

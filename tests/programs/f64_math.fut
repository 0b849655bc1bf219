-- f64 arithmetic and prelude functions in a map, with a reduction (numerical integration by the midpoint rule).
-- ==
-- input { 1i64 }
-- output { 3.2f64 1.6487212707001282f64 }
-- input { 10i64 }
-- output { 3.1424259850010983f64 1.7175660864611277f64 }
-- input { 1000i64 }
-- output { 3.1415927369231227f64 1.7182817568639708f64 }

entry main (n: i64): (f64, f64) =
  let h = 1 / f64.i64 n
  let mids = map (\i -> (f64.i64 i + 0.5) * h) (iota n)
  let pi = reduce (+) 0 (map (\x -> 4 / (1 + x * x)) mids) * h
  let e = reduce (+) 0 (map f64.exp mids) * h
  in (pi, e)

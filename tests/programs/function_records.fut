-- Tuples and records that hold functions, as Futhark's defunctionalisation allows (Futhark's
-- tests/higher-order-functions/records0.fut): made, picked by field, matched by patterns, passed to and returned
-- from functions, passed through `id`.
-- ==
-- input { 1 2 3 } output { 64 [3, 4, 5] }

def add (x: i32) (y: i32) : i32 = x + y

def pair_of (k: i32) = (\(z: i32) -> z * k, k)

def apply_both ((f, g): (i32 -> i32, i32 -> i32)) (x: i32) = f x + g x

entry main (x: i32) (y: i32) (z: i32) =
  let n = 1
  let t = (\(v: i32) -> n + v, 10)
  let r = {a = 42, f = add, f1 = add n, g = \(v: i32) -> v + v + n}
  let (h, k) = pair_of 2
  let {f1, g = _, a = _, f = _} = id r
  in (t.0 z + t.1 + r.f r.a x + r.f1 y + r.g z - h k - apply_both (r.g, f1) 0 + 3,
      map (\v -> (id t).0 v + f1 0) [1, 2, 3])

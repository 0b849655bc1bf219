-- Top-level and local functions; a local function uses a variable of its enclosing function.
-- ==
-- input { [1.0f64, -2.0f64, 3.5f64, 0.25f64] 1.5f64 }
-- output { [18.8125f64, 14.3125f64, 22.5625f64, 17.6875f64] 4.16082924427331f64 }

def square (x: f64): f64 = x * x

entry main [n] (xs: [n]f64) (k: f64): ([n]f64, f64) =
  let scale (y: f64) = y * k
  let norm2 = reduce (+) 0 (map square xs)
  let f (y: f64) (z: f64): f64 = scale y + z
  in (map (\x -> f x norm2) xs, f64.sqrt norm2)

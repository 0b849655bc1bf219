-- A function passed for a parameter whose type is written takes the types written there: `g 0`, with g: f64 -> t,
-- passes an f64 (Futhark's tests/issue2230a.fut: incflat gave [9]i32 where [9]f64 is right), and so does a
-- function applied to a partial application of it or passed on to a SOAC.
-- ==
-- entry: replicated
-- input { 2i64 3i64 } output { [0.0, 0.0, 0.0, 0.0, 0.0, 0.0] }

def f (n: i64) (m: i64) (g: f64 -> [n * m]f64) = g 0

entry replicated n m = f n m (\x -> replicate (n * m) x)

-- ==
-- entry: applied
-- input { [1i32, 2i32] } output { [2.5f32, 3.5f32] 1.0f64 }

def twice (h: f32 -> f32 -> f32) (xs: []i32) = map (h 1.5) (map f32.i32 xs)

def one (k: f64 -> f64) = k 1

entry applied (xs: []i32) = (twice (\a b -> a + b) xs, one (\x -> x))

-- Functions with inferred parameter types, function-typed parameters, and functions returning functions:
-- inlined and checked at each use.
-- ==
-- input { [1.0f32, 0.5f32] [1,2,3] }
-- output { [0.0f32, 1.0471976f32] [2,3,4] 12 [3,5,7] [5, 6, 7] 9 }
def inc x = x + 1i32
def twice (f: i32 -> i32) (x: i32) = f (f x)
def apply_all f xs = map f xs
def add3 = map (+3i32)
def compose f g x = g (f x)
def acos_all = map f32.acos
entry main (fs: []f32) (xs: []i32) =
  let g = twice inc
  in ( acos_all fs, map inc xs, i32.sum (apply_all (twice inc) xs)
     , map (compose inc (\y -> y * 2 - 1)) xs, add3 (map g xs) |> map (\x -> x - 1)
     , inc 8)

-- User-defined operators defined without parameter types, and a higher-order polymorphic function applying a
-- backquoted function parameter to a qualified operator section.
-- ==
-- input { [1,2,3] }
-- output { [3,5,7] 12 [2.5f32, 4.5f32] }
def (a: i32) +^ (b: i32) = a + b + 1
def (<+>) x y = x + y
def apply_op 't (op: t -> t -> t) (x: t) (y: t): t = x `op` y
entry main (xs: []i32) =
  (map2 (+^) xs (map (+1) xs |> map (\x -> x - 1)), reduce (<+>) 0 xs |> (\s -> s * 2), map (\x -> apply_op (f32.+) (f32.i32 x) 1.5) [1, 3])

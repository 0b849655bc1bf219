-- Functions returning A ++ A under #[noinline], also called inside a map: sizes named only in types.
-- ==
-- input { [1,2] }
-- output { [1,2,1,2] [1,2,1,2,1,2,1,2] [[1,2,1,2],[1,2,1,2]] }
#[noinline]
def dup [n] (a: [n]i32): [n+n]i32 = a ++ a
#[noinline]
def dup2 (a: []i32) = let b = a ++ a in b ++ b
entry main (xs: []i32) = (dup xs, dup2 xs, map (\_ -> dup xs) xs)

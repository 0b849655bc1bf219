-- Anonymous parameter sizes ([]) unify by use, as in Futhark: checked at run time.
-- ==
-- input { [1,2,3] [4,5,6] }
-- output { [true, true, true] 32 [5, 7, 9] }
-- input { [1,2] [4,5,6] }
-- error: .
def dot [n] (a: [n]i32) (b: [n]i32): i32 = i32.sum (map2 (*) a b)
def lt (x: []i32) (y: []i32) = map2 (<) x y
entry main (x: []i32) (y: []i32) = (lt x y, dot x y, map2 (+) x y)

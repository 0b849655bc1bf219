-- The unit type and value (), and empty array literals with a type.
-- ==
-- input { 3i32 }
-- output { 4i32 empty([0]i32) empty([0][3]f32) 0i64 [1i32, 2i32] }
-- input { -1i32 }
-- output { 0i32 empty([0]i32) empty([0][3]f32) 0i64 [1i32, 2i32] }

def one (): i32 = 1
def ignore (_: ()) (x: i32): i32 = x

entry main (x: i32) =
  let () = ()
  let u: () = ()
  let y = ignore u (x + one ())
  let e = [] : [0]f32
  in (y, ([] : []i32), ([] : [0][3]f32), length e, ([] : []i32) ++ [1, 2])

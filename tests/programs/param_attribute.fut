-- #[param(NAME)] e: a tuning parameter NAME that, when set (--param NAME=V or a tuning file), replaces the
-- i64 e at run time; unset (and under the interpreter) the value is e's. Other attributes are ignored.
-- ==
-- input { [1i32, 2i32, 3i32, 4i32, 5i32] }
-- output { [3i32, 4i32, 5i32] 12i32 }
-- input { [1i32] }
-- output { [1i32] 1i32 }
-- input { empty([0]i32) }
-- output { empty([0]i32) 0i32 }

entry main [n] (xs: [n]i32): ([]i32, i32) =
  let k = #[param(chunk)] (n / 2)
  let step = #[param(unused_default)] #[unsafe] 1
  in (xs[k:], i32.sum xs[k:n:step])
